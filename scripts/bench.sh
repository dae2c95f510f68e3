#!/bin/sh
# bench.sh — `make bench` entry: runs scripts/bench.py (table on stdout, $BUILD/bench.json).
set -eu
exec python3 "$(dirname "$0")/bench.py"
