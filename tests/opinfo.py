"""The op-sample table: one OpInfo per op name, in the spirit of PyTorch's OpInfo.

Each entry says how to call the op in flow and in torch (functional form,
Tensor-method form, Python operator), which dtypes it supports, how to make
sample inputs for a dtype (values kept inside the op's domain), the tolerance
per dtype, and whether an in-place ``X_`` variant exists.

Samples are framework-neutral: tensor arguments are ``Arr`` (numpy values and
a dtype name) and dtype arguments are ``DT``; ``materialize`` turns them into
flow or torch objects, optionally as non-contiguous views or on the meta
device.  The reference is always torch run on the same dtype.

This module only needs numpy (and torch for the reference callables); it does
not import flow, so it can be inspected without the package built.
"""

import operator
import zlib
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import numpy as np

BOOL = ("bool",)
INTS = ("int8", "uint8", "int32", "int64")
FLOATS = ("float16", "bfloat16", "float32", "float64")
NUMBER = INTS + FLOATS
ALL = BOOL + NUMBER
INT_LIKE = BOOL + INTS
MATMUL_DTYPES = ("float32", "float64")

from harness import NP_DTYPE  # noqa: E402  (one dtype map for all tests)

# ---------------------------------------------------------------------------
# Sample description


@dataclass(frozen=True, eq=False)
class Arr:
    """A tensor argument: its values (numpy) and its dtype name."""

    value: np.ndarray
    dtype: str

    def __post_init__(self):
        # numpy arithmetic on 0-d arrays yields numpy scalars; keep an ndarray
        # so every tensor is built from an array (scalars are a separate path).
        object.__setattr__(self, "value", np.asarray(self.value))

    @property
    def shape(self):
        return self.value.shape


@dataclass(frozen=True)
class DT:
    """A dtype argument, by name (``DT("float32")`` -> ``flow.float32``)."""

    name: str


@dataclass(eq=False)
class Sample:
    args: tuple
    kwargs: dict = field(default_factory=dict)
    desc: str = ""
    # Which call forms apply: "fn" (flow.X), "method" (x.X), "op" (a + b).
    # None means every form the OpInfo has.
    forms: Optional[tuple] = None
    # Exception classes accepted from flow where torch raises; None: the
    # builtin family of torch's exception.  torch itself is inconsistent for
    # some cases (reducing an empty dim: IndexError or RuntimeError).
    error_types: Optional[tuple] = None


@dataclass(eq=False)
class OpInfo:
    name: str
    kind: str
    dtypes: tuple
    samples: Callable[[str, np.random.Generator], list]
    # lib -> callable, for the functional form; None when there is none.
    fn: Optional[Callable[[Any], Callable]] = None
    # torch -> callable computing the reference; defaults to fn(torch).
    ref: Optional[Callable[[Any], Callable]] = None
    method: Optional[str] = None  # Tensor-method name; "" for none
    operator: Optional[Callable] = None  # Python operator form, if any
    inplace: bool = False  # does x.X_(...) exist
    tol: dict = field(default_factory=dict)  # dtype -> (rtol, atol) overrides
    values: bool = True  # False: only shape/dtype are defined (empty, empty_like)
    # Creation/random ops take ``device=`` themselves; for the meta test.
    takes_device: bool = False
    # dtypes where OneFlow's defined result differs from torch's (the
    # reference then adapts torch's answer); skipped under the torch shim.
    oneflow_dtypes: tuple = ()

    def __post_init__(self):
        if self.fn is None:
            name = self.name
            self.fn = lambda lib: getattr(lib, name)
        elif self.fn is False:
            self.fn = None
        # With the default reference, the method form is checked against
        # torch's own method (varargs like x.reshape(4, 6) need it).
        self.ref_is_default = self.ref is None
        if self.ref is None:
            fn = self.fn
            name = self.name
            self.ref = fn if fn is not None else (lambda torch: getattr(torch, name))
        if self.method is None:
            self.method = self.name

    def has_form(self, form, sample):
        if sample.forms is not None and form not in sample.forms:
            return False
        if form == "fn":
            return self.fn is not None
        if form == "method":
            return bool(self.method) and bool(sample.args) and isinstance(sample.args[0], Arr)
        if form == "op":
            return self.operator is not None and not sample.kwargs
        raise ValueError(form)

    def sample_list(self, dtype):
        rng = np.random.default_rng(zlib.crc32(f"{self.name}/{dtype}".encode()))
        return self.samples(dtype, rng)

    def __repr__(self):
        return f"OpInfo({self.name})"


# ---------------------------------------------------------------------------
# Turning samples into tensors


def _lib_dtype(lib, name):
    return getattr(lib, name)


def make_tensor(lib, arr, layout="contiguous", device=None, return_base=False):
    """``arr`` as a ``lib`` tensor.

    layout "noncontig": for ndim >= 1 the tensor is a step-2 slice along dim 0
    of a larger buffer, and for ndim >= 2 additionally a transpose of the last
    two dims, so element strides are neither C-ordered nor dense.
    device "meta": same shapes/strides, no data.
    """
    value = arr.value
    nd = value.ndim
    if layout == "contiguous" or nd == 0:
        base_np = value
    else:
        base_np = np.swapaxes(value, -1, -2) if nd >= 2 else value
        # Interleave each row with a copy of itself, so the view sees
        # the values and the skipped rows are still inside the op's domain.
        base_np = np.repeat(base_np, 2, axis=0)
    if device == "meta":
        base = lib.empty(base_np.shape, dtype=_lib_dtype(lib, arr.dtype), device="meta")
    else:
        base = lib.tensor(base_np.copy(order="C"))  # (ascontiguousarray makes 0-d 1-d)
        if arr.dtype == "bfloat16":
            base = base.to(lib.bfloat16)
    t = base
    if layout != "contiguous" and nd >= 1:
        t = t[::2]
        if nd >= 2:
            t = t.transpose(-1, -2)
    return (t, base) if return_base else t


def materialize(obj, lib, layout="contiguous", device=None):
    """Replace Arr/DT leaves of a sample argument by ``lib`` objects."""
    if isinstance(obj, Arr):
        return make_tensor(lib, obj, layout, device)
    if isinstance(obj, DT):
        return _lib_dtype(lib, obj.name)
    if isinstance(obj, list):
        return [materialize(o, lib, layout, device) for o in obj]
    if isinstance(obj, tuple):
        return tuple(materialize(o, lib, layout, device) for o in obj)
    if isinstance(obj, dict):
        return {k: materialize(v, lib, layout, device) for k, v in obj.items()}
    return obj


