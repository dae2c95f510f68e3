#!/bin/sh
# fake_selftest.sh — runs the sections of tests/prog/fake_selftest (runtime) and fake_drvtest
# (driver) against the fake CUDA alone (no preload), each with the FAKECUDA_* environment it
# expects, plus checks on how the fake runtime is linked. Exit 0 pass, 1 fail.
set -u
T="$BUILD/tests/prog/fake_selftest"
D="$BUILD/tests/prog/fake_drvtest"
for p in "$T" "$D"; do
    [ -x "$p" ] || { echo "fake_selftest.sh: $p not built (run make test)"; exit 1; }
done
unset LD_PRELOAD FAKECUDA_DEVICES FAKECUDA_MEM FAKECUDA_CONTEXT FAKECUDA_LOG
fail=0
run() { # run ENV... -- PROGRAM SECTION [ARG]: one section in a clean environment
    envs=""
    while [ "$1" != "--" ]; do envs="$envs $1"; shift; done
    shift
    if out=$(env $envs "$@" 2>&1); then
        echo "$out"
    else
        echo "FAILED: env$envs $*"; echo "$out"; fail=1
    fi
}
small="FAKECUDA_MEM=1G FAKECUDA_CONTEXT=100M"
run $small -- "$T" capacity
run $small -- "$T" reuse
run $small -- "$T" async
run $small -- "$D" procaddr
run $small -- "$D" vmm
run $small -- "$D" modules "$TESTDIR/module.bin"
run $small -- "$T" lasterror
run FAKECUDA_DEVICES=2 FAKECUDA_MEM=2G FAKECUDA_CONTEXT=300M -- "$T" devices
run $small -- "$T" threads
run $small -- "$T" fork
run FAKECUDA_DEVICES=0 -- "$T" nodevice
# capacity spellings, and the defaults (16 GiB)
run FAKECUDA_MEM=12GiB -- "$T" size $((12 << 30))
run FAKECUDA_MEM=1536M -- "$T" size $((1536 << 20))
run FAKECUDA_MEM=512MiB -- "$T" size $((512 << 20))
run FAKECUDA_MEM=1T -- "$T" size $((1 << 40))
run FAKECUDA_MEM=4096K FAKECUDA_CONTEXT=0 -- "$T" size $((4096 << 10))
run FAKECUDA_MEM=123456789 FAKECUDA_CONTEXT=1M -- "$T" size 123456789
# a card smaller than its context: the first call that needs the context fails with OOM
if FAKECUDA_MEM=200M FAKECUDA_CONTEXT=300M "$T" size $((200 << 20)) 2>&1 | grep -q "= 2 (0x2)"; then :; else
    echo "FAILED: a context larger than the card did not fail with out-of-memory"; fail=1
fi
run -- "$T" size $((16 << 30))
run FAKECUDA_DEVICES=3 FAKECUDA_MEM=1G,3G FAKECUDA_CONTEXT=0 -- "$T" size $((3 << 30)) 1
run FAKECUDA_DEVICES=3 FAKECUDA_MEM=1G,3G FAKECUDA_CONTEXT=0 -- "$T" size $((3 << 30)) 2
run FAKECUDA_DEVICES=3 FAKECUDA_MEM=1G,3G FAKECUDA_CONTEXT=0 -- "$T" size $((1 << 30)) 0
# a preloaded shim defining driver/runtime symbols must not catch the fakes' internal calls
cat > shim.c <<'SHIM'
/* shim.c — every function answers 999 (see fake_selftest interpose). */
int cuMemHostAlloc(void) { return 999; }
int cuModuleLoadData(void) { return 999; }
int cuMemAlloc_v2(void) { return 999; }
int cuMemFreeAsync(void) { return 999; }
int cudaGetDriverEntryPointByVersion(void) { return 999; }
int cudaStreamCreateWithFlags(void) { return 999; }
int cudaMemcpy(void) { return 999; }
SHIM
if cc -shared -fPIC -o shim.so shim.c; then
    run LD_PRELOAD="$PWD/shim.so" -- "$D" interpose
else
    echo "FAILED: cannot build shim.so"; fail=1
fi
# the log goes to stderr and names the calls
log=$(FAKECUDA_LOG=1 FAKECUDA_MEM=1G "$T" reuse 2>&1 >/dev/null)
case $log in
*"cuGetProcAddress(cuMemAlloc, 13000, 0)"*"cuInit"*) ;;
*) echo "FAILED: FAKECUDA_LOG=1 log lacks the expected lines"; fail=1 ;;
esac
# the runtime reaches the driver only through dlopen + cuGetProcAddress_v2: it has no
# undefined cu* symbol, no DT_NEEDED libcuda, and its symbols carry the version node
if nm -D --undefined-only "$FAKE/libcudart.so.13" | grep -q ' cu'; then
    echo "FAILED: libcudart.so.13 references driver symbols directly"; fail=1
fi
# ... and the dynamic linker sees exactly one driver symbol lookup: cuGetProcAddress_v2
lookups=$(FAKECUDA_MEM=1G LD_DEBUG=symbols "$T" reuse 2>&1 >/dev/null |
    grep -Eo 'symbol=cu[A-Z][A-Za-z0-9_]*; +lookup in file=[^ ]*libcuda[^ ]*' | sed 's/;.*//')
if [ "$lookups" != "symbol=cuGetProcAddress_v2" ]; then
    echo "FAILED: expected one dlsym of cuGetProcAddress_v2 from the runtime, saw: $lookups"; fail=1
fi
if readelf -d "$FAKE/libcudart.so.13" | grep NEEDED | grep -q libcuda; then
    echo "FAILED: libcudart.so.13 links libcuda"; fail=1
fi
nm -D --defined-only "$FAKE/libcudart.so.13" | grep -q 'cudaMalloc@@libcudart.so.13' ||
    { echo "FAILED: cudaMalloc is not versioned libcudart.so.13"; fail=1; }
exit $fail
