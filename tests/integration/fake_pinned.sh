#!/bin/sh
# fake_pinned.sh — the project's fake CUDA is used whatever LD_LIBRARY_PATH holds: a decoy
# libcuda.so.1 and libcudart.so.13 (every call fails, as a real driver without a GPU would) put
# first on LD_LIBRARY_PATH must change nothing: the demo runs (OOM, then the advice fits) and
# a traced program captures its allocations. Linking: DT_RPATH (not RUNPATH), and the fake
# runtime dlopens the fake driver beside itself by path.
set -u
fail() { echo "fake_pinned: $*"; exit 1; }
CC=${CC:-cc}
command -v "$CC" >/dev/null 2>&1 || { echo "no C compiler ($CC) to build the decoys"; exit 77; }
mkdir -p decoy
cat >decoy/cuda.c <<'C'
/* a decoy driver: every call fails with CUDA_ERROR_NO_DEVICE (100) */
int cuInit(unsigned f) { (void)f; return 100; }
int cuDriverGetVersion(int *v) { (void)v; return 100; }
int cuGetProcAddress_v2(const char *s, void **p, int v, unsigned long long f, int *st)
{ (void)s; (void)v; (void)f; (void)st; *p = 0; return 100; }
int cuGetProcAddress(const char *s, void **p, int v, unsigned long long f)
{ (void)s; (void)v; (void)f; *p = 0; return 100; }
int cuDeviceGetCount(int *n) { *n = 0; return 100; }
int cuMemGetInfo_v2(unsigned long *f, unsigned long *t) { *f = *t = 0; return 100; }
C
cat >decoy/cudart.c <<'C'
/* a decoy runtime: every call fails with cudaErrorInsufficientDriver (35) */
int cudaMalloc(void **p, unsigned long n) { (void)n; *p = 0; return 35; }
int cudaFree(void *p) { (void)p; return 35; }
int cudaGetDeviceCount(int *n) { *n = 0; return 35; }
int cudaMemGetInfo(unsigned long *f, unsigned long *t) { *f = *t = 0; return 35; }
int cudaSetDevice(int d) { (void)d; return 35; }
int cudaDeviceSynchronize(void) { return 35; }
C
"$CC" -shared -fPIC -Wl,-soname,libcuda.so.1 -o decoy/libcuda.so.1 decoy/cuda.c || fail "decoy libcuda"
"$CC" -shared -fPIC -Wl,-soname,libcudart.so.13 -o decoy/libcudart.so.13 decoy/cudart.c || fail "decoy libcudart"
ln -sf libcuda.so.1 decoy/libcuda.so
ln -sf libcudart.so.13 decoy/libcudart.so
DECOY="$TESTDIR/decoy"

# the products carry DT_RPATH, which the dynamic loader searches before LD_LIBRARY_PATH
if command -v readelf >/dev/null 2>&1; then
    for f in "$FAKE/libcudart.so.13" "$BUILD/examples/libsimtorch.so" "$BUILD/tests/prog/rt_cases"; do
        readelf -d "$f" | grep -q '(RPATH)' || fail "$f has no DT_RPATH: $(readelf -d "$f" | grep -i path)"
        readelf -d "$f" | grep -q '(RUNPATH)' && fail "$f has DT_RUNPATH (LD_LIBRARY_PATH would win)"
    done
fi

# a traced program with the decoys first: the fake runtime and driver answer
LD_LIBRARY_PATH="$DECOY${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$VT" run -q -o cap.vt -- \
    "$BUILD/tests/prog/rt_cases" basic >cap.out 2>&1
rc=$?
[ $rc = 0 ] || { cat cap.out; fail "rt_cases basic under vramtrace run with the decoys: exit $rc"; }
"$VT" dump cap.vt >cap.jsonl || fail "dump of cap.vt"
grep -q '"api":"cudaMalloc".*"failed":false' cap.jsonl || fail "no successful cudaMalloc captured with the decoys first"

# the demo with the decoys first: OOM on the emulated card, then the recommended run fits
PY=${PYTHON:-python3}
command -v "$PY" >/dev/null 2>&1 || { echo "no python3 for the demo"; exit 77; }
LD_LIBRARY_PATH="$DECOY${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" DEMO_DIR="$TESTDIR/demo" BUILD="$BUILD" \
    sh "$ROOT/scripts/demo.sh" >demo.txt 2>&1
rc=$?
[ $rc = 0 ] || { tail -40 demo.txt; fail "make demo's script with the decoys first: exit $rc"; }
grep -q 'out of memory, as expected' demo.txt || fail "demo: no OOM in the first run"
grep -q 'recommended run: exit 0 (fits)' demo.txt || fail "demo: the recommended run did not fit"
grep -q 'error 35' demo.txt && fail "demo: a decoy answered (error 35)"
echo "fake_pinned: ok"
