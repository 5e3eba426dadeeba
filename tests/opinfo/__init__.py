"""The op-sample table: one OpInfo per op name, in the spirit of PyTorch's OpInfo.

The building blocks (Arr, Sample, OpInfo, sample generators) are in core.py; every other module
of this package is one op family and registers its OpInfos with ``add``. A new family is a new
module here: it is found automatically.
"""

import importlib
import pkgutil

from .core import *  # noqa: F401,F403
from .core import OPS, COVERED_ELSEWHERE, RANDOM_DIST  # noqa: F401

for _m in pkgutil.iter_modules(__path__):
    if _m.name != "core" and not _m.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_m.name}")

OP_BY_NAME = {op.name: op for op in OPS}
assert len(OP_BY_NAME) == len(OPS), "duplicate op names in the table"
