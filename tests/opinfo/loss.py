"""OpInfos of the loss family (src/ops/table/loss.yaml): every reduction, weights, N-d inputs,
integer targets of several dtypes (torch wants int64: its reference casts), error samples.
The flow side calls nn.functional (the Python glue over flow._C.X), torch the same function."""

import numpy as np

from .conv import half_via_float
from .core import *  # noqa: F401,F403

_TOL = {"float16": (5e-3, 2e-3), "bfloat16": (3e-2, 2e-2), "float32": (2e-5, 2e-5)}
_F32_64 = ("float32", "float64")
REDUCTIONS = ("none", "mean", "sum")


def _F(name):
    return lambda lib: getattr(lib.nn.functional, name)


def _long_targets(name, *index_args):
    """torch's F.name with the integer arguments at `index_args` cast to int64."""

    def ref(torch):
        f = getattr(torch.nn.functional, name)

        def g(*a, **k):
            a = list(a)
            for i in index_args:
                if i < len(a) and isinstance(a[i], torch.Tensor) and not a[i].is_floating_point():
                    a[i] = a[i].long()
            return f(*a, **k)

        return g

    return ref


def _ints(rng, shape, hi, dtype="int64", lo=0):
    return Arr(rng.integers(lo, hi, size=shape).astype(dtype), dtype)


def _signs(rng, shape, dtype):
    return Arr(np.where(rng.random(shape) < 0.5, -1.0, 1.0).astype(NP_DTYPE[dtype]), dtype)


# ---- elementwise pair losses -------------------------------------------------------------


def _pair_samples(extra=None, dom_x=DEFAULT, dom_y=DEFAULT):
    def gen(dtype, rng):
        x = lambda s: arr(rng, s, dtype, dom_x)  # noqa: E731
        y = lambda s: arr(rng, s, dtype, dom_y)  # noqa: E731
        out = [Sample((x((3, 4)), y((3, 4))), {"reduction": r}, desc=f"reduction={r}") for r in REDUCTIONS]
        out += [
            Sample((x((3, 4)), y((3, 4))), desc="default"),
            Sample((x(()), y(())), desc="0-d"),
            Sample((x((2, 3, 4)), y((2, 3, 4))), {"reduction": "none"}, desc="3-d none"),
            Sample((x((0, 3)), y((0, 3))), {"reduction": "sum"}, desc="zero-size sum"),
            Sample((x((0, 3)), y((0, 3))), desc="zero-size mean"),
            Sample((x((3, 4)), y((3, 4))), {"reduction": "avg"}, desc="bad reduction"),
        ]
        for desc, kw in (extra or {}).items():
            out.append(Sample((x((3, 4)), y((3, 4))), dict(kw), desc=desc))
        return out

    return gen


def _broadcast_pair(dtype, rng):
    return [Sample((arr(rng, (3, 4), dtype), arr(rng, (4,), dtype)), desc="broadcast target")]


def _with(gen, *more):
    def g(dtype, rng):
        out = gen(dtype, rng)
        for m in more:
            out += m(dtype, rng)
        return out

    return g


def _loss(name, samples, dtypes=FLOATS, ref=None, **kw):
    return OpInfo(name, "loss", dtypes, samples, fn=_F(name), ref=ref or _F(name), method="",
                  tol=dict(_TOL, **kw.pop("tol", {})), **kw)


add(
    _loss("mse_loss", _with(_pair_samples(), _broadcast_pair)),
    _loss("l1_loss", _with(_pair_samples(), _broadcast_pair)),
    _loss("smooth_l1_loss", _with(_pair_samples({"beta=0.5": {"beta": 0.5}, "beta=0": {"beta": 0.0},
                                                 "beta<0": {"beta": -1.0}}), _broadcast_pair)),
    _loss("huber_loss", _with(_pair_samples({"delta=2": {"delta": 2.0}, "delta=0.3": {"delta": 0.3},
                                             "delta=0": {"delta": 0.0}}), _broadcast_pair)),
)