def arrs_in(obj):
    """Every Arr inside a sample argument structure."""
    if isinstance(obj, Arr):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [a for o in obj for a in arrs_in(o)]
    if isinstance(obj, dict):
        return [a for o in obj.values() for a in arrs_in(o)]
    return []


# ---------------------------------------------------------------------------
# Value generation


@dataclass(frozen=True)
class Domain:
    """Where sample values come from: [lo, hi] for floats, [ilo, ihi] for ints."""

    lo: float = -5.0
    hi: float = 5.0
    ilo: int = -9
    ihi: int = 9
    nonzero: bool = False  # divisors: no zeros (|x| >= 0.25 for floats)


DEFAULT = Domain()
POSITIVE = Domain(0.1, 10.0, 1, 9)
UNIT = Domain(-0.9, 0.9, -1, 1)  # asin, acos, atanh
GE_ONE = Domain(1.0, 10.0, 1, 9)  # acosh
NONZERO = Domain(nonzero=True)


def gen_values(rng, shape, dtype, dom=DEFAULT):
    if dtype == "bool":
        v = np.ones(shape, bool) if dom.nonzero else rng.random(shape) < 0.5
        return v
    if dtype in INTS:
        lo = max(dom.ilo, 0) if dtype == "uint8" else dom.ilo
        v = rng.integers(lo, dom.ihi + 1, size=shape)
        if dom.nonzero:
            v = np.where(v == 0, max(lo, 1) if lo >= 0 else (1 if dom.ihi >= 1 else -1), v)
        return v.astype(NP_DTYPE[dtype])
    v = rng.uniform(dom.lo, dom.hi, size=shape)
    if dom.nonzero:
        v = np.where(np.abs(v) < 0.25, np.where(v < 0, -0.5, 0.5), v)
    return np.asarray(v, dtype=NP_DTYPE[dtype])


def arr(rng, shape, dtype, dom=DEFAULT):
    return Arr(gen_values(rng, shape, dtype, dom), dtype)


def const(values, dtype):
    return Arr(np.asarray(values, dtype=NP_DTYPE[dtype]), dtype)


