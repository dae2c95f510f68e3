#!/bin/sh
# es_population.sh — evolution strategies on the device: tests/python/es_population.py (SIMULATED,
# OpenAI ES's shape) keeps its weights in one flat vector applied by its own function (no
# nn.Module), and each generation draws population_size/2 x num_params floats of noise on the
# device (torch.randn(half, n, device="cuda"), half = a.population_size // 2). Out of memory
# drawing generation 0's noise, the run had been told "the tensors of one micro-batch ... too
# large" with 0 MiB of them live, "recommended: micro-batch 64 -> 32 ... fits", "largest 38" and
# "needs ~4.59 GiB", though every --batch_size runs out of memory at the same request. Now, against
# the program's own facts: the cause is the program's own request, no advice of the micro-batch,
# "at least" no more than the same configuration measures on a larger card, and the flags the
# failing line reads named with their values (--population_size through half, --hidden through n).
# Its run that fits, whose forwards no module's frame shows, says no sentence that presumes none
# ran, nor that no update did.
set -u
. "$ROOT/tests/sim_env.sh"
P="$ROOT/tests/python/es_population.py"
run() { # NAME CARD ARGS...: run the program under vramtrace, the report's text and JSON
    n=$1 card=$2
    shift 2
    timeout 300 "$VT" run -q --card "$card" -o "$n.vt" -- python3 "$P" "$@" </dev/null >"$n.out" 2>&1
    report_both "$n"
}
run oom 3GiB --population_size 1024
run small 3GiB --population_size 1024 --batch_size 16
run big 8GiB --population_size 1024
python3 - oom.json oom.out small.out big.json big.out >check.out 2>&1 <<'PY' || fail "$(cat check.out)"
import json, sys
def truth(o):
    return next(json.loads(l.split(" ", 1)[1]) for l in open(o) if l.startswith("VRAMTRACE_TORCH_STATS "))
o, ot, st, b, bt = json.load(open(sys.argv[1])), truth(sys.argv[2]), truth(sys.argv[3]), \
    json.load(open(sys.argv[4])), truth(sys.argv[5])
# (the case: out of memory drawing the noise, at a quarter of the batch too; the larger card runs it)
assert ot["oom"] and ot["oom_phase"] == "noise" and st["oom"] and st["oom_phase"] == "noise", (ot, st)
assert not bt["oom"] and bt["updates"] == 2, bt
bad = []
oom = o["oom"]
if oom["requested_bytes"] < ot["noise_bytes"]:
    bad.append("requested %d, below the noise's %d" % (oom["requested_bytes"], ot["noise_bytes"]))
if oom["cause"] != "own_request_too_large":
    bad.append("OOM cause %s (%s)" % (oom["cause"], oom["evidence"]))
if o["advice"] or o["prediction"]["largest_batch_size"] is not None or "advice_note" not in o:
    bad.append("advice of the micro-batch after an OOM drawing the noise: %s, largest %s"
               % ([a["change"] for a in o["advice"]], o["prediction"]["largest_batch_size"]))
need = b["peak"]["process_bytes"]
if o["prediction"]["current_peak_bytes"] > need:
    bad.append("'at least' %d; the same configuration on a larger card peaks at %d"
               % (o["prediction"]["current_peak_bytes"], need))
for want in ("--population_size (%d, on the command line; through half" % ot["population_size"],
             "--hidden (%d, the script's default; through n" % ot["hidden"],
             "--population_size {B=%d}" % ot["population_size"]):
    if want not in o.get("advice_note", ""):
        bad.append("advice note without %r: %s" % (want, o.get("advice_note")))
for flag in ("--batch_size", "--gpu"):  # (device= in the call is a keyword's name)
    if flag in o.get("advice_note", ""):
        bad.append("advice note names %s, which the failing line does not read" % flag)
print("\n".join(bad))
raise SystemExit(1 if bad else 0)
PY
# drawn through three names (dims = list(shape), shape = (half, n), half = a.population_size //
# 2): no flag is named,
# and what the line does read is not claimed
run shape 3GiB --population_size 1024 --draw shape
python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); n = j.get("advice_note", ""); sys.exit(not (j["oom"]["cause"] == "own_request_too_large" and not j["advice"] and "--population_size (" not in n and "no integer flag of the recorded script is read on that line, nor through" in n))' \
    shape.json || fail "shape: $(grep '^advice' shape.txt)"
