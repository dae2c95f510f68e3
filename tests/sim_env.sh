# sim_env.sh — sourced by the integration tests that run a SIMULATED program (examples/sim's
# simtorch on the fake CUDA driver) right after their `set -u`. It defines fail MESSAGE, which
# prints "NAME: MESSAGE" (NAME the test's, its file's name) and ends the test; fails the test
# when build/examples/libsimtorch.so is not built (make progs) and skips it (77) without python3
# (or without $PY, the Python a test that runs its programs with ${PYTHON:-python3} set before);
# exports SIMTORCH_LIB (the simulation's native library) and FAKECUDA_MEM=24GiB (the fake device,
# larger than the cards the tests emulate with --card: their out-of-memory errors are
# vramtrace's). A test that wants another device size exports its own after this.
# report_both BASE [LABEL] writes BASE.vt's text report (BASE.txt) and JSON report (BASE.json);
# a report that fails ends the test with "LABEL: report failed" (LABEL: BASE by default).
vt_test=${0##*/}
vt_test=${vt_test%.sh}
fail() { echo "$vt_test: $*"; exit 1; }
[ -f "$BUILD/examples/libsimtorch.so" ] || fail "$BUILD/examples/libsimtorch.so not built (make progs)"
for vt_py in python3 ${PY:+"$PY"}; do
    command -v "$vt_py" >/dev/null 2>&1 || { echo "SKIP $vt_test: no $vt_py"; exit 77; }
done
export SIMTORCH_LIB="$BUILD/examples/libsimtorch.so" FAKECUDA_MEM=24GiB
report_both() {
    "$VT" report --no-color "$1.vt" >"$1.txt" && "$VT" report --json "$1.vt" >"$1.json" ||
        fail "${2:-$1}: report failed"
}