def distinct(rng, shape, dtype):
    """Values without ties (so argmax/max-with-dim indices are unambiguous)."""
    n = int(np.prod(shape))
    perm = rng.permutation(n).reshape(shape)
    if dtype == "uint8":
        return Arr(perm.astype(np.uint8), dtype)
    if dtype in INTS:
        return Arr((perm - n // 2).astype(NP_DTYPE[dtype]), dtype)
    # Halves are exact in every float dtype for these small magnitudes.
    return Arr(((perm - n // 2) * 0.5).astype(NP_DTYPE[dtype]), dtype)


# Float values whose results are edge cases worth pinning: signed zero,
# infinities, NaN.
SPECIALS = [0.0, -0.0, float("inf"), float("-inf"), float("nan"), 1.0, -1.0, 0.5]

# ---------------------------------------------------------------------------
# Sample generators

UNARY_SHAPES = [(), (5,), (3, 4), (2, 3, 4), (0, 3)]


def unary_samples(dom=DEFAULT, specials=False, halves=False):
    def gen(dtype, rng):
        out = [Sample((arr(rng, s, dtype, dom),), desc=f"shape{s}") for s in UNARY_SHAPES]
        if specials and dtype in FLOATS:
            out.append(Sample((const(SPECIALS, dtype),), desc="specials"))
        if halves and dtype in FLOATS:
            # Round-half-to-even is what torch (and IEEE nearbyint) does.
            v = [-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 0.49, -0.51, 4.0]
            out.append(Sample((const(v, dtype),), desc="halves"))
        return out

    return gen


def _partner(dtype, dtypes):
    """A different supported dtype to mix with ``dtype`` (cyclic successor).

    The order puts uint8 right after int8 so the uint8/int8 -> int32 rule
    (no int16 here) is exercised by every binary op taking integers.
    """
    i = dtypes.index(dtype)
    return dtypes[(i + 1) % len(dtypes)]


def binary_samples(
    dom_x=DEFAULT,
    dom_y=DEFAULT,
    scalars=(2, -1.5),
    scalar_first=(3,),
    alpha=False,
    dtypes=ALL,
    specials=None,
):
    """Samples for a broadcasting binary op.

    ``scalars``: Python numbers used as the second operand; ``scalar_first``:
    used as the first operand (forms torch does not accept are skipped by the
    tests).  ``specials``: list of (x_values, y_values) float edge cases.
    """

    def gen(dtype, rng):
        def x(shape, d=dtype):
            return arr(rng, shape, d, dom_x)

        def y(shape, d=dtype):
            return arr(rng, shape, d, dom_y)

        # Same-shape operands share about half their entries, so that
        # comparisons see equal pairs and not only strict orderings.
        a = x((3, 4))
        b = y((3, 4))
        mask = rng.random((3, 4)) < 0.5
        shared_ok = _in_domain(a.value, dtype, dom_y)
        bv = np.where(mask & shared_ok, a.value, b.value).astype(b.value.dtype)
        out = [
            Sample((a, Arr(bv, dtype)), desc="same shape"),
            Sample((x((3, 1)), y((1, 4))), desc="broadcast (3,1)x(1,4)"),
            Sample((x((2, 3, 4)), y((4,))), desc="broadcast (2,3,4)x(4,)"),
            Sample((x((4,)), y((2, 3, 4))), desc="broadcast (4,)x(2,3,4)"),
            Sample((x(()), y((3,))), desc="0-d x (3,)"),
            Sample((x((3,)), y(())), desc="(3,) x 0-d"),
            Sample((x(()), y(())), desc="0-d x 0-d"),
            Sample((x((0, 3)), y((3,))), desc="zero-size (0,3)x(3,)"),
        ]
        for s in scalars:
            if _scalar_ok(s, dtype, dom_y):
                out.append(Sample((x((2, 3)), s), desc=f"tensor x scalar {s!r}"))
        for s in scalar_first:
            if _scalar_ok(s, dtype, dom_x):
                out.append(Sample((s, y((2, 3))), desc=f"scalar {s!r} x tensor"))
        if len(dtypes) > 1:
            p = _partner(dtype, dtypes)
            out.append(Sample((x((2, 3)), y((2, 3), p)), desc=f"mixed {dtype} x {p}"))
            out.append(Sample((x((2, 3), p), y((2, 3))), desc=f"mixed {p} x {dtype}"))
        if alpha and dtype != "bool":
            al = 2 if dtype in INTS else 0.5
            out.append(Sample((x((2, 3)), y((2, 3))), {"alpha": al}, desc=f"alpha={al}"))
        if specials and dtype in FLOATS:
            for xs, ys in specials:
                out.append(Sample((const(xs, dtype), const(ys, dtype)), desc="specials"))
        return out

    return gen


def _in_domain(v, dtype, dom):
    """Which entries of ``v`` may also serve as the other operand (divisors!)."""
    if dom.nonzero:
        return v != 0
    if dtype in FLOATS:
        return (v >= dom.lo) & (v <= dom.hi)
    if dtype in INTS:
        return (v >= dom.ilo) & (v <= dom.ihi)
    return np.ones(v.shape, bool)


def _scalar_ok(s, dtype, dom):
    if dom.nonzero and s == 0:
        return False
    # A negative Python int meeting a uint8 tensor is converted to uint8 first
    # (wraps to 253...); a legal but obscure corner, kept out of the samples.
    if dtype == "uint8" and not isinstance(s, bool) and isinstance(s, int) and s < 0:
        return False
    return True


def clamp_samples(dtype, rng):
    lo, hi = (-3, 4) if dtype in INTS else (-1.5, 2.0)
    if dtype == "uint8":
        lo = 2
    out = []
    for s in [(3, 4), (), (0, 3)]:
        out.append(Sample((arr(rng, s, dtype),), {"min": lo, "max": hi}, desc=f"min/max {s}"))
    out.append(Sample((arr(rng, (3, 4), dtype),), {"min": lo}, desc="min only"))
    out.append(Sample((arr(rng, (3, 4), dtype),), {"max": hi}, desc="max only"))
    out.append(Sample((arr(rng, (2, 5), dtype), lo, hi), desc="positional"))
    return out


def where_samples(dtype, rng):
    def c(shape):
        return Arr(rng.random(shape) < 0.5, "bool")

    p = _partner(dtype, ALL)
    scalar = True if dtype == "bool" else 2
    return [
        Sample((c((3, 4)), arr(rng, (3, 4), dtype), arr(rng, (3, 4), dtype)), desc="same"),
        Sample((c((3, 1)), arr(rng, (1, 4), dtype), arr(rng, (), dtype)), desc="broadcast"),
        Sample((c(()), arr(rng, (2, 3), dtype), arr(rng, (2, 3), dtype)), desc="0-d cond"),
        Sample((c((0, 3)), arr(rng, (0, 3), dtype), arr(rng, (3,), dtype)), desc="zero-size"),
        Sample((c((2, 3)), arr(rng, (2, 3), dtype), scalar), desc="scalar y"),
        Sample((c((2, 3)), arr(rng, (2, 3), dtype), arr(rng, (2, 3), p)), desc=f"mixed {p}"),
    ]


# Reductions: (shape, kwargs) combinations.  Keep dims small.
def reduction_samples(dom=DEFAULT, tuple_dims=True, has_dim=True, distinct_values=False,
                      binary_form=False, dtype_kw=()):
    def gen(dtype, rng):
        def x(shape):
            if distinct_values and dtype != "bool":
                return distinct(rng, shape, dtype)
            return arr(rng, shape, dtype, dom)

        empty_err = (IndexError, RuntimeError)
        out = [
            Sample((x((2, 3, 4)),), desc="full"),
            Sample((x(()),), desc="0-d full"),
            Sample((x((0, 3)),), desc="zero-size full", error_types=empty_err),
            Sample((x((5,)),), desc="1-d full"),
        ]
        if has_dim:
            out += [
                Sample((x((2, 3, 4)), 1), desc="dim=1 positional"),
                Sample((x((2, 3, 4)),), {"dim": -1}, desc="dim=-1"),
                Sample((x((2, 3, 4)),), {"dim": 0, "keepdim": True}, desc="dim=0 keepdim"),
                Sample((x((5,)),), {"dim": 0}, desc="1-d dim=0"),
                Sample((x(()),), {"dim": 0}, desc="0-d dim=0"),
                Sample((x((0, 3)),), {"dim": 1}, desc="zero-size dim=1"),
                Sample((x((0, 3)),), {"dim": 0}, desc="zero-size dim=0 (reduces the empty dim)",
                       error_types=empty_err),
                Sample((x((3, 1)),), {"dim": 1, "keepdim": True}, desc="size-1 dim"),
            ]
        if binary_form:
            # max(x, other) is maximum(x, other)
            out.append(Sample((x((2, 3)), arr(rng, (2, 3), dtype, dom)), desc="binary form"))
            out.append(Sample((x((2, 3)), arr(rng, (3,), dtype, dom)), desc="binary form, broadcast"))
        for d in dtype_kw:
            out.append(Sample((x((2, 3)),), {"dtype": DT(d)}, desc=f"dtype={d}"))
            out.append(Sample((x((2, 3)),), {"dim": 1, "dtype": DT(d)}, desc=f"dim=1 dtype={d}"))
        if tuple_dims:
            out += [
                Sample((x((2, 3, 4)),), {"dim": (0, 2)}, desc="dim=(0,2)"),
                Sample((x((2, 3, 4)),), {"dim": (-1, 0), "keepdim": True}, desc="dim=(-1,0) keepdim"),
            ]
        return out

    return gen


def matmul_samples(dtype, rng):
    d = Domain(-1.0, 1.0)
    pairs = [
        ((4,), (4,)),
        ((3, 4), (4,)),
        ((4,), (4, 5)),
        ((3, 4), (4, 5)),
        ((1, 1), (1, 1)),
        ((2, 3, 4), (2, 4, 5)),
        ((2, 1, 3, 4), (5, 4, 2)),
        ((2, 3, 4), (4, 5)),
        ((3, 4), (2, 4, 5)),
        ((4,), (2, 4, 3)),
        ((0, 3), (3, 4)),
        ((2, 0), (0, 3)),
    ]
    return [Sample((arr(rng, a, dtype, d), arr(rng, b, dtype, d)), desc=f"{a}@{b}") for a, b in pairs]


def mm_samples(dtype, rng):
    d = Domain(-1.0, 1.0)
    pairs = [((3, 4), (4, 5)), ((1, 7), (7, 1)), ((0, 3), (3, 2)), ((2, 0), (0, 3)), ((5, 2), (2, 6))]
    return [Sample((arr(rng, a, dtype, d), arr(rng, b, dtype, d)), desc=f"{a}@{b}") for a, b in pairs]


def bmm_samples(dtype, rng):
    d = Domain(-1.0, 1.0)
    pairs = [((2, 3, 4), (2, 4, 5)), ((3, 1, 1), (3, 1, 1)), ((0, 3, 4), (0, 4, 2)), ((2, 2, 0), (2, 0, 3))]
    return [Sample((arr(rng, a, dtype, d), arr(rng, b, dtype, d)), desc=f"{a}@{b}") for a, b in pairs]


# ---- shape / view ops ---------------------------------------------------


def _s(args, kwargs=None, desc="", forms=None):
    return Sample(tuple(args), kwargs or {}, desc, forms)


def reshape_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)  # noqa: E731
    return [
        _s([a((2, 3, 4)), (6, 4)], desc="(2,3,4)->(6,4)"),
        _s([a((2, 3, 4)), (-1,)], desc="flatten via -1"),
        _s([a((2, 3, 4)), (4, -1, 2)], desc="inferred middle"),
        _s([a(()), (1,)], desc="0-d -> (1,)"),
        _s([a((1,)), ()], desc="(1,) -> 0-d"),
        _s([a((0, 3)), (3, 0)], desc="zero-size"),
        _s([a((2, 3, 4)), 4, 6], desc="varargs", forms=("method",)),
    ]


def flatten_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)  # noqa: E731
    return [
        _s([a((2, 3, 4))], desc="all"),
        _s([a((2, 3, 4))], {"start_dim": 1}, desc="start_dim=1"),
        _s([a((2, 3, 4, 5))], {"start_dim": 1, "end_dim": 2}, desc="middle"),
        _s([a((2, 3, 4))], {"start_dim": -2}, desc="negative start"),
        _s([a(())], desc="0-d -> (1,)"),
        _s([a((0, 3))], desc="zero-size"),
    ]


def squeeze_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)  # noqa: E731
    return [
        _s([a((1, 3, 1, 4))], desc="all"),
        _s([a((1, 3, 1, 4)), 0], desc="dim 0"),
        _s([a((1, 3, 1, 4)), -2], desc="dim -2"),
        _s([a((1, 3, 1, 4)), 1], desc="non-1 dim is a no-op"),
        _s([a((1, 3, 1, 4)), (0, 2)], desc="tuple of dims"),
        _s([a((1, 1))], desc="all ones -> 0-d"),
        _s([a(())], desc="0-d"),
        _s([a((0, 1, 3))], desc="zero-size"),
    ]


def unsqueeze_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)  # noqa: E731
    return [
        _s([a((3, 4)), 0], desc="front"),
        _s([a((3, 4)), -1], desc="back"),
        _s([a((3, 4)), 1], desc="middle"),
        _s([a(()), 0], desc="0-d"),
        _s([a((0, 3)), 1], desc="zero-size"),
    ]


def transpose_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)  # noqa: E731
    return [
        _s([a((2, 3, 4)), 0, 2], desc="0,2"),
        _s([a((2, 3, 4)), 1, -1], desc="1,-1"),
        _s([a((3, 4)), 0, 1], desc="2-d"),
        _s([a((5,)), 0, 0], desc="1-d"),
        _s([a((0, 3)), 0, 1], desc="zero-size"),
    ]