grep -q "during init" oom.txt && fail "the OOM is 'during init': $(grep '^OOM' oom.txt)"
grep -q "^OOM: .* before any forward the trace shows" oom.txt || fail "$(grep '^OOM' oom.txt)"
"$VT" predict --from oom.vt >pred.out 2>&1 && fail "predict --from the OOM run predicted: $(head -n 3 pred.out)"
grep -q "at its own line's request before any forward" pred.out || fail "predict --from: $(cat pred.out)"
"$VT" export --html oom.html oom.vt >/dev/null 2>&1 || fail "export --html failed"
grep -q "micro-batch 64 →" oom.html && fail "the HTML advises the micro-batch"
grep -q "own request, before any forward" oom.html || fail "the HTML's OOM card: $(grep -o 'out of memory</h3>[^<]*<[^<]*' oom.html)"
# the run that fits: 2 generations of functional forwards under no_grad and 2 updates by the
# program's own Adam, no module's forward and no backward. It had been "the trace shows no forward
# pass (every allocation came before one)", "0 optimizer steps", "no .grad alive at the tensors'
# peak: it came before the run's first backward", "no optimizer state yet: the run stopped before
# its first optimizer step", and "Peak by phase" with init alone, unsaid; cuBLAS's workspace was
# "parameters"
run fit 3GiB --population_size 256
python3 - fit.json fit.out >checkfit.out 2>&1 <<'PY' || fail "fit: $(cat checkfit.out)"
import json, sys
j = json.load(open(sys.argv[1]))
t = next(json.loads(l.split(" ", 1)[1]) for l in open(sys.argv[2]) if l.startswith("VRAMTRACE_TORCH_STATS "))
assert not t["oom"] and t["updates"] == 2 and t["forwards"] == 2 * t["population_size"], t
bad = []
if j.get("iterations_known", True) is not False:
    bad.append("JSON iterations %s known, where %d updates ran by the program's own code" % (j["iterations"], t["updates"]))
if j["advice"] or "advice_note" not in j:
    bad.append("advice %s" % [a["change"] for a in j["advice"]])
# cuBLAS's workspace, made at the first matmul of a forward no module's frame shows, is no weight
# (it had been the only "parameters" of a program with no nn.Parameter)
for site in j["top_sites"]:
    if "BlasHandle" in site["native"] and site["category"] != "workspaces":
        bad.append("cuBLAS's workspace (%s, %d B) is %s" % (site["site"], site["bytes"], site["category"]))
print("\n".join(bad))
raise SystemExit(1 if bad else 0)
PY
for s in "every allocation came before one" "0 optimizer steps," "before the run's first backward" \
    "stopped before its first optimizer step"; do
    grep -qF "$s" fit.txt && fail "fit: \"$s\": $(grep -F "$s" fit.txt | head -n 1)"
done
grep -q "^  events .* 0 optimizer steps seen (.*whether one ran is not known)" fit.txt ||
    fail "fit: $(grep '^  events' fit.txt)"
grep -q "^  (init holds every allocation" fit.txt || fail "fit: $(sed -n '/^Peak by phase/,/^$/p' fit.txt)"
grep -q "^advice: none (the trace shows no forward pass of a module (.*policy(theta, x)" fit.txt ||
    fail "fit: $(grep '^advice' fit.txt)"
# the inputs, 90 % of them its noise: not said to be batches alone (the legend had been "batches
# put on the device (token ids, images, targets)")
"$VT" export --html fit.html fit.vt >/dev/null 2>&1 || fail "fit: export --html failed"
grep -q "sub2>batches put on the device (token ids, images, targets)<" fit.html &&
    fail "fit: the HTML's inputs are batches alone"
grep -q "sub2>batches and other tensors the program puts on the device itself" fit.html ||
    fail "fit: $(grep -o 'data-cat="inputs".\{0,300\}' fit.html | head -n 1)"
echo "es_population: ok (an OOM drawing a population's noise: the program's own request, no micro-batch advice, the flags its line reads)"
