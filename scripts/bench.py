#!/usr/bin/env python3
"""bench.py — `make bench`: what capture costs, what a trace weighs, how fast the analyzer reads.

Prints one table on stdout and writes the same as JSON to $BUILD/bench.json. This machine may be
shared and noisy: every figure is the median of RUNS runs, and runs that are compared are
interleaved (a baseline, then the measured one, in turn), so a slow moment hits both. The analyzer
is timed in CPU seconds (user + sys of the process: what it costs, whatever else runs) and in wall
seconds, and each rate is also given as a share of the floor: the same file read and decoded by the
analyzer's own reader with a bare hash table of live addresses (tests/bench/floor.c).
Not part of `make test`; correctness lives in the tests. BENCH_QUICK=1: fewer runs, 1M / 10M
events; BENCH_RUNS=N: N runs per figure.
"""
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

BUILD = os.path.abspath(os.environ.get("BUILD", "build"))
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VT = os.path.join(BUILD, "vramtrace")
PRELOAD = os.path.join(BUILD, "libvramtrace.so")
FAKE = os.path.join(BUILD, "fakecuda")
PROG = os.path.join(BUILD, "tests", "prog")
FLOOR = os.path.join(BUILD, "tests", "bench", "floor")
SKELETON = os.path.join(BUILD, "tests", "bench", "skeleton")  # the replay's live set alone
CAPTURE_THREADS = os.path.join(BUILD, "tests", "bench", "capture_threads")  # the record path alone
QUICK = os.environ.get("BENCH_QUICK") == "1"
RUNS = int(os.environ.get("BENCH_RUNS", "3" if QUICK else "5"))
PAIRS = 200_000 if QUICK else 1_000_000
SIZES = [1_000_000, 10_000_000] if QUICK else [10_000_000, 50_000_000]
# the generator's modes: PyTorch's caching allocator without its tracker (segments), the
# cudaMallocAsync backend (tensors), and the default: the tracker's tensors inside its segments
MODES = (("segment", []), ("tensor", ["--tensor"]), ("default", ["--allocator"]))

# bytes_per_event: an ALLOC (40 B) and a FREE (24 B) a pair, plus, in the 2.0 block layout, each
# 4 KiB block's 16-byte header and the part of a record left unused at its end (~16 B): 32.25 B
# measured where 1.3's one shared offset gave 32.0 (the price of 8 threads at 1.0x one)
TARGETS = {"no_stacks_ns": 100.0, "native_python_ns": 500.0, "threads_ratio": 1.2,
           "bytes_per_event": 32.5, "tensor_events_per_s": 15e6, "segment_events_per_s": 20e6,
           "floor_share": 0.8, "rss_mib": 100.0, "report_ms": 10.0}

results = {"runs": RUNS, "pairs": PAIRS, "targets": TARGETS}
rows = []


def row(section, what, value, target=None, ok=None):
    rows.append((section, what, value, target or "", "" if ok is None else ("met" if ok else "NOT met")))


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def env_with(**kw):
    e = dict(os.environ)
    e.pop("LD_PRELOAD", None)
    e["LD_LIBRARY_PATH"] = FAKE + (":" + e["LD_LIBRARY_PATH"] if e.get("LD_LIBRARY_PATH") else "")
    e.setdefault("FAKECUDA_MEM", "64G")
    e.update({k: str(v) for k, v in kw.items()})
    return e


LAST_RU = None  # the resource usage of run()'s last process (its page faults: ru_minflt)


def run(cmd, env=None, cwd=None):
    """(stdout, wall s, cpu s = user + sys, peak RSS KiB) of one run of cmd, that process alone."""
    global LAST_RU
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=out, stderr=err)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        LAST_RU = ru
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0), err.seek(0)
        if p.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}: {err.read().decode()[-400:]}")
        return out.read().decode(), wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss


# ---- capture ------------------------------------------------------------------------------

def bench_alloc(pairs, threads, depth, stacks, tmp, tag):
    env = env_with()
    if stacks is not None:
        env.update(LD_PRELOAD=PRELOAD, VRAMTRACE_OUTPUT=os.path.join(tmp, f"cap-{tag}.vt"),
                   VRAMTRACE_STACKS=stacks)
    out, _, _, _ = run([os.path.join(PROG, "bench_alloc"), str(pairs), str(threads), str(depth)], env, tmp)
    for f in os.listdir(tmp):
        if f.startswith(f"cap-{tag}.vt"):
            os.unlink(os.path.join(tmp, f))
    return float(out.split()[2])


