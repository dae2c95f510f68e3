#!/usr/bin/env python3
"""bench_long.py — `make bench`'s long-run figures (after bench.py): capture cost in the chunked
layout (plain, --compress, --max-size) against no tracer, bytes per event with and without
compression, how fast report reads a compressed trace against the plain one of the same run,
and a simulated 200M-event run under --max-size 512MiB (tests/prog/long_prog: the fake
allocator, a backward thread, a slow leak, an evaluation at the end that the card refuses):
its file size, what was kept and lost, and report's time and memory on it.

Prints a table and writes $BUILD/bench_long.json. Medians of interleaved runs (a noisy shared
machine). BENCH_QUICK=1: smaller; BENCH_LONG_EVENTS=N: the long run's events (default 200M).
Not part of `make test`: the tests hold the behaviour (long_bounded.sh, long_kill.sh).
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
VT = os.path.join(BUILD, "vramtrace")
PRELOAD = os.path.join(BUILD, "libvramtrace.so")
FAKE = os.path.join(BUILD, "fakecuda")
PROG = os.path.join(BUILD, "tests", "prog")
C10 = os.path.join(FAKE, "c10", "cda", "libc10_cuda.so")
QUICK = os.environ.get("BENCH_QUICK") == "1"
ROUNDS = 3
PAIRS = 200_000 if QUICK else 1_000_000
LONG = int(os.environ.get("BENCH_LONG_EVENTS", 20_000_000 if QUICK else 200_000_000))
ENV = dict(os.environ, LD_LIBRARY_PATH=FAKE)


def run(cmd, env=None, out=subprocess.PIPE):
    """(wall seconds, max RSS KiB, stdout) of cmd"""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, env=env or ENV, stdout=out, stderr=subprocess.PIPE, text=True)
    stdout = p.stdout.read() if out == subprocess.PIPE else ""
    p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    return time.monotonic() - t0, ru.ru_maxrss, stdout, os.waitstatus_to_exitcode(status)


def capture_ns(tmp):
    """ns per event added by the preload (--stacks none) per layout, against no tracer"""
    modes = {"none": None, "plain": {}, "compress": {"VRAMTRACE_COMPRESS": "1"},
             "max_size": {"VRAMTRACE_MAX_SIZE": str(512 << 20)}}
    got = {m: [] for m in modes}
    for r in range(ROUNDS):
        for m, extra in modes.items():
            env = dict(ENV)
            if extra is not None:
                env.update(extra, LD_PRELOAD=PRELOAD, VRAMTRACE_STACKS="none",
                           VRAMTRACE_OUTPUT=os.path.join(tmp, "cap-%s-%d.vt" % (m, r)))
            _, _, out, _ = run([os.path.join(PROG, "bench_alloc"), str(PAIRS), "1"], env)
            got[m].append(float(out.split()[2]))
    base = statistics.median(got["none"])
    return {m: round(statistics.median(v) - base, 1) for m, v in got.items() if m != "none"}, base


def trace(tmp, name, opts, events, extra=()):
    path = os.path.join(tmp, name + ".vt")
    if os.path.exists(path):
        os.unlink(path)
    wall, _, out, rc = run([VT, "run", "-q", "--card", "4GiB"] + opts + ["-o", path, "--",
                           os.path.join(PROG, "long_prog"), C10, str(events)] + list(extra))
    return path, wall, json.loads(out.splitlines()[0])


def report(path):
    wall, rss, out, rc = run([VT, "report", "--json", path])
    return wall, rss, json.loads(out)


def main():
    res = {"quick": QUICK}
    rows = []
    with tempfile.TemporaryDirectory(prefix="vt-bench-long.") as tmp:
        cap, base = capture_ns(tmp)
        res["capture_ns_per_event"] = cap
        res["capture_baseline_ns"] = base
        rows.append(("capture, added per event (--stacks none; no tracer %.0f ns)" % base,
                     "plain %.0f, --compress %.0f, --max-size 512MiB %.0f ns" % (
                         cap["plain"], cap["compress"], cap["max_size"])))
        n = 2_000_000
        plain, _, _ = trace(tmp, "plain", [], n, ["50"])
        comp, _, _ = trace(tmp, "comp", ["--compress"], n, ["50"])
        ps, cs = os.path.getsize(plain), os.path.getsize(comp)
        reads = {"plain": [], "compressed": []}
        for _ in range(ROUNDS):
            for k, p in (("plain", plain), ("compressed", comp)):
                reads[k].append(report(p)[0])
        rp, rc_ = statistics.median(reads["plain"]), statistics.median(reads["compressed"])
        events = report(plain)[2]["events"]
        res["bytes_per_event"] = {"plain": round(ps / events, 2), "compressed": round(cs / events, 2),
                                  "ratio": round(ps / cs, 2)}
        res["report_events_per_s"] = {"plain": round(events / rp), "compressed": round(events / rc_)}
        rows.append(("trace bytes per event (2M events, native stacks)",
                     "plain %.2f, compressed %.2f (%.1fx smaller)" % (ps / events, cs / events, ps / cs)))
        rows.append(("report --json, the same 2M events", "plain %.2f s (%.1f M/s), compressed "
                     "%.2f s (%.1f M/s)" % (rp, events / rp / 1e6, rc_, events / rc_ / 1e6)))
        # the long run: a slow leak (1 MiB every 2000 steps), 5 us of "computation" per step
        path, wall, truth = trace(tmp, "long", ["--max-size", "512MiB"], LONG,
                                  ["2000", str(8 << 30), "5"])
        size = os.path.getsize(path)
        rwall, rss, rep = report(path)
        b, g = rep["bounded"], rep["growth"]
        res["long_run"] = {
            "events": LONG, "steps": truth["steps"], "run_seconds": round(wall, 1),
            "file_bytes": size, "within_bound": size <= (512 << 20),
            "run_events": b["run_events"], "dropped_events": b["dropped_events"],
            "lost_events": b["lost_events"], "stored_bytes": b["stored_bytes"],
            "raw_bytes": b["raw_bytes"], "report_seconds": round(rwall, 2),
            "report_max_rss_mib": round(rss / 1024, 1), "steps_reported": g["steps"],
            "growth_bytes_per_step": g["bytes_per_step"],
            "leak_bytes_per_step": truth["leak_bytes_per_step"],
            "oom_cause": rep["oom"] and rep["oom"].get("cause"),
        }
        L = res["long_run"]
        rows.append(("%dM-event run under --max-size 512MiB" % (LONG // 1_000_000),
                     "file %d B (%s the 512 MiB bound), %.0f s; %d of %d events dropped, %d lost" % (
                         size, "within" if L["within_bound"] else "OVER", wall,
                         L["dropped_events"], L["run_events"], L["lost_events"])))
        rows.append(("report on it", "%.1f s, %.0f MiB max RSS; %d of %d steps summarized; "
                     "growth %.0f B/step (leak %.0f); OOM at the end: %s" % (
                         rwall, rss / 1024, g["steps"], truth["steps"], g["bytes_per_step"],
                         truth["leak_bytes_per_step"], L["oom_cause"])))
    w = max(len(r[0]) for r in rows)
    for k, v in rows:
        print("%-*s  %s" % (w, k, v))
    with open(os.path.join(BUILD, "bench_long.json"), "w") as f:
        json.dump(res, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
