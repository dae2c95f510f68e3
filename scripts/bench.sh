#!/bin/sh
# bench.sh — `make bench` entry: runs scripts/bench.py (table on stdout, $BUILD/bench.json), then
# scripts/bench_long.py (long runs: the chunked layout's capture cost, compression, reading it,
# a 200M-event bounded run; $BUILD/bench_long.json).
set -eu
python3 "$(dirname "$0")/bench.py"
exec python3 "$(dirname "$0")/bench_long.py"
