"""python -m oneflow.mock_torch script.py [args...]: runs a PyTorch script on oneflow."""

import runpy
import sys

from . import enable


def main():
    if len(sys.argv) < 2:
        print("usage: python -m oneflow.mock_torch script.py [args...]", file=sys.stderr)
        sys.exit(2)
    script = sys.argv[1]
    sys.argv = sys.argv[1:]
    enable()
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main()