def permute_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)  # noqa: E731
    return [
        _s([a((2, 3, 4)), (2, 0, 1)], desc="tuple"),
        _s([a((2, 3, 4)), (-1, 0, 1)], desc="negative"),
        _s([a((2, 3, 4)), 1, 2, 0], desc="varargs", forms=("method",)),
        _s([a(()), ()], desc="0-d"),
        _s([a((0, 3)), (1, 0)], desc="zero-size"),
    ]


def expand_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)  # noqa: E731
    # torch has no functional torch.expand; the method is the API.
    return [
        _s([a((3, 1)), 3, 4], desc="(3,1)->(3,4)"),
        _s([a((3, 1)), (2, 3, 5)], desc="new leading dim, tuple"),
        _s([a((3, 1)), -1, 4], desc="-1 keeps size"),
        _s([a(()), 2, 3], desc="0-d"),
        _s([a((1, 3)), 0, 3], desc="to zero-size"),
    ]


def contiguous_samples(dtype, rng):
    return [_s([arr(rng, s, dtype)], desc=f"{s}") for s in [(3, 4), (2, 3, 4), (), (0, 3)]]


def narrow_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)  # noqa: E731
    return [
        _s([a((4, 5)), 0, 1, 2], desc="dim 0"),
        _s([a((4, 5)), -1, 2, 3], desc="dim -1"),
        _s([a((4, 5)), 1, 0, 0], desc="zero length"),
        _s([a((2, 3, 4)), 1, 1, 2], desc="3-d middle"),
    ]


def cat_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)  # noqa: E731
    return [
        _s([[a((2, 3)), a((4, 3))]], desc="dim 0"),
        _s([[a((2, 3)), a((2, 1)), a((2, 2))]], {"dim": 1}, desc="dim 1, three"),
        _s([[a((2, 3, 4)), a((2, 3, 1))], -1], desc="dim -1 positional"),
        _s([[a((0, 3)), a((2, 3))]], desc="with zero-size"),
        _s([[a((5,))]], desc="single"),
        _s([(a((2,)), a((3,)))], desc="tuple input"),
    ]


def stack_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)  # noqa: E731
    return [
        _s([[a((2, 3)), a((2, 3))]], desc="dim 0"),
        _s([[a((2, 3)), a((2, 3)), a((2, 3))]], {"dim": 1}, desc="dim 1"),
        _s([[a((2, 3)), a((2, 3))], -1], desc="dim -1"),
        _s([[a(()), a(()), a(())]], desc="0-d"),
        _s([[a((0, 3)), a((0, 3))]], desc="zero-size"),
    ]


