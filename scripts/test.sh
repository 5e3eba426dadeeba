#!/usr/bin/env bash
# The whole test suite. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/python -m pytest -q -p no:cacheprovider tests "$@"
