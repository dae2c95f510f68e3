"""pairs.py — what oom_pairs.sh, step_pairs.sh, sim_reports.sh and sim_largest.sh share: a
run's siblings (the same program and arguments but the micro-batch, its accumulation and the
steps), what `vramtrace predict --from` says of one for a sibling's micro-batch and
accumulation on the 12 GiB card, and a largest micro-batch held to the sibling that ran it."""
import json
import os
import re
import subprocess


def argv_of(f):
    """the program and its arguments without the micro-batch, its accumulation and the steps
    (Lightning's --accumulate_grad_batches and --max_steps too)"""
    c = re.sub(r"\s*\(.*\)\s*$", "", f.get("command", ""))
    c = re.sub(r"--(batch-size|grad-accum|steps|accumulate_grad_batches|max_steps)[ =]\d+", "", c)
    return " ".join(c.split())


def predict(trace, B, A):
    """predict --from trace at B, A: (its JSON, None) or (None, why it failed)"""
    cmd = [os.environ["VT"], "predict", "--from", trace, "--batch-size", str(B), "--grad-accum",
           str(A), "--card", "12GiB", "--json"]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode:
        return None, out.stderr.strip()
    return json.loads(out.stdout), None


def off(p, f):
    """how far prediction p's tensors are from sibling f's run: (under, over), against the tensors
    it requested at their peak (requested_bytes_peak: what the "= tensors" row predicts) and the
    allocator's block-level peak (max_memory_allocated: those tensors rounded into PyTorch's
    blocks, 190-340 MiB more on the simulated Llama 400M runs). A prediction is under where below
    the first, over where above the second."""
    t = p["tensor_bytes"]
    return t / f["requested_bytes_peak"] - 1, t / f["max_memory_allocated"] - 1


def largest_held(D, f, pr, siblings):
    """the problems with the largest micro-batch f's report predicts to fit (pr, its JSON
    prediction), held to the sibling that ran it (f itself when it is its own largest; the traces
    in D): its tensors at most 5 % under those the sibling requested and 5 % over its allocator's
    block-level peak (off), and it fit"""
    bad = []
    # (the largest with the run's own cache share where the one that counts the room for
    # fragmentation is below it: "N to M", the growth of the tensors held at M)
    top = pr.get("largest_batch_size_own_cache") or pr.get("largest_batch_size")
    sib = [g for g in siblings if g["batch_size"] == top]
    for g in sib:
        p, why = predict(os.path.join(D, f["trace"]), g["batch_size"], 1)
        lo, hi = off(p, g) if p else (None, None)
        if lo is None or lo < -0.05 or hi > 0.05 or g["oom"]:
            bad.append("%s: B=%d predicted %s, %s measured %d (%s)" %
                       (f["trace"], g["batch_size"], p and p["tensor_bytes"], g["trace"],
                        g["max_memory_allocated"], why))
    if not sib and siblings:
        bad.append("%s: no sibling at its largest batch %s" % (f["trace"], top))
    return bad


# predictions known to miss and not fixed yet (printed, not failed; each says why). Empty: the
# last one (Llama 160M cut at 17 % of its first forward, -6.5 % off its B=4 sibling) is -3.0 %
# today, within the bounds, and an entry that no longer misses would hide its return
KNOWN = set()


def finish(bad, n, least):
    """the verdict: the problems found, or how many pairs were checked (at least least)"""
    if n < least:
        bad.append("only %d pairs" % n)
    for b in [b for b in bad if b in KNOWN]:
        print("known prediction gap: " + b)
        bad.remove(b)
    print("\n".join(bad) if bad else "ok: %d pairs" % n)
    raise SystemExit(1 if bad else 0)