def soft_margin_samples(dtype, rng):
    x = lambda s: arr(rng, s, dtype)  # noqa: E731
    out = [Sample((x((3, 4)), _signs(rng, (3, 4), dtype)), {"reduction": r}, desc=f"reduction={r}")
           for r in REDUCTIONS]
    out.append(Sample((x(()), _signs(rng, (), dtype)), desc="0-d"))
    out.append(Sample((x((0, 2)), _signs(rng, (0, 2), dtype)), {"reduction": "sum"}, desc="zero-size"))
    return out


def _target_detached(name):
    """lib -> F.name with the target detached: torch refuses a target that requires grad (the
    loss is not differentiable in it), so the gradient tests differentiate the input alone."""
    def make(lib):
        f = getattr(lib.nn.functional, name)
        return lambda input, target, *a, **k: f(input, target.detach(), *a, **k)
    return make


add(OpInfo("soft_margin_loss", "loss", FLOATS, soft_margin_samples, fn=_target_detached("soft_margin_loss"),
           method="", tol=_TOL))


def bce_samples(dtype, rng):
    p = lambda s: arr(rng, s, dtype, Domain(0.05, 0.95))  # noqa: E731
    y = lambda s: arr(rng, s, dtype, Domain(0.0, 1.0))  # noqa: E731
    out = [Sample((p((3, 4)), y((3, 4))), {"reduction": r}, desc=f"reduction={r}") for r in REDUCTIONS]
    out += [
        Sample((p((3, 4)), y((3, 4)), p((4,))), desc="weight (4,)"),
        Sample((p((3, 4)), y((3, 4))), {"weight": p((3, 4)), "reduction": "sum"}, desc="weight (3,4)"),
        Sample((p(()), y(())), desc="0-d"),
        Sample((const([0.0, 1.0, 0.5], dtype), const([1.0, 0.0, 0.5], dtype)), {"reduction": "none"},
               desc="log clamp at 0 and 1"),
        Sample((p((0, 3)), y((0, 3))), {"reduction": "sum"}, desc="zero-size"),
        Sample((p((3, 4)), y((3,))), desc="size mismatch"),
        Sample((const([0.5, 1.5], dtype), const([1.0, 0.0], dtype)), desc="input above 1"),
    ]
    return out


def bce_logits_samples(dtype, rng):
    x = lambda s: arr(rng, s, dtype)  # noqa: E731
    y = lambda s: arr(rng, s, dtype, Domain(0.0, 1.0))  # noqa: E731
    w = lambda s: arr(rng, s, dtype, Domain(0.1, 2.0))  # noqa: E731
    out = [Sample((x((3, 4)), y((3, 4))), {"reduction": r}, desc=f"reduction={r}") for r in REDUCTIONS]
    out += [
        Sample((x((3, 4)), y((3, 4))), {"pos_weight": w((4,))}, desc="pos_weight"),
        Sample((x((3, 4)), y((3, 4))), {"weight": w((3, 4)), "pos_weight": w((4,)), "reduction": "sum"},
               desc="weight + pos_weight"),
        Sample((x((3, 4)), y((3, 4)), w((4,))), desc="weight"),
        Sample((const([-30.0, 30.0, 0.0], dtype), const([1.0, 0.0, 0.5], dtype)), {"reduction": "none"},
               desc="large logits"),
        Sample((x(()), y(())), desc="0-d"),
        Sample((x((3, 4)), y((4,))), desc="size mismatch"),
    ]
    return out


add(
    _loss("binary_cross_entropy", bce_samples),
    _loss("binary_cross_entropy_with_logits", bce_logits_samples),
)


