#!/usr/bin/env python3
"""bench.py — `make bench`: what capture costs, what a trace weighs, how fast the analyzer reads.

Prints one table on stdout and writes the same as JSON to $BUILD/bench.json. Ratios are
measured within one run (these machines are noisy): each figure is the median of several runs.
Not part of `make test`; correctness lives in the tests.
"""
import json
import os
import re
import resource
import shutil
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
QUICK = os.environ.get("BENCH_QUICK") == "1"
RUNS = 3 if QUICK else 5
PAIRS = 200_000 if QUICK else 1_000_000

TARGETS = {
    "no_stacks_ns": 150.0,
    "native_python_ns": 1000.0,
    "bytes_per_event": 32.0,
    "analyzer_events_per_s": 10e6,
    "analyzer_rss_mib_50m": 100.0,
}

results = {"runs": RUNS, "pairs": PAIRS, "targets": TARGETS}
rows = []


def row(section, what, value, target=None, ok=None):
    rows.append((section, what, value, target or "", "" if ok is None else ("met" if ok else "NOT met")))


def env_with(**kw):
    e = dict(os.environ)
    e.pop("LD_PRELOAD", None)
    e["LD_LIBRARY_PATH"] = FAKE + (":" + e["LD_LIBRARY_PATH"] if e.get("LD_LIBRARY_PATH") else "")
    e.setdefault("FAKECUDA_MEM", "64G")
    e.update({k: str(v) for k, v in kw.items()})
    return e