def split_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)  # noqa: E731
    return [
        _s([a((5, 3)), 2], desc="size 2, uneven"),
        _s([a((4, 6)), 3], {"dim": 1}, desc="dim 1"),
        _s([a((4, 6)), [1, 3, 2]], {"dim": -1}, desc="sections"),
        _s([a((4, 6)), 10], desc="size larger than dim"),
    ]


def chunk_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)  # noqa: E731
    return [
        _s([a((6, 2)), 3], desc="even"),
        _s([a((5, 2)), 3], desc="uneven"),
        _s([a((4, 7)), 2], {"dim": -1}, desc="dim -1"),
        _s([a((2, 3)), 5], desc="more chunks than rows"),
    ]


def _cast_values(rng, src, dst):
    """Values that every dtype pair converts without undefined behaviour
    (float -> int of out-of-range values is UB in C)."""
    n = 12
    if src == "bool":
        return Arr(rng.random(n) < 0.5, src)
    lo = 0 if (src == "uint8" or dst == "uint8") else -100
    if src in INTS:
        v = rng.integers(lo, 101, n)
        v[:2] = 0  # zeros matter for -> bool
        return Arr(v.astype(NP_DTYPE[src]), src)
    v = rng.uniform(lo, 100, n)
    v[:2] = 0.0
    v[2] = 0.4  # nonzero but truncates to 0: bool True, int 0
    v[3] = 2.75
    return Arr(v.astype(NP_DTYPE[src]), src)


def cast_samples(dtype, rng):
    out = [Sample((_cast_values(rng, dtype, d), DT(d)), desc=f"-> {d}") for d in ALL]
    # A non-trivial shape too, with 0-d and zero-size.
    out.append(Sample((arr(rng, (2, 3), dtype), DT("float32")), desc="2-d -> float32"))
    out.append(Sample((arr(rng, (), dtype), DT("int64")), desc="0-d -> int64"))
    out.append(Sample((arr(rng, (0, 3), dtype), DT("float64")), desc="zero-size -> float64"))
    return out


def cast_method_samples(target):
    def gen(dtype, rng):
        return [
            Sample((_cast_values(rng, dtype, target),), desc="1-d"),
            Sample((arr(rng, (), dtype),), desc="0-d"),
        ]

    return gen


# ---- creation -------------------------------------------------------------


def zeros_like_shapes(name):
    def gen(dtype, rng):
        out = [
            _s([2, 3], {"dtype": DT(dtype)}, desc="varargs"),
            _s([(2, 3)], {"dtype": DT(dtype)}, desc="tuple"),
            _s([()], {"dtype": DT(dtype)}, desc="0-d"),
            _s([0, 3], {"dtype": DT(dtype)}, desc="zero-size"),
        ]
        if dtype == "float32":
            out.append(_s([4], desc="default dtype"))
        return out

    return gen


def full_samples(dtype, rng):
    v = {"bool": True, "float16": 1.5, "bfloat16": 1.5, "float32": -2.25, "float64": 0.1}.get(dtype, 7)
    out = [
        _s([(2, 3), v], {"dtype": DT(dtype)}, desc="tuple size"),
        _s([(), v], {"dtype": DT(dtype)}, desc="0-d"),
        _s([(0, 2), v], {"dtype": DT(dtype)}, desc="zero-size"),
    ]
    if dtype == "float32":
        # The dtype is inferred from the fill value, as in torch.
        out += [
            _s([(2,), 1.5], desc="float fill -> float32"),
            _s([(2,), 3], desc="int fill -> int64"),
            _s([(2,), True], desc="bool fill -> bool"),
        ]
    return out


def arange_samples(dtype, rng):
    if dtype in FLOATS:
        out = [
            _s([0, 2, 0.25], {"dtype": DT(dtype)}, desc="float step"),
            _s([5], {"dtype": DT(dtype)}, desc="end only"),
            _s([3, -1, -0.5], {"dtype": DT(dtype)}, desc="negative step"),
        ]
    else:
        lo = 0 if dtype == "uint8" else -4
        out = [
            _s([5], {"dtype": DT(dtype)}, desc="end only"),
            _s([lo, 10, 3], {"dtype": DT(dtype)}, desc="start, end, step"),
            _s([10, lo, -3], {"dtype": DT(dtype)}, desc="negative step"),
            _s([0], {"dtype": DT(dtype)}, desc="empty"),
        ]
    if dtype == "float32":
        out += [
            _s([6], desc="ints -> int64"),
            _s([1, 10, 3], desc="start/end/step ints"),
            _s([0.0, 1.0, 0.25], desc="floats -> float32"),
            _s([0, 1, 0.3], desc="non-dividing float step"),
            _s([5, 5], desc="empty range"),
        ]
    return out


def linspace_samples(dtype, rng):
    out = [
        _s([0, 1, 5], {"dtype": DT(dtype)}, desc="0..1"),
        _s([3, -1, 9], {"dtype": DT(dtype)}, desc="descending"),
        _s([-2, 2, 1], {"dtype": DT(dtype)}, desc="one step"),
        _s([0, 1, 0], {"dtype": DT(dtype)}, desc="zero steps"),
    ]
    if dtype == "float32":
        out.append(_s([0.5, 2.5, 7], desc="default dtype"))
    return out


def eye_samples(dtype, rng):
    out = [
        _s([3], {"dtype": DT(dtype)}, desc="square"),
        _s([2, 4], {"dtype": DT(dtype)}, desc="wide"),
        _s([4, 2], {"dtype": DT(dtype)}, desc="tall"),
        _s([0], {"dtype": DT(dtype)}, desc="empty"),
    ]
    if dtype == "float32":
        out.append(_s([2], desc="default dtype"))
    return out


def like_samples(fill=None):
    def gen(dtype, rng):
        extra = [] if fill is None else [fill]
        out = [
            _s([arr(rng, (2, 3), dtype)] + extra, desc="same dtype"),
            _s([arr(rng, (), dtype)] + extra, desc="0-d"),
            _s([arr(rng, (0, 3), dtype)] + extra, desc="zero-size"),
        ]
        other = "float64" if dtype != "float64" else "int32"
        out.append(_s([arr(rng, (2, 3), dtype)] + extra, {"dtype": DT(other)}, desc=f"dtype={other}"))
        return out

    return gen