def kl_div_samples(dtype, rng):
    lp = lambda s: arr(rng, s, dtype, Domain(-3.0, -0.05))  # noqa: E731
    t = lambda s: arr(rng, s, dtype, Domain(0.05, 1.0))  # noqa: E731
    out = [Sample((lp((3, 4)), t((3, 4))), {"reduction": r}, desc=f"reduction={r}")
           for r in REDUCTIONS + ("batchmean",)]
    out += [
        Sample((lp((3, 4)), lp((3, 4))), {"log_target": True, "reduction": "sum"}, desc="log_target"),
        Sample((lp((3, 4)), lp((3, 4))), {"log_target": True, "reduction": "none"}, desc="log_target none"),
        Sample((lp((2, 3, 4)), t((2, 3, 4))), {"reduction": "batchmean"}, desc="3-d batchmean"),
        Sample((lp(()), t(())), {"reduction": "batchmean"}, desc="0-d batchmean"),
        Sample((lp((3, 4)), t((3, 4))), {"reduction": "avg"}, desc="bad reduction"),
    ]
    return out


add(_loss("kl_div", kl_div_samples))


def margin_ranking_samples(dtype, rng):
    x = lambda s: arr(rng, s, dtype)  # noqa: E731
    out = [Sample((x((5,)), x((5,)), _signs(rng, (5,), dtype)), {"reduction": r}, desc=f"reduction={r}")
           for r in REDUCTIONS]
    out += [
        Sample((x((5,)), x((5,)), _signs(rng, (5,), dtype)), {"margin": 0.5}, desc="margin"),
        Sample((x((2, 3)), x((2, 3)), _signs(rng, (2, 3), dtype), 1.0), desc="2-d positional margin"),
        Sample((x((5,)), x((5, 1)), _signs(rng, (5,), dtype)), desc="dims mismatch"),
    ]
    return out


add(_loss("margin_ranking_loss", margin_ranking_samples))


# ---- class-index losses ------------------------------------------------------------------


def _class_samples(log_probs, smoothing=False):
    def gen(dtype, rng):
        dom = Domain(-4.0, -0.1) if log_probs else DEFAULT
        x = lambda s: arr(rng, s, dtype, dom)  # noqa: E731
        w = lambda s: arr(rng, s, dtype, Domain(0.2, 2.0))  # noqa: E731
        t = lambda s, hi=5, d="int64": _ints(rng, s, hi, d)  # noqa: E731
        ignored = Arr(np.array([0, -100, 4, 2]), "int64")
        out = [Sample((x((4, 5)), t((4,))), {"reduction": r}, desc=f"reduction={r}") for r in REDUCTIONS]
        out += [
            Sample((x((4, 5)), t((4,), d="int32")), desc="int32 target"),
            Sample((x((4, 5)), t((4,), d="uint8")), desc="uint8 target"),
            Sample((x((4, 5)), t((4,)), w((5,))), desc="weight"),
            Sample((x((4, 5)), t((4,))), {"weight": w((5,)), "reduction": "sum"}, desc="weight sum"),
            Sample((x((4, 5)), ignored), desc="ignore_index -100"),
            Sample((x((4, 5)), ignored), {"weight": w((5,)), "reduction": "none"}, desc="ignored none"),
            Sample((x((4, 5)), t((4,))), {"ignore_index": 2}, desc="ignore_index=2"),
            Sample((x((4, 5)), Arr(np.array([-100, -100, -100, -100]), "int64")), desc="all ignored"),
            Sample((x((2, 5, 3, 2)), t((2, 3, 2))), desc="4-d input"),
            Sample((x((2, 5, 3)), t((2, 3))), {"reduction": "none", "weight": w((5,))}, desc="3-d none"),
            Sample((x((5,)), t(())), desc="1-d input"),
            Sample((x((0, 5)), t((0,))), {"reduction": "sum"}, desc="zero-size"),
            Sample((x((4, 5)), Arr(np.array([0, 5, 1, 1]), "int64")), desc="target out of bounds"),
            Sample((x((4, 5)), Arr(np.array([0, -3, 1, 1]), "int64")), desc="negative target"),
            Sample((x((4, 5)), t((3,))), desc="batch mismatch"),
            Sample((x((2, 5, 3)), t((2, 4))), desc="N-d target mismatch"),
            Sample((x((4, 5)), t((4,)), w((4,))), desc="weight size mismatch"),
            Sample((x((4, 5)), t((4,))), {"reduction": "avg"}, desc="bad reduction"),
        ]
        if smoothing:
            q = lambda s: arr(rng, s, dtype, Domain(0.0, 1.0))  # noqa: E731
            out += [
                Sample((x((4, 5)), t((4,))), {"label_smoothing": 0.2}, desc="label_smoothing"),
                Sample((x((4, 5)), ignored), {"label_smoothing": 0.1, "weight": w((5,))},
                       desc="smoothing + weight + ignored"),
                Sample((x((2, 5, 3)), t((2, 3))), {"label_smoothing": 0.3, "reduction": "none"},
                       desc="smoothing 3-d none"),
                Sample((x((4, 5)), q((4, 5))), desc="probability target"),
                Sample((x((4, 5)), q((4, 5))), {"reduction": "none", "weight": w((5,))}, desc="prob weight none"),
                Sample((x((2, 5, 3)), q((2, 5, 3))), {"label_smoothing": 0.2, "reduction": "sum"},
                       desc="prob 3-d smoothing"),
                Sample((x((5,)), q((5,))), desc="prob 1-d"),
                Sample((x((4, 5)), t((4,))), {"label_smoothing": 1.5}, desc="bad smoothing"),
            ]
        return out

    return gen


