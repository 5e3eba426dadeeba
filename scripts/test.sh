#!/usr/bin/env bash
# The whole test suite. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# Two workers: the CI machine has 2 cores (pass -n 0 to run in one process). The 25 slowest cases
# are listed at the end: the suite's time budget (docs/build.md) is watched from there.
.venv/bin/python -m pytest -q -p no:cacheprovider -n 2 --durations=25 tests "$@"