def tensor_samples(dtype, rng):
    vals = {"bool": [[True, False], [False, True]]}.get(dtype, [[1, 2, 3], [4, 5, 6]])
    if dtype in FLOATS:
        vals = [[1.5, -2.0, 0.25], [3.0, 0.0, -0.5]]
    out = [
        _s([vals], {"dtype": DT(dtype)}, desc="nested list"),
        _s([1], {"dtype": DT(dtype)}, desc="scalar -> 0-d"),
        _s([[]], {"dtype": DT(dtype)}, desc="empty list"),
    ]
    if dtype == "float32":
        # dtype inference, as in torch (and OneFlow): ints -> int64,
        # floats -> float32, bools -> bool, mixed int/float -> float32.
        out += [
            _s([[1, 2, 3]], desc="ints"),
            _s([[1.0, 2.0]], desc="floats"),
            _s([[True, False]], desc="bools"),
            _s([[1, 2.5]], desc="mixed int/float"),
            _s([[True, 2]], desc="mixed bool/int"),
            _s([3.5], desc="float scalar"),
            _s([7], desc="int scalar"),
            _s([[]], desc="empty -> float32"),
            _s([[[[1, 2], [3, 4]], [[5, 6], [7, 8]]]], desc="3-d"),
            _s([np.arange(6, dtype=np.float64).reshape(2, 3)], desc="numpy float64 keeps dtype"),
            _s([np.arange(4, dtype=np.int32)], desc="numpy int32 keeps dtype"),
        ]
    return out


# ---- random -----------------------------------------------------------------
# Random ops are checked on shape/dtype (against torch), range and statistics,
# and reproducibility under manual_seed; never on values against torch.


@dataclass(frozen=True)
class Dist:
    kind: str  # "uniform" [lo, hi), "normal", "randint" [lo, hi), "perm" of n
    lo: float = 0.0
    hi: float = 1.0
    mean: float = 0.0
    std: float = 1.0


def rand_samples(dtype, rng):
    return [
        _s([2, 3], {"dtype": DT(dtype)}, desc="varargs"),
        _s([(4, 5)], {"dtype": DT(dtype)}, desc="tuple"),
        _s([()], {"dtype": DT(dtype)}, desc="0-d"),
        _s([0, 3], {"dtype": DT(dtype)}, desc="zero-size"),
        _s([20000], {"dtype": DT(dtype)}, desc="stats"),
    ]


def randint_samples(dtype, rng):
    lo = 0 if dtype == "uint8" else -3
    return [
        _s([lo, 7, (3, 4)], {"dtype": DT(dtype)}, desc="low/high"),
        _s([5, (2, 3)], {"dtype": DT(dtype)}, desc="high only"),
        _s([lo, 7, (20000,)], {"dtype": DT(dtype)}, desc="stats"),
        _s([0, 4, (0, 2)], {"dtype": DT(dtype)}, desc="zero-size"),
    ] + ([_s([0, 10, (5,)], desc="default dtype")] if dtype == "int64" else [])


def randperm_samples(dtype, rng):
    out = [
        _s([10], {"dtype": DT(dtype)}, desc="n=10"),
        _s([1], {"dtype": DT(dtype)}, desc="n=1"),
        _s([0], {"dtype": DT(dtype)}, desc="n=0"),
        _s([1000], {"dtype": DT(dtype)}, desc="stats"),
    ]
    if dtype == "int64":
        out.append(_s([7], desc="default dtype"))
    return out


def normal_samples(dtype, rng):
    return [
        _s([2.0, 3.0, (20000,)], {"dtype": DT(dtype)}, desc="stats"),
        _s([0.0, 1.0, (2, 3)], {"dtype": DT(dtype)}, desc="2-d"),
        _s([-1.0, 0.5], {"size": (4,), "dtype": DT(dtype)}, desc="size kwarg"),
    ]


def random_like_samples(dtype, rng):
    return [
        _s([arr(rng, (2, 3), dtype)], desc="2-d"),
        _s([arr(rng, (), dtype)], desc="0-d"),
        _s([arr(rng, (20000,), dtype)], desc="stats"),
        _s([arr(rng, (3,), dtype)], {"dtype": DT("float64")}, desc="dtype=float64"),
    ]


# Which distribution each random op draws from (for the statistics test).
RANDOM_DIST = {
    "rand": Dist("uniform", 0.0, 1.0, 0.5, (1 / 12) ** 0.5),
    "rand_like": Dist("uniform", 0.0, 1.0, 0.5, (1 / 12) ** 0.5),
    "randn": Dist("normal", mean=0.0, std=1.0),
    "randn_like": Dist("normal", mean=0.0, std=1.0),
    "normal": Dist("normal", mean=2.0, std=3.0),  # the "stats" sample's parameters
    "randint": Dist("randint"),
    "randperm": Dist("perm"),
}

# ---------------------------------------------------------------------------
# Reference helpers


def _float_input(f):
    """Reference for ops defined to give a float result for int/bool input:
    torch's kernel refuses those dtypes, so compute on the float32 cast."""

    def g(x, *a, **k):
        if not x.is_floating_point():
            import torch

            x = x.to(torch.float32)
        return f(x, *a, **k)

    return g


def _bool_result(f):
    """OneFlow's all/any return bool for every input dtype (torch keeps uint8)."""

    def g(*a, **k):
        return f(*a, **k).bool()

    return g


# ---------------------------------------------------------------------------
# The table

OPS = []


def add(*infos):
    OPS.extend(infos)


