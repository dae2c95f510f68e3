#!/bin/sh
# program_from_source.sh — what kind of program a run is comes from its own recorded script when
# its command line would suit nanoGPT's configurator (nothing, or only --key=value): a user's loop
# around nanoGPT's model class with argparse flags of its own (--bs, --accum, --ctx) run with no
# arguments had been "configuration (nanoGPT)" and told "change: --block_size=512", "--n_layer=9",
# "--n_embd=512 --n_head=8" (argparse rejects each); with --bs=16 --accum=2, "mygpt.py defines no
# flag for it" of its --accum; an argparse script spelled with underscores (--batch_size=16
# --grad_accum=1) had "unknown config key 'grad_accum'" and its --grad_accum=1 read as the
# argparse default; the same script with no arguments "a program vramtrace has no flag spellings
# for" beside advice spelled with its flags. A script with no flags of its own gets no flag, and
# nanoGPT-style scripts (a configurator) stay nanoGPT's.
set -u
. "$ROOT/tests/sim_env.sh"
SIM="$ROOT/examples/sim"
# a user's loop around nanoGPT's model class (the simulation's): its own flags, or none
for kind in flags fixed; do
    {
        echo "import argparse, os, sys"
        echo "sys.path.insert(0, '$SIM')"
        echo "import sim_train"
        echo "import simtorch as torch"
        if [ $kind = flags ]; then
            echo "p = argparse.ArgumentParser()"
            echo "p.add_argument('--bs', type=int, default=8)"
            echo "p.add_argument('--accum', type=int, default=1)"
            echo "p.add_argument('--ctx', type=int, default=1024)"
            echo "a = p.parse_args()"
            echo "bs, accum, ctx = a.bs, a.accum, a.ctx"
        else
            echo "bs, accum, ctx = 8, 1, 1024"
        fi
        echo "c = dict(sim_train.DEFAULTS, batch_size=bs, gradient_accumulation_steps=accum,"
        echo "         block_size=ctx, max_iters=3, eval_interval=10**9, compile=False)"
        echo "torch.cuda.init()"
        echo "ctx = torch.amp.autocast(device_type='cuda', dtype=torch.float16)"
        echo "model = sim_train.GPT(c)"
        echo "model.to('cuda')"
        echo "opt = model.configure_optimizers(c)"
        echo "try:"
        echo "    sim_train.Trainer(c).train(model, opt, torch.amp.GradScaler('cuda'), ctx)"
        echo "except torch.OutOfMemoryError:"
        echo "    sys.exit(1)"
    } >"my_$kind.py"
done
# sim_hf.py with underscore spellings (--batch_size, --grad_accum, --seq_len)
sed -e 's/"--batch-size"/"--batch_size"/; s/"--grad-accum"/"--grad_accum"/; s/"--seq-len"/"--seq_len"/' \
    -e "s#^HERE = .*#HERE = '$SIM'; sys.path.insert(0, HERE)#" "$SIM/sim_hf.py" >hf_us.py
grep -q 'add_argument("--grad_accum"' hf_us.py || fail "hf_us.py: sed did not apply"
run() { # name card command...
    n=$1 card=$2
    shift 2
    timeout 300 "$VT" run -q --card "$card" -o "$n.vt" -- python3 "$@" </dev/null >"$n.out" 2>&1
    [ -f "$n.vt" ] || { tail -n 5 "$n.out"; fail "$n: no trace"; }
    "$VT" report --no-color "$n.vt" >"$n.txt" || fail "$n: report failed"
}
nano_flags='--block_size\|--n_layer\|--n_embd\|--n_head\|--batch_size=\|--gradient_accumulation_steps'
run mine 8GiB my_flags.py
grep -q '^configuration (an argparse script)' mine.txt || fail "mine: $(grep '^configuration' mine.txt)"
grep '^ *change: ' mine.txt | grep -q -- "$nano_flags" && fail "mine: $(grep -m1 -- "$nano_flags" mine.txt)"
grep -q '^ *change: --bs 4 --accum 2' mine.txt || fail "mine: $(grep -m1 '^ *change: ' mine.txt)"
grep -q '^ *change: --ctx 512' mine.txt || fail "mine: no --ctx: $(grep '^ *change: ' mine.txt)"
grep -q "nanoGPT's train.py\|nanoGPT's defaults" mine.txt && fail "mine: $(grep -m1 "nanoGPT's" mine.txt)"
run mine_args 8GiB my_flags.py --bs=16 --accum=2
# (its row named in words for any program with the script's own flag, never nanoGPT's key)
grep -q '^  accumulation steps A (--accum) *2 *argument  --accum=2' mine_args.txt &&
    ! grep -q '^  gradient_accumulation_steps ' mine_args.txt ||
    fail "mine_args: $(grep '^  \(accumulation steps\|gradient_accumulation_steps\)' mine_args.txt)"
grep -q 'defines no flag' mine_args.txt && fail "mine_args: $(grep -m1 'defines no flag' mine_args.txt)"
grep -q '^ *change: --bs=8 --accum=4' mine_args.txt || fail "mine_args: $(grep -m1 '^ *change: ' mine_args.txt)"
run fixed 8GiB my_fixed.py
grep -q '^configuration (a program vramtrace has no flag spellings for)' fixed.txt ||
    fail "fixed: $(grep '^configuration' fixed.txt)"
grep '^ *change: ' fixed.txt | grep -q -- '--' && fail "fixed: a flag: $(grep -m1 '^ *change: .*--' fixed.txt)"
run hf_us 8GiB hf_us.py --model=llama-160m --batch_size=16 --grad_accum=1 --steps=2
grep -q '^configuration (an argparse script)' hf_us.txt || fail "hf_us: $(grep '^configuration' hf_us.txt)"
grep -q 'unknown config key' hf_us.txt && fail "hf_us: $(grep -m1 'unknown config key' hf_us.txt)"
grep -q '^  accumulation steps A (--grad_accum) *1 *argument  --grad_accum=1' hf_us.txt &&
    ! grep -q '^  gradient_accumulation_steps ' hf_us.txt ||
    fail "hf_us: $(grep '^  \(accumulation steps\|gradient_accumulation_steps\)' hf_us.txt)"
grep -q "looks like nanoGPT's" hf_us.txt && fail "hf_us: $(grep -m1 "looks like nanoGPT's" hf_us.txt)"
run hf_plain 8GiB "$SIM/sim_hf.py"
grep -q '^configuration (an argparse script)' hf_plain.txt || fail "hf_plain: $(grep '^configuration' hf_plain.txt)"
grep -q "looks like nanoGPT's" hf_plain.txt && fail "hf_plain: $(grep -m1 "looks like nanoGPT's" hf_plain.txt)"
# nanoGPT's own kind (its configurator) stays nanoGPT's, with and without arguments
run nano 12GiB "$SIM/sim_train.py" --max_iters=2 --eval_iters=1 --compile=False --batch_size=2
grep -q '^configuration (nanoGPT)' nano.txt || fail "nano: $(grep '^configuration' nano.txt)"
exit 0
