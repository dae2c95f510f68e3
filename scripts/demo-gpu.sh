#!/bin/sh
# demo-gpu.sh — `make demo-gpu`: scripts/demo.sh with examples/gpt/train.py for real, on a GPU
# with PyTorch (python from $PYTHON, else /opt/torch/.venv/bin/python3, else python3).
DEMO_MODE=gpu exec sh "$(dirname "$0")/demo.sh" "$@"
