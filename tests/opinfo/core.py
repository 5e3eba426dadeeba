"""The op-sample table's building blocks (the table itself is the family modules of this package).

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
INTS = ("int8", "uint8", "int16", "int32", "int64")
FLOATS = ("float16", "bfloat16", "float32", "float64")
NUMBER = INTS + FLOATS
ALL = BOOL + NUMBER
INT_LIKE = BOOL + INTS
COMPLEX = ("complex64", "complex128")
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


@dataclass(frozen=True)
class Gen:
    """A ``generator=`` argument: a fresh ``lib.Generator()`` seeded with ``seed``."""

    seed: int


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
    # False: the output's shape depends on input values (repeat_interleave with a tensor of
    # counts), which the meta device cannot infer (torch's meta kernels raise too).
    meta: bool = True


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
    # lib -> the in-place callable taking self first, when it is not the method x.X_
    # (functional-only ops: nn.functional.leaky_relu_).
    inplace_fn: Optional[Callable[[Any], Callable]] = None
    tol: dict = field(default_factory=dict)  # dtype -> (rtol, atol) overrides
    values: bool = True  # False: only shape/dtype are defined (empty, empty_like)
    # Creation/random ops take ``device=`` themselves; for the meta test.
    takes_device: bool = False
    # dtypes where OneFlow's defined result differs from torch's (the
    # reference then adapts torch's answer); skipped under the torch shim.
    oneflow_dtypes: tuple = ()
    # The output's shape depends on the input's values (nonzero, masked_select, unique): on
    # the meta device the op must refuse (RuntimeError) instead of guessing a shape.
    data_dependent: bool = False
    # The result depends on the input's memory layout, not only its values (as_strided reads
    # the storage): the non-contiguous test compares with torch on the same layout.
    layout_dependent: bool = False

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

    def call_inplace(self, lib, x, *args, **kwargs):
        """x.X_(*args, **kwargs) or its functional in-place form."""
        if self.inplace_fn is not None:
            return self.inplace_fn(lib)(x, *args, **kwargs)
        return getattr(x, self.method + "_")(*args, **kwargs)

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
        if device is not None:
            base = base.to(device)
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
    if isinstance(obj, Gen):
        return lib.Generator().manual_seed(obj.seed)
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
    if dtype in COMPLEX:
        # Both parts from the domain's range; a positive domain (log, sqrt) keeps the real
        # part positive, so values stay off the branch cut. Divisors: |v| >= 0.25.
        v = rng.uniform(dom.lo, dom.hi, size=shape) + 1j * rng.uniform(-abs(dom.hi), abs(dom.hi), size=shape)
        if dom.nonzero:
            v = np.where(np.abs(v) < 0.25, v + 0.5, v)
        return np.asarray(v, dtype=NP_DTYPE[dtype])
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

    The order puts uint8 right after int8 so the uint8/int8 -> int16 rule
    is exercised by every binary op taking integers.
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


# ---------------------------------------------------------------------------
# Reference helpers


def _bool_result(f):
    """OneFlow's all/any return bool for every input dtype (torch keeps uint8)."""

    def g(*a, **k):
        return f(*a, **k).bool()

    return g



def _s(args, kwargs=None, desc="", forms=None):
    return Sample(tuple(args), kwargs or {}, desc, forms)


# ---------------------------------------------------------------------------
# Registering OpInfos: each family module of the package calls add().

OPS = []
COVERED_ELSEWHERE = {}  # table op name -> where it is tested instead of through OPS
RANDOM_DIST = {}


def add(*infos):
    OPS.extend(infos)


__all__ = [n for n in dir() if not n.startswith("__")]