add(
    _loss("nll_loss", _class_samples(True), ref=_long_targets("nll_loss", 1)),
    _loss("cross_entropy", _class_samples(False, smoothing=True), ref=_long_targets("cross_entropy", 1)),
)


def multi_margin_samples(dtype, rng):
    x = lambda s: arr(rng, s, dtype)  # noqa: E731
    t = lambda s, d="int64": _ints(rng, s, 4, d)  # noqa: E731
    out = [Sample((x((3, 4)), t((3,))), {"reduction": r}, desc=f"reduction={r}") for r in REDUCTIONS]
    out += [
        Sample((x((3, 4)), t((3,))), {"p": 2, "margin": 0.5}, desc="p=2"),
        Sample((x((3, 4)), t((3,), "int32")), {"weight": arr(rng, (4,), dtype, Domain(0.2, 2.0))},
               desc="weight, int32 target"),
        Sample((x((4,)), t(())), desc="1-d"),
        Sample((x((3, 4)), t((3,))), {"p": 3}, desc="p=3"),
        Sample((x((3, 4)), Arr(np.array([0, 4, 1]), "int64")), desc="target out of range"),
        Sample((x((3, 4)), t((2,))), desc="target size"),
    ]
    return out


def multilabel_margin_samples(dtype, rng):
    x = lambda s: arr(rng, s, dtype)  # noqa: E731
    tgt = Arr(np.array([[3, 0, -1, 1], [1, 2, 3, 0], [-1, 0, 0, 0]]), "int64")
    out = [Sample((x((3, 4)), tgt), {"reduction": r}, desc=f"reduction={r}") for r in REDUCTIONS]
    out += [
        Sample((x((4,)), Arr(np.array([2, -1, 0, 0]), "int64")), desc="1-d"),
        Sample((x((3, 4)), Arr(tgt.value.astype(np.int32), "int32")), desc="int32 target"),
        Sample((x((3, 4)), Arr(np.array([[0, 4, -1, 0]] * 3), "int64")), desc="target out of range"),
        Sample((x((3, 4)), Arr(np.zeros((3, 3), np.int64), "int64")), desc="target shape"),
    ]
    return out


add(
    _loss("multi_margin_loss", multi_margin_samples, dtypes=_F32_64, ref=_long_targets("multi_margin_loss", 1)),
    _loss("multilabel_margin_loss", multilabel_margin_samples, dtypes=_F32_64,
          ref=_long_targets("multilabel_margin_loss", 1)),
)


