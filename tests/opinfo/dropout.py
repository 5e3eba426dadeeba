"""OpInfos of the dropout family (src/ops/table/dropout.yaml), on their deterministic cases
(eval mode, p = 0, p = 1); the random masks are tested statistically in
tests/test_nn_func_modules.py."""

import numpy as np

from .core import *  # noqa: F401,F403


def _det_samples(feature):
    def gen(dtype, rng):
        x = lambda s: arr(rng, s, dtype)  # noqa: E731
        s = (2, 3, 4) if feature else (3, 4)
        return [
            Sample((x(s), 0.5, False), desc="eval"),
            Sample((x(s), 0.0, True), desc="p=0"),
            Sample((x(s), 1.0, True), desc="p=1"),
            Sample((x(s),), {"p": 0.3, "train": False}, desc="keywords"),
            Sample((x((0,) + s[1:]), 0.5, True), desc="empty"),
            Sample((x(s), 1.5, True), desc="p out of range"),
        ]

    return gen


for _name, _feature in (("dropout", False), ("feature_dropout", True), ("alpha_dropout", False),
                        ("feature_alpha_dropout", True)):
    add(OpInfo(_name, "dropout", FLOATS, _det_samples(_feature), method="", inplace=True,
               inplace_fn=(lambda n: lambda lib: getattr(lib, n + "_") if hasattr(lib, n + "_")
                           else getattr(lib._C, n + "_"))(_name)))


def native_dropout_samples(dtype, rng):
    x = lambda s: arr(rng, s, dtype)  # noqa: E731
    return [
        Sample((x((3, 4)), 0.5, False), desc="eval"),
        Sample((x((3, 4)), 0.0, True), desc="p=0"),
        Sample((x((3, 4)), 1.0, True), desc="p=1"),
        Sample((x(()), 0.2, False), desc="0-d eval"),
    ]


def dropout_backward_samples(dtype, rng):
    g = lambda s: arr(rng, s, dtype)  # noqa: E731
    m = lambda s: Arr(rng.random(s) < 0.6, "bool")  # noqa: E731
    return [
        Sample((g((3, 4)), m((3, 4)), 2.5), desc="scale 2.5"),
        Sample((g(()), m(()), 1.0), desc="0-d"),
        Sample((g((0, 2)), m((0, 2)), 2.0), desc="empty"),
    ]


add(
    OpInfo("native_dropout", "dropout", FLOATS, native_dropout_samples,
           fn=lambda lib: lib._C.native_dropout if hasattr(lib, "_C") and hasattr(lib._C, "native_dropout")
           else lib.native_dropout, ref=lambda torch: torch.native_dropout, method=""),
    OpInfo("dropout_backward", "dropout", FLOATS, dropout_backward_samples,
           fn=lambda lib: lib._C.dropout_backward, ref=lambda torch: torch.ops.aten.native_dropout_backward,
           method=""),
)