# -- pointwise unary, float result for int/bool input ---------------------
_TRANSCENDENTAL_TOL = {"float32": (5e-6, 1e-5)}  # libm vs SLEEF: a few ulp
_UNARY_FLOAT = {
    "exp": (DEFAULT, True),
    "log": (POSITIVE, False),
    "log2": (POSITIVE, False),
    "log10": (POSITIVE, False),
    "log1p": (Domain(-0.5, 5.0, 0, 9), False),
    "expm1": (DEFAULT, False),
    "sqrt": (POSITIVE, False),
    "rsqrt": (POSITIVE, False),
    "sin": (DEFAULT, False),
    "cos": (DEFAULT, False),
    "tan": (Domain(-1.2, 1.2, -1, 1), False),
    "asin": (UNIT, False),
    "acos": (UNIT, False),
    "atan": (DEFAULT, False),
    "sinh": (DEFAULT, False),
    "cosh": (DEFAULT, False),
    "tanh": (DEFAULT, True),
    "asinh": (DEFAULT, False),
    "acosh": (GE_ONE, False),
    "atanh": (UNIT, False),
    "sigmoid": (DEFAULT, True),
    "erf": (DEFAULT, False),
    "erfc": (DEFAULT, False),
    "reciprocal": (NONZERO, False),
    "gelu": (DEFAULT, False),
    "silu": (DEFAULT, False),
}
for _name, (_dom, _spec) in _UNARY_FLOAT.items():
    _nn = _name in ("gelu", "silu")
    add(
        OpInfo(
            _name,
            "unary_float",
            ALL,
            unary_samples(_dom, specials=_spec),
            ref=(lambda n: lambda torch: _float_input(getattr(torch.nn.functional, n)))(_name)
            if _nn
            else None,
            inplace=not _nn,
            tol=_TRANSCENDENTAL_TOL,
            # torch refuses ints for gelu/silu; here every op of the group
            # gives a float result for int/bool input.
            oneflow_dtypes=INT_LIKE if _nn else (),
        )
    )

# -- pointwise unary, same dtype ------------------------------------------------
_UNARY_SAME = {
    "abs": (abs, True),
    "neg": (operator.neg, True),
    "sign": (None, False),
    "square": (None, True),
    "ceil": (None, True),
    "floor": (None, True),
    "round": (None, True),
    "trunc": (None, True),
    "relu": (None, False),
}
for _name, (_op, _spec) in _UNARY_SAME.items():
    add(
        OpInfo(
            _name,
            "unary",
            NUMBER,
            unary_samples(specials=_spec, halves=_name == "round"),
            operator=_op,
            inplace=True,
        )
    )

# -- unary with bool result -----------------------------------------------------
for _name in ("logical_not", "isnan", "isinf", "isfinite"):
    add(OpInfo(_name, "unary_bool", ALL, unary_samples(specials=True)))
add(OpInfo("bitwise_not", "unary_bool", INT_LIKE, unary_samples(), operator=operator.invert, inplace=True))

# -- binary -----------------------------------------------------------------------
_DIV_SPECIALS = [([1.0, -1.0, 0.0, 2.0], [0.0, 0.0, 0.0, -0.0])]
_NAN_SPECIALS = [([float("nan"), 1.0, float("nan"), 2.0], [1.0, float("nan"), float("nan"), 3.0])]
_BINARY = {
    # name: (dtypes, operator, inplace, dom_x, dom_y, scalars, scalar_first, extra kwargs)
    "add": (ALL, operator.add, True, DEFAULT, DEFAULT, (2, -1.5, True), (3, 0.5), dict(alpha=True)),
    "sub": (NUMBER, operator.sub, True, DEFAULT, DEFAULT, (2, -1.5), (3, 0.5), dict(alpha=True)),
    "mul": (ALL, operator.mul, True, DEFAULT, DEFAULT, (2, -1.5, True), (3, 0.5), {}),
    "div": (ALL, operator.truediv, True, DEFAULT, NONZERO, (2, -1.5), (3, 0.5),
            dict(specials=_DIV_SPECIALS)),
    "floor_divide": (NUMBER, operator.floordiv, True, DEFAULT, NONZERO, (2, -3, 1.5), (7, -7), {}),
    "remainder": (NUMBER, operator.mod, True, DEFAULT, NONZERO, (2, -3, 1.5), (7, -7), {}),
    "fmod": (NUMBER, None, True, DEFAULT, NONZERO, (2, -3, 1.5), (7,), {}),
    "pow": (NUMBER, operator.pow, True, Domain(0.5, 3.0, -3, 3), Domain(-2.0, 2.0, 0, 3),
            (2, 0.5, 0), (2, 1.5), {}),
    "maximum": (ALL, None, False, DEFAULT, DEFAULT, (), (), dict(specials=_NAN_SPECIALS)),
    "minimum": (ALL, None, False, DEFAULT, DEFAULT, (), (), dict(specials=_NAN_SPECIALS)),
    "atan2": (ALL, None, True, DEFAULT, DEFAULT, (), (), {}),
    "bitwise_and": (INT_LIKE, operator.and_, True, DEFAULT, DEFAULT, (3, True), (5,), {}),
    "bitwise_or": (INT_LIKE, operator.or_, True, DEFAULT, DEFAULT, (3, True), (5,), {}),
    "bitwise_xor": (INT_LIKE, operator.xor, True, DEFAULT, DEFAULT, (3, True), (5,), {}),
    "logical_and": (ALL, None, False, DEFAULT, DEFAULT, (), (), {}),
    "logical_or": (ALL, None, False, DEFAULT, DEFAULT, (), (), {}),
    "logical_xor": (ALL, None, False, DEFAULT, DEFAULT, (), (), {}),
    "eq": (ALL, operator.eq, False, DEFAULT, DEFAULT, (2, 0.5, True), (2,), dict(specials=_NAN_SPECIALS)),
    "ne": (ALL, operator.ne, False, DEFAULT, DEFAULT, (2, 0.5, True), (2,), dict(specials=_NAN_SPECIALS)),
    "lt": (ALL, operator.lt, False, DEFAULT, DEFAULT, (2, 0.5), (2,), dict(specials=_NAN_SPECIALS)),
    "le": (ALL, operator.le, False, DEFAULT, DEFAULT, (2, 0.5), (2,), {}),
    "gt": (ALL, operator.gt, False, DEFAULT, DEFAULT, (2, 0.5), (2,), {}),
    "ge": (ALL, operator.ge, False, DEFAULT, DEFAULT, (2, 0.5), (2,), {}),
}
for _name, (_dts, _op, _inpl, _dx, _dy, _sc, _sf, _kw) in _BINARY.items():
    add(
        OpInfo(
            _name,
            "binary",
            _dts,
            binary_samples(_dx, _dy, _sc, _sf, dtypes=_dts, **_kw),
            operator=_op,
            inplace=_inpl,
            # pow/atan2/div: libm vs SLEEF, and float16 results rounded from
            # slightly different float32 values.
            tol=_TRANSCENDENTAL_TOL,
        )
    )