def ctc_samples(dtype, rng):
    def lp(T, N, C):
        v = rng.standard_normal((T, N, C))
        v = v - np.log(np.exp(v).sum(-1, keepdims=True))
        return Arr(v.astype(NP_DTYPE[dtype]), dtype)

    padded = Arr(np.array([[1, 2, 2], [1, 3, 0]]), "int64")
    concat = Arr(np.array([1, 2, 2, 1, 3]), "int64")
    il, tl = Arr(np.array([6, 5]), "int64"), Arr(np.array([3, 2]), "int64")
    out = [Sample((lp(6, 2, 4), padded, il, tl), {"reduction": r}, desc=f"reduction={r}") for r in REDUCTIONS]
    out += [
        Sample((lp(6, 2, 4), concat, il, tl), desc="concatenated targets"),
        Sample((lp(6, 2, 4), Arr(np.array([[2, 2, 2], [1, 3, 0]]), "int32"), Arr(np.array([6, 5]), "int32"),
                Arr(np.array([3, 2]), "int32")), {"reduction": "sum"}, desc="int32, repeated labels"),
        Sample((lp(5, 2, 4), Arr(np.array([[1, 2], [3, 3]]), "int64"), Arr(np.array([5, 5]), "int64"),
                Arr(np.array([2, 2]), "int64")), {"blank": 3 - 3}, desc="blank 0 explicit"),
        Sample((lp(5, 2, 4), Arr(np.array([[0, 2], [1, 1]]), "int64"), Arr(np.array([5, 5]), "int64"),
                Arr(np.array([2, 2]), "int64")), {"blank": 3}, desc="blank 3"),
        Sample((lp(2, 2, 4), padded, Arr(np.array([2, 2]), "int64"), tl), {"reduction": "none"},
               desc="impossible alignment (inf)"),
        Sample((lp(2, 2, 4), padded, Arr(np.array([2, 2]), "int64"), tl),
               {"reduction": "mean", "zero_infinity": True}, desc="zero_infinity"),
        Sample((lp(6, 2, 4), padded, Arr(np.array([7, 5]), "int64"), tl), desc="input length too long"),
    ]
    return out


add(_loss("ctc_loss", ctc_samples, dtypes=_F32_64, ref=_long_targets("ctc_loss", 1, 2, 3),
          tol={"float32": (1e-4, 1e-5)}))


# ---- distances, margins ------------------------------------------------------------------


def pairwise_distance_samples(dtype, rng):
    x = lambda s: arr(rng, s, dtype)  # noqa: E731
    out = [
        Sample((x((3, 4)), x((3, 4))), desc="p=2"),
        Sample((x((3, 4)), x((4,))), {"p": 1.0}, desc="p=1 broadcast"),
        Sample((x((3, 4)), x((3, 4))), {"p": 3.0, "keepdim": True}, desc="p=3 keepdim"),
        Sample((x((3, 4)), x((3, 4))), {"p": float("inf")}, desc="p=inf"),
        Sample((x((3, 4)), x((3, 4))), {"p": 0.0}, desc="p=0"),
        Sample((x((2, 3, 4)), x((2, 3, 4))), {"eps": 0.1}, desc="3-d eps"),
        Sample((x((4,)), x((4,))), desc="1-d"),
        Sample((x((0, 4)), x((0, 4))), desc="zero-size"),
    ]
    return out


def cosine_similarity_samples(dtype, rng):
    x = lambda s: arr(rng, s, dtype)  # noqa: E731
    return [
        Sample((x((3, 4)), x((3, 4))), desc="dim=1"),
        Sample((x((3, 4)), x((4,))), {"dim": -1}, desc="broadcast dim=-1"),
        Sample((x((2, 3, 4)), x((2, 3, 4))), {"dim": 0}, desc="dim=0"),
        Sample((x((4,)), x((4,))), {"dim": 0}, desc="1-d"),
        Sample((x((3, 4)), const(np.zeros((3, 4)), dtype)), desc="zero vector (eps)"),
        Sample((x((3, 4)), x((3, 4))), {"dim": 2}, desc="bad dim"),
        Sample((x((3, 4)), x((3,))), desc="shape mismatch"),
    ]


def combined_margin_ref(torch):
    # OneFlow's definition: cos(m1 acos(x) + m2) - m3 at each row's label column.
    def f(x, label, m1=1.0, m2=0.0, m3=0.0):
        cols = torch.arange(x.shape[1])
        mask = cols[None, :] == label.long()[:, None]
        return torch.where(mask, torch.cos(m1 * torch.acos(x) + m2) - m3, x)

    return f


