#!/bin/sh
# cuda_abi.sh — when the CUDA toolkit's cuda.h exists (beside nvcc, under $CUDA_HOME, or in
# /usr/local/cuda), compile tests/abi/check_abi.c against it and the project's own
# declarations (preload/cuda_abi.h, every name prefixed vt_ so both can coexist): types,
# constants, sizes and struct offsets must agree. No toolkit: skip (the build never needs it).
set -u
inc=""
for d in ${CUDA_HOME:+"$CUDA_HOME/include"} "$(dirname "$(command -v nvcc 2>/dev/null || echo /nonexistent/bin/nvcc)")/../include" /usr/local/cuda/include; do
    [ -f "$d/cuda.h" ] && { inc=$d; break; }
done
[ -n "$inc" ] || { echo "no CUDA toolkit cuda.h here"; exit 77; }
# prefix every identifier our header declares with vt_, keeping C keywords and stdint names
sed -E -e 's/\b(CU[A-Za-z0-9_]*|cuda[A-Za-z0-9_]*|cuuint64_t|CUDA_[A-Z_]+)\b/vt_\1/g' \
    -e 's/VT_CUDA_ABI_H/VT_RENAMED_ABI_H/g' "$ROOT/preload/cuda_abi.h" >vt_renamed_abi.h
cc -std=gnu11 -Wall -I"$inc" -I. -o check_abi "$ROOT/tests/abi/check_abi.c" 2>cc.err ||
    { cat cc.err; echo "cuda_abi: our declarations disagree with $inc/cuda.h"; exit 1; }
./check_abi
