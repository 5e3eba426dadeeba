"""python -m oneflow.distributed.run: the launcher under torchrun's module name (see launch)."""
import sys

from .launch import main

if __name__ == "__main__":
    sys.exit(main())
