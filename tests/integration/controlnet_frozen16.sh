#!/bin/sh
# controlnet_frozen16.sh — a SIMULATED ControlNet training in diffusers' train_controlnet.py shape
# (tests/python/controlnet_frozen16.py): the frozen U-Net, VAE and text encoder cast to fp16 by
# `X.to(accelerator.device, dtype=weight_dtype)` (weight_dtype float16 under --mixed_precision
# fp16), the trained ControlNet (a copy of the U-Net's encoder) fp32 beside them. Out of memory in
# its first forward on 2 GiB (no gradient yet), its weights had been "58.08 M elements at 4 B ...
# (fp32 parameters ...)" where the program holds 84.64 M fp16 and 15.76 M fp32 (100.40 M; P
# 58.08 M in JSON), and in a smaller shape "86.86 M elements at 2 B (16-bit parameters)" (71.69 M);
# at a batch that fits, the gradients' 15.17 M fp32 elements had been read at 2 B, "30.35 M"
# trainable with "16-bit gradients" and AdamW "in the parameters' 16 bits, 4 B per trainable
# parameter" (the program's 8). Now the weights made on the script's cast lines are counted at
# 2 B (JSON inferred.cast16_bytes, its lines named), the others as before: P, the weights' row,
# the trainable count and the state are the program's, predict --from names the cast. With
# --mixed_precision no (weight_dtype stays float32) nothing is read so: its row says what it said.
set -u
. "$ROOT/tests/sim_env.sh"
P="$ROOT/tests/python/controlnet_frozen16.py"
BIG="--block_out_channels 64,128,256,256 --text_width 512 --text_layers 6"
run() { # NAME CARD ARGS...
    n=$1 card=$2
    shift 2
    timeout 300 "$VT" run -q --card "$card" -o $n.vt -- python3 "$P" "$@" </dev/null >$n.out 2>&1
    report_both $n
    "$VT" predict --from $n.vt >$n.predict 2>&1 || fail "$n: predict --from failed"
}
run oom 2GiB --mixed_precision fp16 --train_batch_size 8 --resolution 512 $BIG
run small 2GiB --mixed_precision fp16 --train_batch_size 8 --resolution 512
run fit 2GiB --mixed_precision fp16 --train_batch_size 4 --resolution 512
run no32 4GiB --mixed_precision no --train_batch_size 4 --resolution 512 $BIG
# the configuration out of memory, on a device that holds it: what it needs
timeout 300 "$VT" run -q -o whole.vt -- python3 "$P" --mixed_precision fp16 --train_batch_size 8 \
    --resolution 512 $BIG </dev/null >whole.out 2>&1 || fail "the whole run failed: $(tail -n 3 whole.out)"
report_both whole
python3 - <<'PY' || fail "see above"
import json, re
bad = []
def truth(n):
    return next(json.loads(l.split(" ", 1)[1]) for l in open(n + ".out") if l.startswith("VRAMTRACE_TORCH_STATS "))
for n in ("oom", "small", "fit", "no32"):
    t, j, txt = truth(n), json.load(open(n + ".json")), open(n + ".txt").read()
    want_oom = n in ("oom", "small")
    if t["oom"] != want_oom or (want_oom and t["oom_phase"] != "forward"):
        bad.append(f"{n}: the program's oom {t['oom']} in {t['oom_phase']}")
        continue
    p = (j["inferred"].get("params") or {}).get("value")
    if p != t["params"]:
        bad.append(f"{n}: P {p}, the program's {t['params']} ({t['frozen_elems']} frozen {t['frozen_dtype']}, {t['trainable_params']} trained)")
    row = re.search(r"^    parameters(?: \(vs basic\))?: (.*)$", txt, re.M)
    row = row.group(1) if row else ""
    c16 = (j["inferred"].get("cast16_bytes") or {}).get("value")
    if t["frozen_dtype"] == "fp16":
        if c16 != t["frozen_bytes"]:
            bad.append(f"{n}: cast16_bytes {c16}, the program's frozen fp16 bytes {t['frozen_bytes']}")
        want = f"{t['frozen_elems'] / 1e6:.2f} M at 2 B made by casts to 16 bits (controlnet_frozen16.py:"
        want32 = rf"{t['trainable_params'] / 1e6:.2f} M (trained weights )?at 4 B"
        if want not in row or not re.search(want32, row) or f"{t['params'] / 1e6:.2f} M elements" not in row:
            bad.append(f"{n}: weights' row {row!r}, the program's {t['frozen_elems']} fp16 and {t['trainable_params']} fp32")
        pr = re.search(r"^  parameters .*$", open(n + ".predict").read(), re.M)
        if not pr or "made by casts to 16 bits, the rest fp32" not in pr.group(0):
            bad.append(f"{n}.predict: {pr and pr.group(0)}")
    elif c16 is not None or "casts to 16 bits" in txt or "fp32, as their gradients" not in row:
        bad.append(f"{n}: --mixed_precision no (fp32 weights): cast16 {c16}, row {row!r}")
    if not want_oom:
        tp = j["recognized"]["trainable_params"]
        if tp != t["trainable_params"]:
            bad.append(f"{n}: trainable {tp}, the program's {t['trainable_params']}")
        bpp = j["recognized"]["optimizer"]["state_bytes_per_trainable_param"]
        if bpp != t["optim_state_bytes"] / t["trainable_params"]:
            bad.append(f"{n}: {bpp} B of state per trainable parameter, the program's {t['optim_state_bytes'] / t['trainable_params']}")
        if n == "fit" and "fp32 gradients of" not in txt:
            bad.append(f"{n}: {re.search(r'gradients: .*', txt).group(0)}")
# the OOM's need: a lower bound no more than the same configuration measures where it fits
need = re.search(r"current configuration needs at least ([0-9.]+) GiB", open("oom.txt").read())
whole = json.load(open("whole.json"))["peak"]["process_bytes"]
if not need or float(need.group(1)) * 2**30 > whole * 1.005:
    bad.append(f"oom: needs {need and need.group(1)} GiB, the whole run's peak {whole / 2**30:.2f} GiB")
print("\n".join("controlnet_frozen16: " + b for b in bad))
raise SystemExit(1 if bad else 0)
PY
echo "controlnet_frozen16: ok (weights made on the script's 16-bit cast lines counted at 2 B)"