def combined_margin_samples(dtype, rng):
    x = lambda s: arr(rng, s, dtype, Domain(-0.95, 0.95))  # noqa: E731
    return [
        Sample((x((4, 5)), _ints(rng, (4,), 5)), {"m1": 0.3, "m2": 0.5, "m3": 0.4}, desc="all margins"),
        Sample((x((4, 5)), _ints(rng, (4,), 5, "int32"), 1.0, 0.5, 0.0), desc="arcface"),
        Sample((x((4, 5)), _ints(rng, (4,), 5)), {"m1": 1.0, "m2": 0.0, "m3": 0.35}, desc="cosface"),
        Sample((x((0, 5)), _ints(rng, (0,), 5)), {"m1": 0.5}, desc="zero rows"),
    ]


add(
    OpInfo("pairwise_distance", "loss", FLOATS + COMPLEX, pairwise_distance_samples, tol=_TOL, method=""),
    OpInfo("cosine_similarity", "loss", FLOATS, cosine_similarity_samples, tol=_TOL, method=""),
    OpInfo("combined_margin_loss", "loss", FLOATS, combined_margin_samples, fn=_F("combined_margin_loss"),
           ref=combined_margin_ref, method="", tol=_TOL),
)


# ---- composites --------------------------------------------------------------------------


def hinge_samples(dtype, rng):
    x = lambda s: arr(rng, s, dtype)  # noqa: E731
    out = [Sample((x((3, 4)), _signs(rng, (3, 4), dtype)), {"reduction": r}, desc=f"reduction={r}")
           for r in REDUCTIONS]
    out.append(Sample((x((3, 4)), _signs(rng, (3, 4), dtype)), {"margin": 2.0}, desc="margin"))
    return out


def cosine_embedding_samples(dtype, rng):
    x = lambda s: arr(rng, s, dtype)  # noqa: E731
    out = [Sample((x((3, 4)), x((3, 4)), _signs(rng, (3,), dtype)), {"reduction": r}, desc=f"reduction={r}")
           for r in REDUCTIONS]
    out += [
        Sample((x((3, 4)), x((3, 4)), _signs(rng, (3,), dtype)), {"margin": 0.2}, desc="margin"),
        Sample((x((4,)), x((4,)), _signs(rng, (), dtype)), desc="1-d"),
    ]
    return out


def mlsm_samples(dtype, rng):
    x = lambda s: arr(rng, s, dtype)  # noqa: E731
    y = lambda s: Arr((rng.random(s) < 0.5).astype(NP_DTYPE[dtype]), dtype)  # noqa: E731
    out = [Sample((x((3, 4)), y((3, 4))), {"reduction": r}, desc=f"reduction={r}") for r in REDUCTIONS]
    out.append(Sample((x((3, 4)), y((3, 4)), arr(rng, (4,), dtype, Domain(0.2, 2.0))), desc="weight"))
    return out


def poisson_samples(dtype, rng):
    x = lambda s: arr(rng, s, dtype, Domain(-2.0, 2.0))  # noqa: E731
    pos = lambda s: arr(rng, s, dtype, Domain(0.1, 4.0))  # noqa: E731
    out = [Sample((x((3, 4)), pos((3, 4))), {"reduction": r}, desc=f"reduction={r}") for r in REDUCTIONS]
    out += [
        Sample((pos((3, 4)), pos((3, 4))), {"log_input": False}, desc="log_input=False"),
        Sample((x((3, 4)), pos((3, 4))), {"full": True}, desc="full"),
        Sample((pos((3, 4)), pos((3, 4))), {"log_input": False, "full": True, "eps": 1e-4}, desc="full eps"),
    ]
    return out


