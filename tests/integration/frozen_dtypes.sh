#!/bin/sh
# frozen_dtypes.sh — SIMULATED fine-tunings whose frozen weights are not the dtype of the trained
# ones (tests/python/frozen_dtypes.py): a QLoRA-like decoder (packed 4-bit uint8 base with fp32
# absmax, bf16 embedding, norms and head, fp32 adapters, no autocast) and a frozen fp16 encoder
# beside a trained fp32 transformer under bf16 autocast with an fp32 EMA copy. The trace gives
# the trained weights' element size (their gradients) and not the frozen ones': the weights that
# take no gradient are said in bytes, the program's own (the QLoRA's had been "1201.80 M elements
# at 4 B", its 6.74 B weights, and "159.91 M of the 1201.80 M weight elements"), no element count
# of them is given (JSON from_trace null), and no fp32 compute is concluded from the trained
# weights alone (the QLoRA had been "float32 ... no mixed precision, fp32 compute"; predict --from
# "model weights, fp32 (fp32 compute)"). The encoder run out of memory in its first forward (no
# gradient yet) has its trained weights told by the EMA's copy of them (clones of parameters(), in
# another order than .to() made the model): the trainable count, at least, and the gradients and
# AdamW state predicted are the program's (all the weights' had been costed, 2.43 GiB of state
# for 1.14, and the EMA said "off"). The encoder's own line, .to("cuda", dtype=torch.float16),
# gives its 2-byte elements: counted and said with that line; only the EMA's clones stay in bytes.
set -u
. "$ROOT/tests/sim_env.sh"
P="$ROOT/tests/python/frozen_dtypes.py"
timeout 300 "$VT" run --card 12GiB -o nf4.vt -- python3 "$P" --base nf4 --batch_size 4 \
    </dev/null >nf4.out 2>&1 || { cat nf4.out; fail "the 4-bit run failed"; }
timeout 300 "$VT" run --card 12GiB -o enc.vt -- python3 "$P" --base encoder --ema --batch_size 8 \
    </dev/null >enc.out 2>&1 || { cat enc.out; fail "the encoder run failed"; }
timeout 300 "$VT" run --card 12GiB -o oom.vt -- python3 "$P" --base encoder --ema --batch_size 64 \
    </dev/null >oom.out 2>&1
grep -q "^OOM in forward$" oom.out || { cat oom.out; fail "batch 64 did not run out of memory in its forward"; }
report_both oom
"$VT" predict --from oom.vt >oom.predict 2>&1 || fail "oom: predict --from failed"
python3 - <<'EOF' || fail "$(grep -h 'trainable  \|EMA weights' oom.txt; grep -h 'gradients \|optimizer ' oom.predict)"
import json, re
facts = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", re.search(r"^FACTS .*$", open("oom.out").read(), re.M).group(0))}
state = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", re.search(r"^STATE .*$", open("enc.out").read(), re.M).group(0))}
j = json.load(open("oom.json"))
bad = []
if j["recognized"]["trainable_params"] != facts["trainable"] or j["recognized"].get("trainable_params_at_least") is not True:
    bad.append(f"trainable {j['recognized']['trainable_params']} (at least: {j['recognized'].get('trainable_params_at_least')}), the program's {facts['trainable']}")
cat = j["prediction"]["calibrated_by_category"]
for k, want in (("gradients", state["grads"]), ("optimizer", state["optimizer"])):
    if abs(cat[k] - want) > 0.01 * want:
        bad.append(f"predicted {k} {cat[k]}, the program's {want}")
if "repeat in another order (made by code apart from the model's)" not in j["recognized"]["ema"]["where"]:
    bad.append(f"EMA {j['recognized']['ema']}")
for b in bad:
    print("frozen_dtypes: oom:", b)
raise SystemExit(1 if bad else 0)
EOF
for r in nf4 enc; do
    report_both $r
    "$VT" report --html $r.html $r.vt >/dev/null 2>&1 || fail "$r: report --html failed"
    grep -q "weight elements; beside them .* [MG]iB of weights take no gradient\(, their\|: .* packed two 4-bit elements a byte (.* M elements: .*), the other .*s\) element count not known" \
        $r.html || fail "$r: the HTML's trainable row: $(grep -o 'trainable</td><td>[^<]*<[^>]*>[^<]*' $r.html)"
    "$VT" predict --from $r.vt >$r.predict 2>&1 && "$VT" predict --from $r.json >$r.predict_json 2>&1 ||
        fail "$r: predict --from failed"