def run_child(cmd, env, cwd):
    """Runs cmd; returns (stdout, seconds, peak RSS of the child in KiB)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.perf_counter()
    p = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    dt = time.perf_counter() - t0
    if p.returncode not in (0,):
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}: {p.stderr[-400:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return p.stdout, dt, max(after, before)


def rss_of(cmd, env, cwd):
    """Peak RSS (KiB) of one command, via /usr/bin/time -v when present."""
    if not os.path.exists("/usr/bin/time"):
        return None
    p = subprocess.run(["/usr/bin/time", "-v"] + cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr)
    return int(m.group(1)) if m else None


def ns_per_event(threads=1, depth=0, stacks=None, tmp=None):
    """Median ns/event of bench_alloc, without (stacks=None) or with the preload."""
    vals = []
    for i in range(RUNS):
        env = env_with()
        if stacks is not None:
            out = os.path.join(tmp, f"b-{stacks}-{threads}-{depth}-{i}.vt")
            env.update(LD_PRELOAD=PRELOAD, VRAMTRACE_OUTPUT=out, VRAMTRACE_STACKS=stacks)
        stdout, _, _ = run_child([os.path.join(PROG, "bench_alloc"), str(PAIRS // threads), str(threads), str(depth)], env, tmp)
        vals.append(float(stdout.split()[2]))
    return statistics.median(vals)


def capture_section(tmp):
    if not os.path.exists(os.path.join(PROG, "bench_alloc")):
        row("capture", "bench_alloc missing", "skipped")
        return
    base = ns_per_event(tmp=tmp)
    none = ns_per_event(stacks="none", tmp=tmp)
    native = ns_per_event(stacks="native", depth=24, tmp=tmp)
    base_deep = ns_per_event(depth=24, tmp=tmp)
    results["capture"] = {"baseline_ns": base, "stacks_none_ns": none, "native_ns": native,
                          "added_none_ns": none - base, "added_native_ns": native - base_deep}
    row("capture", "baseline (fake runtime, no preload)", f"{base:.0f} ns/event")
    row("capture", "added, --stacks none", f"{none - base:.0f} ns/event", "<= 150 ns", none - base <= 150)
    row("capture", "added, native stacks (~30 frames)", f"{native - base_deep:.0f} ns/event")
    # 8 threads at once
    base8 = ns_per_event(threads=8, tmp=tmp)
    none8 = ns_per_event(threads=8, stacks="none", tmp=tmp)
    results["threads"] = {"baseline8_ns": base8, "stacks_none8_ns": none8,
                          "ratio_to_1_thread": (none8 - base8) / max(none - base, 1e-9)}
    row("threads", "8 threads, added per event (wall)", f"{none8 - base8:.0f} ns/event")
    row("threads", "ratio to 1 thread", f"{(none8 - base8) / max(none - base, 1e-9):.2f}x")
    # trace size: the slope between two runs of different lengths, so fixed records (header,
    # PROCESS, THREAD, DEVICE, trailer) do not count as per-event bytes
    sizes = []
    for pairs in (PAIRS // 4, PAIRS // 2):
        out = os.path.join(tmp, f"size-{pairs}.vt")
        env = env_with(LD_PRELOAD=PRELOAD, VRAMTRACE_OUTPUT=out, VRAMTRACE_STACKS="none")
        run_child([os.path.join(PROG, "bench_alloc"), str(pairs), "1", "0"], env, tmp)
        sizes.append((2 * pairs, os.path.getsize(out)))
    per_event = (sizes[1][1] - sizes[0][1]) / (sizes[1][0] - sizes[0][0])
    results["trace"] = {"bytes_per_event": per_event, "file_bytes_stacks_none": sizes[1][1],
                        "events": sizes[1][0]}
    row("trace", "bytes per alloc/free event (slope of file size)", f"{per_event:.1f} B", "<= 32 B", per_event <= 32)
    fn = os.path.join(tmp, "b-native-1-24-0.vt")
    if os.path.exists(fn):
        results["trace"]["native_file_bytes"] = os.path.getsize(fn)
        row("trace", f"file, {2 * PAIRS} events, native stacks", f"{os.path.getsize(fn) / 2**20:.1f} MiB")


def python_section(tmp):
    py = sys.executable
    script = os.path.join(ROOT, "scripts", "bench_pystack.py")
    n = PAIRS // 5
    vals = {"base": [], "traced": []}
    try:
        for i in range(RUNS):
            for mode in ("base", "traced"):
                env = env_with()
                if mode == "traced":
                    env.update(LD_PRELOAD=PRELOAD, VRAMTRACE_OUTPUT=os.path.join(tmp, f"py-{i}.vt"),
                               VRAMTRACE_STACKS="all")
                out, _, _ = run_child([py, script, str(n), "30"], env, tmp)
                vals[mode].append(float(out.split()[0]))
    except RuntimeError as e:
        row("capture", "python stacks", f"failed: {e}"[:80])
        return
    b, t = statistics.median(vals["base"]), statistics.median(vals["traced"])
    results["capture"]["python_native_ns"] = t - b
    row("capture", "added, native + Python stacks (30 Python frames)", f"{t - b:.0f} ns/event", "<= 1000 ns", t - b <= 1000)


def analyzer_section(tmp):
    gen = os.path.join(PROG, "vtgen")
    if not os.path.exists(gen):
        row("analyzer", "vtgen missing", "skipped")
        return
    sizes = [1_000_000, 10_000_000] + ([] if QUICK else [50_000_000])
    results["analyzer"] = []
    for n in sizes:
        f = os.path.join(tmp, f"gen-{n}.vt")
        subprocess.run([gen, "--events", str(n), "--live", "100000", "--stacks", "5000", "-o", f], check=True,
                       stdout=subprocess.DEVNULL)
        times = []
        for _ in range(3 if n <= 10_000_000 else 1):
            t0 = time.perf_counter()
            subprocess.run([VT, "report", "--json", f], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            times.append(time.perf_counter() - t0)
        rss = rss_of([VT, "report", "--json", f], env_with(), tmp)
        dt = statistics.median(times)
        rec = {"events": n, "seconds": dt, "events_per_s": n / dt, "rss_kib": rss, "file_bytes": os.path.getsize(f)}
        results["analyzer"].append(rec)
        ok = n / dt >= TARGETS["analyzer_events_per_s"]
        row("analyzer", f"report, {n // 1_000_000}M events", f"{n / dt / 1e6:.1f} M events/s, RSS {rss / 1024 if rss else 0:.0f} MiB",
            ">= 10 M/s" + (", <= 100 MiB" if n == 50_000_000 else ""), ok and (n != 50_000_000 or (rss or 0) <= 100 * 1024))
        if n == 10_000_000:
            views_times(f)
        os.unlink(f)


def views_times(f):
    """The other outputs on the same 10M-event trace, and the exports on a 10M-event tensor-mode
    trace (a category timeline): seconds each (results["views"]); the HTML page's size and the
    time headless Chromium takes to load and draw it, less an empty page's (when installed)."""
    results["views"] = {}
    tmp = os.path.dirname(f)
    ft = os.path.join(tmp, "gen-tensor-10M.vt")
    subprocess.run([os.path.join(BUILD, "tests", "prog", "vtgen"), "--events", "10000000", "--live", "100000",
                    "--stacks", "5000", "--tensor", "--python", "-o", ft], check=True, stdout=subprocess.DEVNULL)
    out = lambda ext: os.path.join(tmp, "views-out." + ext)
    cases = (("flame", [VT, "flame", f]), ("flame --at all", [VT, "flame", "--at", "all", f]),
             ("diff", [VT, "diff", "--json", f, f]),
             ("export --perfetto (tensor)", [VT, "export", "--perfetto", out("json"), ft]),
             ("export --memory-viz (tensor)", [VT, "export", "--memory-viz", out("pickle"), ft]),
             ("export --html (tensor)", [VT, "export", "--html", out("html"), ft]))
    for name, cmd in cases:
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        dt = time.perf_counter() - t0
        results["views"][name] = dt
        row("views", f"{name}, 10M events", f"{dt:.2f} s")
    size = os.path.getsize(out("html"))
    results["views"]["html_bytes"] = size
    chrome = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chrome:
        row("views", "HTML page in Chromium", f"{size / 1024:.0f} KiB; not timed (no chromium)")
    else:
        empty = out("empty.html")
        open(empty, "w").write("<!doctype html><body></body>")
        def load(page):
            t0 = time.perf_counter()
            subprocess.run([chrome, "--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=" + tmp + "/chrome",
                            "--window-size=1400,2200", "--dump-dom", "file://" + page], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            return time.perf_counter() - t0
        load(empty)  # the profile's first start
        dt = statistics.median([load(out("html")) - load(empty) for _ in range(3)])
        results["views"]["html_open_s"] = dt
        row("views", "HTML page (10M tensor events) opened and drawn by headless Chromium",
            f"{size / 1024:.0f} KiB, {dt:.2f} s more than an empty page", "< 2 s", dt < 2)
    for ext in ("json", "pickle", "html", "empty.html"):
        if os.path.exists(out(ext)):
            os.unlink(out(ext))
    os.unlink(ft)


def sim_section(tmp):
    sim = os.path.join(ROOT, "examples", "sim", "sim_train.py")
    if not os.path.exists(sim):
        row("tensor mode", "examples/sim missing", "skipped")
        return
    out = os.path.join(tmp, "sim.vt")
    env = env_with(PYTORCH_CUDA_ALLOC_CONF="backend:cudaMallocAsync", FAKECUDA_MEM="80G",
                   SIMTORCH_LIB=os.path.join(BUILD, "examples", "libsimtorch.so"))
    iters = 5
    try:
        t0 = time.perf_counter()
        subprocess.run([VT, "run", "-o", out, "--quiet", "--", sys.executable, sim, "--max_iters=%d" % iters,
                        "--batch_size=4", "--n_layer=12"], env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        traced = time.perf_counter() - t0
        t0 = time.perf_counter()
        subprocess.run([sys.executable, sim, "--max_iters=%d" % iters, "--batch_size=4", "--n_layer=12"], env=env,
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        base = time.perf_counter() - t0
    except subprocess.CalledProcessError as e:
        row("tensor mode", "simulated run", f"failed: {e.stderr[-60:] if e.stderr else e}")
        return
    d = subprocess.run([VT, "dump", "--no-resolve", out], stdout=subprocess.PIPE, text=True)
    events = sum(1 for line in d.stdout.splitlines() if '"type":"alloc"' in line or '"type":"free"' in line)
    results["tensor_mode"] = {"iterations": iters, "events": events, "events_per_step": events / iters,
                              "capture_s_per_step": (traced - base) / iters}
    row("tensor mode", "events per simulated step (GPT-2 124M, B=4)", f"{events / iters:.0f}")
    row("tensor mode", "capture time added per step", f"{(traced - base) / iters * 1e3:.1f} ms")


def main():
    with tempfile.TemporaryDirectory(prefix="vt-bench.") as tmp:
        for section in (capture_section, python_section, analyzer_section, sim_section):
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
    print(f"\nJSON: {os.path.join(BUILD, 'bench.json')}")


if __name__ == "__main__":
    main()