def gaussian_samples(dtype, rng):
    x = lambda s: arr(rng, s, dtype)  # noqa: E731
    v = lambda s: arr(rng, s, dtype, Domain(0.1, 2.0))  # noqa: E731
    out = [Sample((x((3, 4)), x((3, 4)), v((3, 4))), {"reduction": r}, desc=f"reduction={r}") for r in REDUCTIONS]
    out += [
        Sample((x((3, 4)), x((3, 4)), v((3,))), desc="one var per sample"),
        Sample((x((3, 4)), x((3, 4)), v((3, 1))), {"full": True}, desc="var (3,1) full"),
        Sample((x((3, 4)), x((3, 4)), const(np.full((3, 4), 1e-8), dtype)), {"eps": 1e-2}, desc="var clamped"),
        Sample((x((3, 4)), x((3, 4)), v((2,))), desc="var size"),
        Sample((x((3, 4)), x((3, 4)), const(-np.ones((3, 4)), dtype)), desc="negative var"),
    ]
    return out


def triplet_samples(dtype, rng):
    x = lambda s: arr(rng, s, dtype)  # noqa: E731
    out = [Sample((x((3, 4)), x((3, 4)), x((3, 4))), {"reduction": r}, desc=f"reduction={r}")
           for r in REDUCTIONS]
    out += [
        Sample((x((3, 4)), x((3, 4)), x((3, 4))), {"swap": True, "margin": 2.0}, desc="swap"),
        Sample((x((3, 4)), x((3, 4)), x((3, 4))), {"p": 1.0, "eps": 1e-3}, desc="p=1"),
        Sample((x((4,)), x((4,)), x((4,))), desc="1-d"),
        Sample((x((3, 4)), x((4,)), x((3, 4))), desc="dims mismatch"),
    ]
    return out


add(
    _loss("hinge_embedding_loss", hinge_samples),
    _loss("cosine_embedding_loss", cosine_embedding_samples),
    _loss("multilabel_soft_margin_loss", mlsm_samples),
    _loss("poisson_nll_loss", poisson_samples),
    _loss("gaussian_nll_loss", gaussian_samples),
    # distances fused in float32 and rounded once (pairwise_distance); torch's half chain rounds
    # every step, 16 ulps away on the "1-d" sample.
    _loss("triplet_margin_loss", triplet_samples, ref=half_via_float("triplet_margin_loss")),
)


# ---- backward ops (not public: flow._C.X_backward) ---------------------------------------


def _vjp_of(name, index_args=(1,)):
    """torch reference of X_backward(grad, *inputs): the VJP of F.name at the inputs, built with
    create_graph so that it is differentiable again."""

    def ref(torch):
        f = _long_targets(name, *index_args)(torch)

        def g(grad, x, *rest, **kw):
            x2 = x if x.requires_grad else x.detach().requires_grad_(True)
            with torch.enable_grad():
                y = f(x2, *rest, **kw)
                (gx,) = torch.autograd.grad(y, x2, grad, create_graph=grad.requires_grad or x.requires_grad)
            return gx

        return g

    return ref


def ce_backward_samples(dtype, rng):
    x = lambda s: arr(rng, s, dtype)  # noqa: E731
    g = lambda s: arr(rng, s, dtype, Domain(-1.0, 1.0))  # noqa: E731
    w = Arr(np.linspace(0.5, 1.5, 5).astype(NP_DTYPE[dtype]), dtype)
    t = _ints(rng, (4,), 5)
    ignored = Arr(np.array([0, -100, 4, 2]), "int64")
    q = arr(rng, (4, 5), dtype, Domain(0.0, 1.0))
    return [
        Sample((g(()), x((4, 5)), t, None, -100, "mean", 0.0), desc="mean"),
        Sample((g((4,)), x((4, 5)), ignored, w, -100, "none", 0.0), desc="none weight ignored"),
        Sample((g(()), x((4, 5)), t, w, -100, "sum", 0.2), desc="sum smoothing weight"),
        Sample((g((2, 3)), x((2, 5, 3)), _ints(rng, (2, 3), 5), None, -100, "none", 0.1), desc="3-d"),
        Sample((g(()), x((4, 5)), q, None, -100, "mean", 0.0), desc="probability target"),
        Sample((g((4,)), x((4, 5)), q, w, -100, "none", 0.3), desc="prob none weight smoothing"),
    ]


