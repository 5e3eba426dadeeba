"""OpInfos of three-operand pointwise ops (src/ops/table/ternary.yaml)."""

from .core import *  # noqa: F401,F403


def lerp_samples(dtype, rng):
    def x(shape):
        return arr(rng, shape, dtype)

    w = Domain(-0.5, 1.5)
    return [
        Sample((x((3, 4)), x((3, 4)), 0.25), desc="scalar weight"),
        Sample((x((3, 4)), x((3, 4)), 0.75), desc="scalar weight >= 0.5"),
        Sample((x((3, 4)), x((3, 4)), arr(rng, (3, 4), dtype, w)), desc="tensor weight"),
        Sample((x((3, 1)), x((1, 4)), arr(rng, (4,), dtype, w)), desc="broadcast all three"),
        Sample((x(()), x(()), arr(rng, (), dtype, w)), desc="0-d"),
        Sample((x((0, 3)), x((3,)), 0.5), desc="zero-size"),
        Sample((x((2, 3)), x((2, 3)), 1.0), desc="weight 1 gives end"),
    ]


add(OpInfo("lerp", "ternary", FLOATS + COMPLEX, lerp_samples, inplace=True))