done
python3 - <<'EOF' || fail "$(grep -h 'dtype  \|trainable  \|parameters: \|parameters (vs' nf4.txt enc.txt)"
import json, re
bad = []
for r in ("nf4", "enc"):
    facts = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", re.search(r"^FACTS .*$", open(r + ".out").read(), re.M).group(0))}
    j, txt = json.load(open(r + ".json")), open(r + ".txt").read()
    # (all that takes no gradient, but the encoder, whose line .to("cuda", dtype=torch.float16)
    # gives its 2-byte elements: counted, said with that line)
    untyped = facts["ema_bytes"] + (0 if r == "enc" else facts["frozen_bytes"])
    tp, ut = j["recognized"]["trainable_params"], j["recognized"].get("untyped_weight_bytes")
    if tp != facts["trainable"]:
        bad.append(f"{r}: trainable {tp}, the program's {facts['trainable']}")
    if not ut or abs(ut - untyped) > 0.01 * untyped:
        bad.append(f"{r}: untyped_weight_bytes {ut}, the program's frozen (and EMA) bytes {untyped}")
    if j["formula"]["parameter_count"]["from_trace"] is not None:
        bad.append(f"{r}: from_trace {j['formula']['parameter_count']['from_trace']} (an element count at 4 B)")
    # the weights' row: the trained ones counted, the rest in bytes (never all at one size)
    row = re.search(r"^    parameters(?: \(vs basic\))?: (.*)$", txt, re.M)
    if not row or "M elements at" in row.group(1) or "whose element size the trace does not give" not in row.group(1) \
            or f"{facts['trainable'] / 1e6:.2f} M trained weights at 4 B" not in row.group(1):
        bad.append(f"{r}: weights' row {row and row.group(1)}")
    cast = f"{facts['frozen_elems'] / 1e6:.2f} M at 2 B made by casts to 16 bits (frozen_dtypes.py:"
    if row and (r == "enc") != (cast in row.group(1)):
        bad.append(f"{r}: weights' row {row.group(1)!r}: the encoder cast to fp16 is {cast!r}")
    tr = re.search(r"^  trainable  .*$", txt, re.M)
    if not tr or "weight elements made before training" in tr.group(0) or "element count not known" not in tr.group(0):
        bad.append(f"{r}: {tr and tr.group(0)}")
    # the packed 4-bit weights' count is known (2 elements a byte, told by the forward's
    # dequantized temporaries of 4x their bytes): given, the rest's not (16-bit embeddings and
    # head, fp32 absmax buffers: the trace does not give their dtype); it had been "3.88 GiB of
    # weights take no gradient, their element count not known", the 4-bit ones' too
    pk, pj = facts["packed_elems"], j["recognized"].get("untyped_packed_4bit_elements")
    said = f"packed two 4-bit elements a byte ({pk / 1e6:.2f} M elements"
    if (pj or 0) != pk or (tr and (said in tr.group(0)) != (pk > 0)) or (row and (said in row.group(1)) != (pk > 0)):
        bad.append(f"{r}: untyped_packed_4bit_elements {pj}, the program's {pk}: {tr and tr.group(0)}")
    # predict --from (the trace, its report's JSON): the trained ones in their own dtype (the
    # adapters fp32: "16-bit" had been said of them, the frozen head's logits 16-bit), the
    # packed 4-bit ones among those that take no gradient
    want = "the trained ones %s, and " % ("fp32" if facts["trainable_bytes"] == 4 * facts["trainable"] else "16-bit")
    packed = "take no gradient (%.2f GiB of them packed two 4-bit elements a byte)" % (facts["packed_elems"] / 2 / 2**30)
    for p in (r + ".predict", r + ".predict_json"):
        pr = re.search(r"^  parameters .*$", open(p).read(), re.M)
        if not pr or "of a dtype the trace does not give" not in pr.group(0) or want not in pr.group(0) \
                or (packed in pr.group(0)) != (facts["packed_elems"] > 0):
            bad.append(f"{p}: {pr and pr.group(0)}")
# the 4-bit run's weights: the program's own count (frozen, the 4-bit ones at their logical count,
# and trained), not its fp32 absmax buffers (an absmax per 64 elements: 386.0 MiB), which had been
# read at 2 B an element: "159.91 M of its 7100.70 M weights" for 6898.32 M; the absmax said so
facts = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", re.search(r"^FACTS .*$", open("nf4.out").read(), re.M).group(0))}
want = "%.2f M" % ((facts["frozen_elems"] + facts["trainable"]) / 1e6)
P = (json.load(open("nf4.json"))["inferred"].get("params") or {}).get("value") or 0
if "%.2f M" % (P / 1e6) != want:
    bad.append(f"nf4: inferred params {P}, the program's {want}")
for l in open("nf4.txt").read().splitlines():
    if re.search(r"of its \d+\.\d\d M weights", l) and f"of its {want} weights" not in l:
        bad.append(f"nf4: {l.strip()} (the program's {want})")
qs = facts["packed_elems"] // 64 * 4  # (the program's fp32 absmax buffer per 64 elements)
tr = re.search(r"^  trainable  .*$", open("nf4.txt").read(), re.M)
if qs > 0 and (not tr or "; of them %.1f MiB the packed weights' absmax (no parameters)" % (qs / 2**20) not in tr.group(0)):
    bad.append(f"nf4: the absmax ({qs} B) not said: {tr and tr.group(0)}")
# no autocast in the 4-bit run: its trained weights' fp32 says nothing of the base's compute (not
# known; or, its packed 4-bit weights read as such and its head's 16-bit logits told, the frozen
# model's 16 bits, the trained weights' dtype not given)
j = json.load(open("nf4.json"))
dw = j["config"]["dtype"]["where"]
if j["config"]["dtype"]["value"] == "float32" or ("not known" not in dw and not (
        "the frozen model computes in 16 bits" in dw and "trained weights' dtype the trace does not give" in dw)):
    bad.append(f"nf4: dtype {j['config']['dtype']}")
for b in bad:
    print("frozen_dtypes:", b)
raise SystemExit(1 if bad else 0)
EOF
echo "frozen_dtypes: ok"