def _ce_backward_ref(torch):
    def f(grad, x, target, weight, ignore_index, reduction, ls):
        x2 = x if x.requires_grad else x.detach().requires_grad_(True)
        tgt = target if target.is_floating_point() else target.long()
        with torch.enable_grad():
            y = torch.nn.functional.cross_entropy(x2, tgt, weight, ignore_index=ignore_index,
                                                  reduction=reduction, label_smoothing=ls)
            need = grad.requires_grad or x.requires_grad or tgt.requires_grad
            (gx,) = torch.autograd.grad(y, x2, grad, create_graph=need)
        return gx

    return f


def nll_backward_samples(dtype, rng):
    g = lambda s: arr(rng, s, dtype, Domain(-1.0, 1.0))  # noqa: E731
    w = Arr(np.linspace(0.5, 1.5, 5).astype(NP_DTYPE[dtype]), dtype)
    return [
        Sample((g(()), _ints(rng, (4,), 5), None, (4, 5), -100, "mean"), desc="mean"),
        Sample((g((4,)), Arr(np.array([0, -100, 4, 2]), "int64"), w, (4, 5), -100, "none"), desc="none"),
        Sample((g(()), _ints(rng, (2, 3), 5), w, (2, 5, 3), -100, "sum"), desc="3-d sum"),
    ]


def _nll_backward_ref(torch):
    def f(grad, target, weight, sizes, ignore_index, reduction):
        x = torch.zeros(sizes, dtype=grad.dtype, requires_grad=True)
        with torch.enable_grad():
            y = torch.nn.functional.nll_loss(x, target.long(), weight, ignore_index=ignore_index,
                                             reduction=reduction)
            (gx,) = torch.autograd.grad(y, x, grad, create_graph=grad.requires_grad)
        return gx

    return f


add(
    OpInfo("cross_entropy_backward", "loss_backward", FLOATS, ce_backward_samples,
           fn=lambda lib: lib._C.cross_entropy_backward, ref=_ce_backward_ref, method="", tol=_TOL),
    OpInfo("nll_loss_backward", "loss_backward", FLOATS, nll_backward_samples,
           fn=lambda lib: lib._C.nll_loss_backward, ref=_nll_backward_ref, method="", tol=_TOL),
    OpInfo("multi_margin_loss_backward", "loss_backward", _F32_64,
           lambda dtype, rng: [Sample((arr(rng, (), dtype), arr(rng, (3, 4), dtype), _ints(rng, (3,), 4),
                                       2, 0.5, None, "mean"), desc="p=2 mean")],
           fn=lambda lib: lib._C.multi_margin_loss_backward,
           ref=lambda torch: lambda g, x, t, p, m, w, r: _vjp_of("multi_margin_loss")(torch)(
               g, x, t, p, m, w, reduction=r), method="", tol=_TOL),
    OpInfo("multilabel_margin_loss_backward", "loss_backward", _F32_64,
           lambda dtype, rng: [Sample((arr(rng, (3,), dtype), arr(rng, (3, 4), dtype),
                                       Arr(np.array([[3, 0, -1, 1], [1, 2, 3, 0], [-1, 0, 0, 0]]), "int64"),
                                       "none"), desc="none")],
           fn=lambda lib: lib._C.multilabel_margin_loss_backward,
           ref=lambda torch: lambda g, x, t, r: _vjp_of("multilabel_margin_loss")(torch)(g, x, t, reduction=r),
           method="", tol=_TOL),
    OpInfo("ctc_loss_backward", "loss_backward", _F32_64,
           lambda dtype, rng: [Sample((arr(rng, (2,), dtype),) + ctc_samples(dtype, rng)[0].args + (0, "none", False),
                                      desc="none")],
           fn=lambda lib: lib._C.ctc_loss_backward,
           ref=lambda torch: lambda g, lp, t, il, tl, b, r, z: _vjp_of("ctc_loss", (1, 2, 3))(torch)(
               g, lp, t, il, tl, b, r, z), method="", tol={"float32": (1e-4, 1e-5)}),
)
