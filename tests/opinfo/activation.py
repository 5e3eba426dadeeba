"""OpInfos of the activation functions (src/ops/table/activation.yaml)."""

from .core import *  # noqa: F401,F403


def _act_samples(**kwargs_variants):
    """unary samples plus one sample per keyword variant."""

    def gen(dtype, rng):
        out = unary_samples(specials=True)(dtype, rng)
        for desc, kw in kwargs_variants.items():
            out.append(Sample((arr(rng, (3, 4), dtype),), dict(kw), desc=desc))
        return out

    return gen


def _functional(name):
    return lambda lib: getattr(lib.nn.functional, name)


add(OpInfo("leaky_relu", "activation", FLOATS,
           _act_samples(slope_02={"negative_slope": 0.2}, slope_neg={"negative_slope": -1.5}),
           fn=_functional("leaky_relu"), method="", inplace=True,
           inplace_fn=_functional("leaky_relu_")))
