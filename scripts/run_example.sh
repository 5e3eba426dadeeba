#!/usr/bin/env bash
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/python examples/quickstart.py
# The main example: a CNN trained on Fashion-MNIST (arguments go to it, e.g. --epochs 2).
.venv/bin/python examples/train_fashion_mnist.py "$@"