# -- clamp / where --------------------------------------------------------------
add(OpInfo("clamp", "clamp", NUMBER, clamp_samples, inplace=True))
add(OpInfo("clip", "clamp", NUMBER, clamp_samples, inplace=True))
add(OpInfo("where", "where", ALL, where_samples, method=""))

# -- reductions -----------------------------------------------------------------
_SUM_TOL = {"float32": (1e-5, 1e-5), "float16": (4e-3, 2e-3), "bfloat16": (2e-2, 2e-2)}
add(OpInfo("sum", "reduction", ALL, reduction_samples(dtype_kw=("float64", "int64")), tol=_SUM_TOL))
add(OpInfo("mean", "reduction", FLOATS, reduction_samples(dtype_kw=("float64",)), tol=_SUM_TOL))
add(
    OpInfo(
        "prod",
        "reduction",
        ALL,
        # prod takes one int dim only (no tuples), as in torch.
        reduction_samples(Domain(0.8, 1.25, -2, 2), tuple_dims=False, dtype_kw=("float64",)),
        tol=_SUM_TOL,
    )
)
for _name in ("max", "min"):
    add(OpInfo(_name, "reduction", ALL,
               reduction_samples(tuple_dims=False, distinct_values=True, binary_form=True)))
for _name in ("argmax", "argmin"):
    add(OpInfo(_name, "reduction", NUMBER, reduction_samples(tuple_dims=False, distinct_values=True)))
for _name in ("amax", "amin"):
    add(OpInfo(_name, "reduction", ALL, reduction_samples()))
for _name in ("all", "any"):
    add(
        OpInfo(
            _name,
            "reduction",
            ALL,
            reduction_samples(),
            ref=(lambda n: lambda torch: _bool_result(getattr(torch, n)))(_name),
            oneflow_dtypes=("uint8",),
        )
    )

# -- matmul ---------------------------------------------------------------------
_MM_TOL = {"float32": (1e-5, 1e-5)}
add(OpInfo("matmul", "matmul", MATMUL_DTYPES, matmul_samples, operator=operator.matmul, tol=_MM_TOL))
add(OpInfo("mm", "matmul", MATMUL_DTYPES, mm_samples, tol=_MM_TOL))
add(OpInfo("bmm", "matmul", MATMUL_DTYPES, bmm_samples, tol=_MM_TOL))

# -- shape / view ----------------------------------------------------------------
add(OpInfo("reshape", "shape", ALL, reshape_samples))
# view: same samples; torch has no torch.view function, the method is the API.
add(OpInfo("view", "shape", ALL, reshape_samples, fn=False, ref=lambda torch: torch.Tensor.view))
add(OpInfo("flatten", "shape", ALL, flatten_samples))
add(OpInfo("squeeze", "shape", ALL, squeeze_samples))
add(OpInfo("unsqueeze", "shape", ALL, unsqueeze_samples))
add(OpInfo("transpose", "shape", ALL, transpose_samples))
add(OpInfo("permute", "shape", ALL, permute_samples))
add(OpInfo("expand", "shape", ALL, expand_samples, fn=False, ref=lambda torch: torch.Tensor.expand))
add(
    OpInfo(
        "contiguous", "shape", ALL, contiguous_samples, fn=False, ref=lambda torch: torch.Tensor.contiguous
    )
)
add(OpInfo("narrow", "shape", ALL, narrow_samples))
add(OpInfo("clone", "shape", ALL, contiguous_samples))
add(OpInfo("cat", "shape", ALL, cat_samples, method=""))
add(OpInfo("stack", "shape", ALL, stack_samples, method=""))
add(OpInfo("split", "shape", ALL, split_samples))
add(OpInfo("chunk", "shape", ALL, chunk_samples))

# -- dtype conversion ------------------------------------------------------------
add(OpInfo("cast", "cast", ALL, cast_samples, ref=lambda torch: torch.Tensor.to, method="to"))
for _name, _target in [
    ("float", "float32"),
    ("double", "float64"),
    ("long", "int64"),
    ("int", "int32"),
    ("half", "float16"),
    ("bool", "bool"),
]:
    add(
        OpInfo(
            _name,
            "cast",
            ALL,
            cast_method_samples(_target),
            fn=False,
            ref=(lambda n: lambda torch: getattr(torch.Tensor, n))(_name),
        )
    )

# -- creation -----------------------------------------------------------------------
add(OpInfo("tensor", "creation", ALL, tensor_samples, method=""))
for _name in ("zeros", "ones"):
    add(OpInfo(_name, "creation", ALL, zeros_like_shapes(_name), method="", takes_device=True))
add(OpInfo("empty", "creation", ALL, zeros_like_shapes("empty"), method="", values=False, takes_device=True))
add(OpInfo("full", "creation", ALL, full_samples, method="", takes_device=True))
add(OpInfo("arange", "creation", NUMBER, arange_samples, method="", takes_device=True))
add(OpInfo("linspace", "creation", FLOATS, linspace_samples, method="", takes_device=True))
add(OpInfo("eye", "creation", ALL, eye_samples, method="", takes_device=True))
add(OpInfo("zeros_like", "creation", ALL, like_samples(), method=""))
add(OpInfo("ones_like", "creation", ALL, like_samples(), method=""))
add(OpInfo("empty_like", "creation", ALL, like_samples(), method="", values=False))
add(OpInfo("full_like", "creation", ALL, like_samples(fill=1), method=""))

# -- random ---------------------------------------------------------------------------
add(OpInfo("rand", "random", FLOATS, rand_samples, method="", takes_device=True))
add(OpInfo("randn", "random", FLOATS, rand_samples, method="", takes_device=True))
add(OpInfo("randint", "random", NUMBER, randint_samples, method="", takes_device=True))
add(OpInfo("randperm", "random", ("int32", "int64", "float32", "float64"), randperm_samples,
           method="", takes_device=True))
add(OpInfo("normal", "random", ("float32", "float64"), normal_samples, method="", takes_device=True))
add(OpInfo("rand_like", "random", FLOATS, random_like_samples, method=""))
add(OpInfo("randn_like", "random", FLOATS, random_like_samples, method=""))

OP_BY_NAME = {op.name: op for op in OPS}
assert len(OP_BY_NAME) == len(OPS), "duplicate op names in the table"

# Names in src/ops/ops.yaml that are deliberately tested elsewhere instead of
# through this table (e.g. indexing, tested in test_tensor_basics.py).
COVERED_ELSEWHERE = {}