def capture_section(tmp):
    """Added ns per event (wall, bench_alloc's own loop), each against its baseline in the same
    round: --stacks none, native (~30 frames), 8 threads at once."""
    if not os.path.exists(os.path.join(PROG, "bench_alloc")):
        row("capture", "bench_alloc missing", "skipped")
        return
    v = {k: [] for k in ("none", "native", "none8")}
    for i in range(RUNS):
        b = bench_alloc(PAIRS, 1, 0, None, tmp, "b")
        v["none"].append(bench_alloc(PAIRS, 1, 0, "none", tmp, "n") - b)
        bd = bench_alloc(PAIRS, 1, 24, None, tmp, "bd")
        v["native"].append(bench_alloc(PAIRS, 1, 24, "native", tmp, "nd") - bd)
        b8 = bench_alloc(PAIRS // 8, 8, 0, None, tmp, "b8")
        v["none8"].append(bench_alloc(PAIRS // 8, 8, 0, "none", tmp, "n8") - b8)
    none, native, none8 = med(v["none"]), med(v["native"]), med(v["none8"])
    fake_ratio = med([a / b for a, b in zip(v["none8"], v["none"]) if b > 0])
    results["capture"] = {"added_none_ns": none, "added_native_ns": native, "added_none_8threads_ns": none8,
                          "fake_runtime_threads_ratio": fake_ratio, "samples": v}
    row("capture", "added, --stacks none (1 thread)", f"{none:.0f} ns/event", "<= 100 ns", none <= 100)
    row("capture", "added, native stacks (~30 frames)", f"{native:.0f} ns/event")
    row("capture", "added, 8 threads at once (wall, per event)", f"{none8:.0f} ns/event")
    row("capture", "  8 / 1 thread through the fake runtime's one mutex (its convoy: see below)",
        f"{fake_ratio:.2f}x")
    threads_section(tmp)
    # trace size: the slope between two runs of different lengths (fixed records do not count)
    sizes = []
    for pairs in (PAIRS // 4, PAIRS // 2):
        out = os.path.join(tmp, f"size-{pairs}.vt")
        env = env_with(LD_PRELOAD=PRELOAD, VRAMTRACE_OUTPUT=out, VRAMTRACE_STACKS="none")
        run([os.path.join(PROG, "bench_alloc"), str(pairs), "1", "0"], env, tmp)
        sizes.append((2 * pairs, os.path.getsize(out)))
        os.unlink(out)
    per_event = (sizes[1][1] - sizes[0][1]) / (sizes[1][0] - sizes[0][0])
    results["trace"] = {"bytes_per_event": per_event}
    row("trace", "bytes per alloc/free event (slope of file size)", f"{per_event:.2f} B",
        f"<= {TARGETS['bytes_per_event']} B", per_event <= TARGETS["bytes_per_event"])


def record_threads(out, events, threads, tmp):
    """capture_threads' output: events records from threads threads into the trace out."""
    env = env_with(VRAMTRACE_OUTPUT=out, VRAMTRACE_STACKS="none")
    return run([CAPTURE_THREADS, str(events), str(threads)], env, tmp)[0]


def remove_trace(out):
    """the trace out and what the writer put beside it (out.*)"""
    d, name = os.path.split(out)
    for f in os.listdir(d):
        if f.startswith(name):
            os.unlink(os.path.join(d, f))


def capture_threads(events, threads, tmp):
    out = os.path.join(tmp, "threads.vt")
    o = record_threads(out, events, threads, tmp)
    remove_trace(out)
    return float(o.split()[3])


def threads_section(tmp):
    """The recording path alone (tests/bench/capture_threads.c: the preload's record calls, no
    CUDA runtime under them) on 1 thread and on 8 at once, in CPU time per event: flat when the
    threads share nothing. bench_alloc's 8-thread figure goes through the fake runtime's global
    mutex, whose convoy under more threads than cores sets it (a build that writes no record
    scores worse there than one that does), so it is shown but not the target."""
    if not os.path.exists(CAPTURE_THREADS):
        row("capture", "tests/bench/capture_threads missing", "skipped")
        return
    one, eight = [], []
    for i in range(RUNS):
        one.append(capture_threads(2 * PAIRS, 1, tmp))
        eight.append(capture_threads(2 * PAIRS, 8, tmp))
    ratio = med([b / a for a, b in zip(one, eight) if a > 0])
    results["capture"].update(record_cpu_ns_1thread=med(one), record_cpu_ns_8threads=med(eight),
                              threads_ratio=ratio, record_samples={"1": one, "8": eight})
    row("capture", "recording path, CPU per event: 1 thread / 8 threads at once",
        f"{med(one):.0f} / {med(eight):.0f} ns")
    row("capture", "8 threads / 1 thread, recording path (CPU per event, per round, median)",
        f"{ratio:.2f}x", "<= 1.2x", ratio <= 1.2)


def blocks_section(tmp):
    """Reading the per-thread blocks of a plain trace (format 2.0, what `run` writes): the
    recording path's own files of 1 and of 8 threads (tests/bench/capture_threads, 2M events,
    --stacks none), read by the floor (tests/bench/floor: the reader and a bare table) and by
    `report --json`; a window of one writer is handed out as it lies, 8 writers' records are
    merged by time. No target: the analyzer's targets are on vtgen's 1.x files above; this says
    what the block layout costs the reader beside them."""
    if not os.path.exists(CAPTURE_THREADS) or not os.path.exists(FLOOR):
        row("blocks", "tests/bench/capture_threads or floor missing", "skipped")
        return
    results["blocks"] = {}
    for threads in (1, 8):
        out = os.path.join(tmp, f"blocks{threads}.vt")
        record_threads(out, 2 * PAIRS, threads, tmp)
        floor, rep = [], []
        for _ in range(RUNS):
            o, _, c, _ = run([FLOOR, out])
            floor.append(c)
            _, _, c, _ = run([VT, "report", "--json", out])
            rep.append(c)
        events = int(o.split()[0])
        results["blocks"][str(threads)] = {"events": events, "floor_cpu": floor, "report_cpu": rep}
        row("blocks", f"read a 2.0 trace of {threads} writer{'s' if threads > 1 else ''} "
            f"({events:,} events): floor / report --json",
            f"{events / med(floor) / 1e6:.1f} / {events / med(rep) / 1e6:.1f} M/s cpu")
        remove_trace(out)


def python_section(tmp):
    """Added ns per event with native + Python stacks (30 Python frames, ctypes), and with the
    Python frames alone, against the untraced script in the same round: 30 distinct functions (no
    code object twice: the walk looks up each, the worst case, which the target is on) and one
    function recursing 30 times (its code object found once per walk: a model's stacks repeat
    nn.Module's call wrappers, 8-31 % of their frames in the committed traces)."""
    script = os.path.join(ROOT, "scripts", "bench_pystack.py")
    n = PAIRS // 5
    v = {"all": [], "python": [], "all_same": []}

    def once(stacks, i, shape="distinct"):
        env = env_with()
        if stacks:
            env.update(LD_PRELOAD=PRELOAD, VRAMTRACE_OUTPUT=os.path.join(tmp, f"py-{i}.vt"), VRAMTRACE_STACKS=stacks)
        out, _, _, _ = run([sys.executable, script, str(n), "30", shape], env, tmp)
        for f in os.listdir(tmp):
            if f.startswith(f"py-{i}.vt"):
                os.unlink(os.path.join(tmp, f))
        return float(out.split()[0])

    try:
        for i in range(RUNS):
            b = once(None, i)
            v["all"].append(once("all", i) - b)
            b = once(None, i)
            v["python"].append(once("python", i) - b)
            b = once(None, i, "same")
            v["all_same"].append(once("all", i, "same") - b)
    except RuntimeError as e:
        row("capture", "python stacks", f"failed: {e}"[:80])
        return
    a, p, same = med(v["all"]), med(v["python"]), med(v["all_same"])
    results.setdefault("capture", {}).update({"added_native_python_ns": a, "added_python_ns": p,
                                              "added_native_python_same_code_ns": same,
                                              "python_samples": v})
    row("capture", "added, native + Python stacks (30 distinct Python functions)", f"{a:.0f} ns/event",
        "<= 500 ns", a <= 500)
    row("capture", "added, Python stacks alone (30 distinct functions)", f"{p:.0f} ns/event ({p / 30:.1f} per frame)")
    row("capture", "added, native + Python stacks (one function recursing 30 times)", f"{same:.0f} ns/event")


# ---- analyzer ---------------------------------------------------------------------------------

def gen(path, n, flags):
    out = subprocess.run([os.path.join(PROG, "vtgen"), "--events", str(n), "--live", "100000", "--stacks", "5000",
                          *flags, "-o", path], check=True, capture_output=True, text=True).stdout
    return int(re.search(r"(\d+) events", out).group(1))


def analyzer_section(tmp):
    """report --json on vtgen traces (100k live, 5000 stacks) in each mode, against the floor on
    the same file, interleaved; CPU rates (user + sys), wall rates, peak RSS."""
    if not os.path.exists(os.path.join(PROG, "vtgen")) or not os.path.exists(FLOOR):
        row("analyzer", "vtgen or tests/bench/floor missing", "skipped")
        return
    results["analyzer"] = []
    for n in SIZES:
        files = {}
        for mode, flags in MODES:
            f = os.path.join(tmp, f"gen-{mode}-{n}.vt")
            files[mode] = (f, gen(f, n, flags))
        s = {m: {"cpu": [], "wall": [], "rss": [], "floor_cpu": [], "floor_wall": [], "skeleton_cpu": []}
             for m in files}
        peaks = {}
        for _ in range(RUNS):
            for mode, (f, _) in files.items():
                out, w, c, _ = run([FLOOR, f])
                s[mode]["floor_cpu"].append(c), s[mode]["floor_wall"].append(w)
                if os.path.exists(SKELETON):
                    sout, _, sc, _ = run([SKELETON, f])
                    s[mode]["skeleton_cpu"].append(sc)
                    peaks[mode] = (out.split()[2], sout.split()[2])
                _, w, c, rss = run([VT, "report", "--json", f])
                s[mode]["cpu"].append(c), s[mode]["wall"].append(w), s[mode]["rss"].append(rss)
        for mode, (f, events) in files.items():
            x = s[mode]
            rate, wrate = events / med(x["cpu"]), events / med(x["wall"])
            floor, share = events / med(x["floor_cpu"]), med(x["floor_cpu"]) / med(x["cpu"])
            rss = max(x["rss"]) / 1024
            rec = {"mode": mode, "events": events, "events_per_s_cpu": rate, "events_per_s_wall": wrate,
                   "floor_events_per_s_cpu": floor, "floor_share": share, "rss_mib_max": rss,
                   "file_bytes": os.path.getsize(f), "samples": x}
            results["analyzer"].append(rec)
            want = TARGETS.get(f"{mode}_events_per_s")
            final = n == SIZES[-1]
            target = (f">= {want / 1e6:.0f} M/s, " if want and final else "") + ">= 80 % floor" + \
                (", <= 100 MiB" if final else "")
            ok = share >= TARGETS["floor_share"] and (not want or not final or rate >= want) and \
                (not final or rss <= TARGETS["rss_mib"])
            row("analyzer", f"report, {n // 1_000_000}M events, {mode}",
                f"{rate / 1e6:.1f} M/s cpu ({wrate / 1e6:.1f} wall), floor {floor / 1e6:.1f}: {100 * share:.0f} %, "
                f"RSS {rss:.0f} MiB", target, ok)
            if x["skeleton_cpu"]:
                sk = events / med(x["skeleton_cpu"])
                rec["skeleton_events_per_s_cpu"] = sk
                same = peaks[mode][0] == peaks[mode][1]  # both replay the same live set
                row("analyzer", f"  the replay's live set alone (tests/bench/skeleton), {mode}",
                    f"{sk / 1e6:.1f} M/s cpu, {100 * med(x['floor_cpu']) / med(x['skeleton_cpu']):.0f} % of the floor's speed",
                    "peak = the floor's", same)
        if n == 10_000_000:
            views_times(files["segment"][0], files["tensor"][0])
        for f, _ in files.values():
            os.unlink(f)


def views_times(fseg, ften):
    """The other outputs: flame / diff on the segment-mode trace, the exports on the tensor-mode one."""
    results["views"] = {}
    out = os.path.join(os.path.dirname(fseg), "views-out")
    cases = (("flame", [VT, "flame", fseg]), ("flame --at all", [VT, "flame", "--at", "all", fseg]),
             ("diff", [VT, "diff", "--json", fseg, fseg]),
             ("export --perfetto (tensor)", [VT, "export", "--perfetto", out + ".json", ften]),
             ("export --memory-viz (tensor)", [VT, "export", "--memory-viz", out + ".pickle", ften]),
             ("export --html (tensor)", [VT, "export", "--html", out + ".html", ften]))
    for name, cmd in cases:
        _, w, c, rss = run(cmd)
        results["views"][name] = {"wall_s": w, "cpu_s": c, "rss_mib": rss / 1024}
        row("views", f"{name}, 10M events", f"{c:.2f} s cpu, {w:.2f} s wall, RSS {rss / 1024:.0f} MiB")
    results["views"]["html_bytes"] = os.path.getsize(out + ".html")
    for ext in ("json", "pickle", "html"):
        if os.path.exists(out + "." + ext):
            os.unlink(out + "." + ext)


def traces_section(tmp):
    """report on each committed real trace: median CPU ms of RUNS + 2 runs each; and the
    analyzer's start-up alone (`vramtrace --version`), which every report pays."""
    base = os.path.join(ROOT, "examples", "traces")
    traces = sorted(os.path.join(sub, f) for sub in ("h100-torch2.11", "h100-torch2.11-beyond")
                    for f in os.listdir(os.path.join(base, sub)) if f.endswith(".vt"))
    ms, start, faults = {}, [], {}
    for _ in range(RUNS + 2):
        start.append(1000 * run([VT, "--version"])[2])
        for t in traces:
            _, _, c, _ = run([VT, "report", os.path.join(base, t)])
            ms.setdefault(t, []).append(1000 * c)
            faults.setdefault(t, []).append(LAST_RU.ru_minflt)
    results["startup_ms_cpu"] = med(start)
    row("real traces", "start-up alone (vramtrace --version)", f"{med(start):.2f} ms cpu")
    per = {t: med(v) for t, v in ms.items()}
    pf = {t: med(v) for t, v in faults.items()}
    results["real_traces"] = {"report_ms_cpu": per, "page_faults": pf}
    worst = max(per, key=per.get)
    row("real traces", f"report, {len(per)} H100 traces (~1 MB), median of the medians",
        f"{med(list(per.values())):.1f} ms cpu")
    # (a page fault costs ~1 us on a plain machine, ~12 us on some VMs: a report's time there)
    row("real traces", "report, page faults (minor) each: median, the most",
        f"{med(list(pf.values())):.0f}, {max(pf.values()):.0f} ({max(pf, key=pf.get)})")
    row("real traces", "report, the slowest one", f"{per[worst]:.1f} ms cpu ({worst})", "<= 10 ms each",
        all(v <= TARGETS["report_ms"] for v in per.values()))


def sim_section(tmp):
    sim = os.path.join(ROOT, "examples", "sim", "sim_train.py")
    if not os.path.exists(sim):
        row("tensor mode", "examples/sim missing", "skipped")
        return
    out = os.path.join(tmp, "sim.vt")
    env = env_with(PYTORCH_CUDA_ALLOC_CONF="backend:cudaMallocAsync", FAKECUDA_MEM="80G",
                   SIMTORCH_LIB=os.path.join(BUILD, "examples", "libsimtorch.so"))
    args = [sim, "--max_iters=5", "--batch_size=4", "--n_layer=12"]
    try:
        _, traced, _, _ = run([VT, "run", "-o", out, "--quiet", "--", sys.executable, *args], env)
        _, base, _, _ = run([sys.executable, *args], env)
    except RuntimeError as e:
        row("tensor mode", "simulated run", f"failed: {str(e)[-60:]}")
        return
    d = subprocess.run([VT, "dump", "--no-resolve", out], stdout=subprocess.PIPE, text=True)
    events = sum(1 for line in d.stdout.splitlines() if '"type":"alloc"' in line or '"type":"free"' in line)
    results["tensor_mode"] = {"iterations": 5, "events": events, "events_per_step": events / 5,
                              "capture_s_per_step": (traced - base) / 5}
    row("tensor mode", "events per simulated step (GPT-2 124M, B=4)", f"{events / 5:.0f}")
    row("tensor mode", "capture time added per step", f"{(traced - base) / 5 * 1e3:.1f} ms")
    # the report of that run, on the machine it ran on: its native frames' names looked up in
    # the modules' files (symbolize.c), the inference over every tensor of its first steps
    cpu = []
    for _ in range(RUNS):
        try:
            _, _, c, _ = run([VT, "report", "--json", out])
            cpu.append(c)
        except RuntimeError:
            break
    if cpu:
        results["tensor_mode"].update(report_ms_cpu=med(cpu) * 1e3, report_samples=cpu)
        row("tensor mode", f"report of the simulated run here ({events} events, names looked up)",
            f"{med(cpu) * 1e3:.1f} ms cpu ({events / med(cpu) / 1e6:.1f} M events/s)")


def script_section(tmp):
    """report of a simulated run whose recorded script is 200 KB: tests/python/inline_eval.py with a
    function never called put in (one .backward(, 3,400 model.eval() lines, then 3,400 `with
    torch.no_grad():` blocks: the shape that made the reading of inline evaluations in the recorded
    script (analyzer/model/facts/evalsrc.c) cubic, ~10 minutes a report)."""
    src = open(os.path.join(ROOT, "tests", "python", "inline_eval.py")).read()
    n = 3400
    dead = ["def never_called():", "    loss.backward()"]
    dead += [f"    m{i}.eval()" for i in range(n)]
    dead += ["    with torch.no_grad():\n        v = f(x)"] * n
    at = src.index('if __name__ == "__main__":')
    script = os.path.join(ROOT, "tests", "python", f".bench_script_{os.getpid()}.py")
    with open(script, "w") as f:  # (beside inline_eval.py: it finds examples/sim from there)
        f.write(src[:at] + "\n".join(dead) + "\n\n\n" + src[at:])
    out = os.path.join(tmp, "script.vt")
    env = env_with(FAKECUDA_MEM="24G", SIMTORCH_LIB=os.path.join(BUILD, "examples", "libsimtorch.so"))
    try:
        run([VT, "run", "-o", out, "--quiet", "--card", "12GiB", "--", sys.executable, script,
             "--batch_size", "4", "--steps", "2"], env)
    finally:
        size = os.path.getsize(script)
        os.unlink(script)
    cpu = [run([VT, "report", out])[2] for _ in range(RUNS)]
    results["recorded_script"] = {"bytes": size, "report_ms_cpu": med(cpu) * 1e3, "report_samples": cpu}
    row("recorded script", f"report of a run whose script is {size // 1000} KB (3,400 no_grad blocks)",
        f"{med(cpu) * 1e3:.1f} ms cpu", "<= 1 s", med(cpu) <= 1.0)


def main():
    with tempfile.TemporaryDirectory(prefix="vt-bench.") as tmp:
        for section in (capture_section, python_section, traces_section, analyzer_section, blocks_section,
                        sim_section, script_section):
            try:
                section(tmp)
            except Exception as e:  # a failed section is reported, the others still run
                row(section.__name__.replace("_section", ""), "error", str(e)[:100])
    w = [max(len(str(r[i])) for r in rows + [("section", "what", "value", "target", "")]) for i in range(5)]
    print(f"{'section':<{w[0]}}  {'what':<{w[1]}}  {'value':<{w[2]}}  {'target':<{w[3]}}  status")
    for r in rows:
        print(f"{r[0]:<{w[0]}}  {r[1]:<{w[1]}}  {r[2]:<{w[2]}}  {r[3]:<{w[3]}}  {r[4]}")
    with open(os.path.join(BUILD, "bench.json"), "w") as f:
        json.dump(results, f, indent=2)
    print(f"\nJSON: {os.path.join(BUILD, 'bench.json')}  ({RUNS} runs per figure, medians; "
          f"load average {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
