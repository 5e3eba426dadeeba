"""flow.testing.assert_close: PyTorch's torch.testing.assert_close for oneflow tensors.

The inputs are walked in two phases, as PyTorch does: first the (nested) sequences and mappings
are matched up into leaf pairs, which raises at once for a structural problem (different
lengths or keys, inputs no pair kind handles, rtol without atol); then every leaf pair is
compared and the first failure is raised. Only failures of the second phase go through `msg`
(PyTorch applies the user's message to comparison failures, not to misuse of the function).
"""

import cmath
import math
from collections import abc

import numpy as np

import oneflow as flow

__all__ = ["assert_close"]


class _Failure(Exception):
    """A failed check: the exception type to raise, its message and the path of the leaf pair
    (keys / indices) inside the nested inputs."""

    def __init__(self, kind, message, path=()):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.path = path

    def to_error(self, msg=None):
        # A string replaces the whole message; a callable receives the generated one (with the
        # location) and returns the message to raise; anything else is ignored, as in PyTorch.
        if isinstance(msg, str):
            return self.kind(msg)
        text = self.message
        if self.path:
            text += "\n\nThe failure occurred for item " + "".join(f"[{k!r}]" for k in self.path)
        if callable(msg):
            text = msg(text)
        return self.kind(text)


class _Unsupported(Exception):
    """This pair kind cannot handle the inputs: try the next one."""


# ---- tolerances

# (rtol, atol) per floating dtype name; a complex dtype uses those of its parts. Integer and
# bool dtypes compare exactly (0, 0).
_DEFAULT_TOLERANCES = {
    "float16": (1e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
    "complex64": (1.3e-6, 1e-5),
    "complex128": (1e-7, 1e-7),
}


def _tolerances(dtype_names, rtol, atol, path):
    if (rtol is None) != (atol is None):
        missing = "atol" if atol is None else "rtol"
        raise _Failure(
            ValueError,
            f"Both 'rtol' and 'atol' must be either specified or omitted, but got no {missing}.",
            path,
        )
    if rtol is not None:
        return rtol, atol
    # With check_dtype=False the two sides may differ: the looser default of the two applies.
    pairs = [_DEFAULT_TOLERANCES.get(name, (0.0, 0.0)) for name in dtype_names]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


# ---- mismatch messages


def _is_equality(rtol, atol):
    return rtol == 0 and atol == 0


def _format_report(what, extra, abs_diff, abs_at, rel_diff, rel_at, rtol, atol):
    equality = _is_equality(rtol, atol)
    lines = [f"{what} are not {'equal' if equality else 'close'}!", "", extra]
    for label, diff, at, tol in (("absolute", abs_diff, abs_at, atol), ("relative", rel_diff, rel_at, rtol)):
        if at is None:  # scalars: no index
            line = f"{label.title()} difference: {diff}"
        else:
            line = f"Greatest {label} difference: {diff} at index {at}"
        if not equality:
            line += f" (up to {tol} allowed)"
        lines.append(line)
    return "\n".join(lines)


def _scalar_report(actual, expected, rtol, atol):
    # Plain Python arithmetic on the two numbers; a zero expected value has an infinite
    # relative difference (PyTorch's convention, also for nan - 0).
    abs_diff = abs(actual - expected)
    rel_diff = math.inf if expected == 0 else abs_diff / abs(expected)
    return _format_report(
        "Scalars", f"Expected {expected} but got {actual}.", abs_diff, None, rel_diff, None, rtol, atol
    )


def _argmax_first(t):
    """Flat index and Python value of the greatest element, NaN counting as greatest and the
    first of equal ones winning (what torch.max gives on the CPU)."""
    if t.dtype == flow.bfloat16:  # numpy has no bfloat16; float32 holds its values exactly
        t = t.float()
    arr = np.asarray(t.cpu())
    i = int(np.argmax(arr))
    return i, arr[i].item()


def _tensor_report(actual, expected, matches, rtol, atol):
    total = matches.numel()
    mismatched = total - int(matches.sum().item())
    extra = f"Mismatched elements: {mismatched} / {total} ({mismatched / total:.1%})"
    a, e, m = actual.flatten(), expected.flatten(), matches.flatten()
    if not (a.is_floating_point() or a.is_complex()):
        # Integer (and bool) differences in int64, so that small types do not wrap around.
        a, e = a.to(flow.int64), e.to(flow.int64)
    # Only the mismatched elements count for the greatest differences; the differences are
    # computed in the compared dtype, so they read as PyTorch's do (float16 rounding and all).
    abs_diff = (a - e).abs().masked_fill(m, 0)
    rel_diff = (abs_diff / e.abs()).masked_fill(m, 0)
    shape = tuple(matches.shape)
    abs_i, abs_v = _argmax_first(abs_diff)
    rel_i, rel_v = _argmax_first(rel_diff)
    return _format_report(
        "Tensor-likes", extra, abs_v, _unravel(abs_i, shape), rel_v, _unravel(rel_i, shape), rtol, atol
    )


def _unravel(flat, shape):
    return tuple(int(i) for i in np.unravel_index(flat, shape))


# ---- closeness


def _check_tolerance_signs(rtol, atol):
    # flow.isclose checks these itself; the complex path below is ours, so it checks too.
    if rtol < 0:
        raise RuntimeError(f"isclose(): rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"isclose(): atol must be greater than or equal to zero, but got {atol}")


def _isclose(actual, expected, rtol, atol, equal_nan):
    if not isinstance(equal_nan, (bool, np.bool_)):
        # PyTorch's isclose takes a bool only (a truthy "relaxed" is refused, not taken as True).
        raise TypeError(f"isclose(): argument 'equal_nan' must be bool, not {type(equal_nan).__name__}")
    if not actual.is_complex():
        return flow.isclose(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan)
    # flow.isclose has no complex kernel: the same rule on complex values. Equal values
    # (infinities included) match; a value is NaN when either part is; otherwise the modulus of
    # the difference must be finite and within atol + rtol * |expected|.
    _check_tolerance_signs(rtol, atol)
    close = actual == expected
    if equal_nan:
        close = close | (flow.isnan(actual) & flow.isnan(expected))
    err = (actual - expected).abs()
    allowed = atol + rtol * expected.abs()
    return close | (flow.isfinite(err) & (err <= allowed))


# ---- leaf pairs


class _NonePair:
    kind = "NonePair"

    def __init__(self, actual, expected, path, opts):
        if actual is not None and expected is not None:
            raise _Unsupported
        self.actual, self.expected, self.path = actual, expected, path

    def compare(self):
        if not (self.actual is None and self.expected is None):
            raise _Failure(AssertionError, f"None mismatch: {self.actual} is not {self.expected}", self.path)


class _BoolPair:
    kind = "BooleanPair"

    def __init__(self, actual, expected, path, opts):
        if not all(isinstance(x, (bool, np.bool_)) for x in (actual, expected)):
            raise _Unsupported
        self.actual, self.expected, self.path = bool(actual), bool(expected), path

    def compare(self):
        if self.actual is not self.expected:
            raise _Failure(AssertionError, f"Booleans mismatch: {self.actual} is not {self.expected}", self.path)


# The dtype a Python number stands for (its default tolerances).
_NUMBER_DTYPES = {int: "int64", float: "float64", complex: "complex128"}


class _NumberPair:
    kind = "NumberPair"

    def __init__(self, actual, expected, path, opts):
        types = (int, float, complex, np.number)
        if not all(isinstance(x, types) for x in (actual, expected)):
            raise _Unsupported
        # numpy scalars compare as the Python numbers they hold (np.float32 as a float).
        self.actual, self.expected = (x.item() if isinstance(x, np.number) else x for x in (actual, expected))
        self.path = path
        # A bool among numbers has no dtype here: like PyTorch, this is an unexpected input
        # (raised as RuntimeError by the caller), not a silent int comparison.
        names = [_NUMBER_DTYPES[type(x)] for x in (self.actual, self.expected)]
        self.rtol, self.atol = _tolerances(names, opts["rtol"], opts["atol"], path)
        self.equal_nan, self.check_dtype = opts["equal_nan"], opts["check_dtype"]

    def compare(self):
        a, e = self.actual, self.expected
        if self.check_dtype and type(a) is not type(e):
            raise _Failure(AssertionError, f"The (d)types do not match: {type(a)} != {type(e)}.", self.path)
        if a == e:
            return
        if self.equal_nan and cmath.isnan(a) and cmath.isnan(e):
            return
        diff = abs(a - e)
        if cmath.isfinite(diff) and diff <= self.atol + self.rtol * abs(e):
            return
        raise _Failure(AssertionError, _scalar_report(a, e, self.rtol, self.atol), self.path)


class _TensorPair:
    kind = "TensorLikePair"

    def __init__(self, actual, expected, path, opts):
        tensor_like = (flow.Tensor, np.ndarray)
        if not all(isinstance(x, tensor_like) for x in (actual, expected)):
            raise _Unsupported
        # A tensor and a numpy array are not comparable (PyTorch wants the same kind on both
        # sides); a subclass (Parameter) compares with its base unless allow_subclasses=False.
        related = isinstance(actual, type(expected)) or isinstance(expected, type(actual))
        if not related or (not opts["allow_subclasses"] and type(actual) is not type(expected)):
            raise _Unsupported
        try:
            self.actual, self.expected = (
                x.detach() if isinstance(x, flow.Tensor) else flow.as_tensor(x) for x in (actual, expected)
            )
        except Exception:
            # numpy arrays flow cannot hold (strings, objects, int16, negative strides).
            raise _Unsupported from None
        self.path, self.opts = path, opts
        names = [t.dtype.name for t in (self.actual, self.expected)]
        self.rtol, self.atol = _tolerances(names, opts["rtol"], opts["atol"], path)

    def _fail(self, message):
        raise _Failure(AssertionError, message, self.path)

    def _compare_attributes(self, a, e):
        o = self.opts
        if a.shape != e.shape:
            self._fail(f"The values for attribute 'shape' do not match: {a.shape} != {e.shape}.")
        layout_a, layout_e = getattr(a, "layout", None), getattr(e, "layout", None)
        if layout_a != layout_e:
            if o["check_layout"]:
                self._fail(f"The values for attribute 'layout' do not match: {layout_a} != {layout_e}.")
        elif o["check_stride"] and a.stride() != e.stride():
            self._fail(f"The values for attribute 'stride()' do not match: {a.stride()} != {e.stride()}.")
        if o["check_device"] and a.device != e.device:
            self._fail(f"The values for attribute 'device' do not match: {a.device} != {e.device}.")
        if o["check_dtype"] and a.dtype != e.dtype:
            self._fail(f"The values for attribute 'dtype' do not match: {a.dtype} != {e.dtype}.")

    def compare(self):
        a, e = self.actual, self.expected
        self._compare_attributes(a, e)
        if "meta" in (a.device.type, e.device.type):
            return  # meta tensors have no values: the attributes are all there is to compare
        # The unchecked differences are evened out: a common dtype, both on the CPU.
        if a.dtype != e.dtype:
            common = flow.promote_types(a.dtype, e.dtype)
            a, e = a.to(common), e.to(common)
        if a.device != e.device:
            a, e = a.cpu(), e.cpu()
        with flow.no_grad():
            matches = _isclose(a, e, self.rtol, self.atol, self.opts["equal_nan"])
            if bool(matches.all()):
                return
            if a.dim() == 0:
                self._fail(_scalar_report(a.item(), e.item(), self.rtol, self.atol))
            self._fail(_tensor_report(a, e, matches, self.rtol, self.atol))


_PAIR_KINDS = (_NonePair, _BoolPair, _NumberPair, _TensorPair)


def _where(path):
    return " at item " + "".join(f"[{k!r}]" for k in path) if path else ""


def _is_sequence(x):
    # Strings are sequences of strings (endless recursion), so they are leaves.
    return isinstance(x, abc.Sequence) and not isinstance(x, str)


def _make_pairs(actual, expected, path, opts, out):
    """Phase one: match the nested structure and append one leaf pair per leaf."""
    if _is_sequence(actual) and _is_sequence(expected):
        if len(actual) != len(expected):
            raise _Failure(
                AssertionError, f"The length of the sequences mismatch: {len(actual)} != {len(expected)}", path
            )
        for i in range(len(actual)):
            _make_pairs(actual[i], expected[i], path + (i,), opts, out)
        return
    if isinstance(actual, abc.Mapping) and isinstance(expected, abc.Mapping):
        keys_a, keys_e = set(actual.keys()), set(expected.keys())
        if keys_a != keys_e:
            raise _Failure(
                AssertionError,
                "The keys of the mappings do not match:\n"
                f"Missing keys in the actual mapping: {sorted(keys_e - keys_a)}\n"
                f"Additional keys in the actual mapping: {sorted(keys_a - keys_e)}",
                path,
            )
        # Sorted keys make "the first failure" deterministic; unorderable keys keep set order.
        try:
            keys = sorted(keys_a)
        except TypeError:
            keys = list(keys_a)
        for k in keys:
            _make_pairs(actual[k], expected[k], path + (k,), opts, out)
        return
    for kind in _PAIR_KINDS:
        try:
            out.append(kind(actual, expected, path, opts))
            return
        except _Unsupported:
            continue
        except _Failure:
            raise
        except Exception as error:
            raise RuntimeError(
                f"Building a {kind.kind}{_where(path)} for {type(actual).__name__} {actual!r} and "
                f"{type(expected).__name__} {expected!r} raised the unexpected exception above."
            ) from error
    raise _Failure(
        TypeError,
        f"No comparison pair was able to handle inputs of type {type(actual)} and {type(expected)}.",
        path,
    )


def assert_close(
    actual,
    expected,
    *,
    allow_subclasses=True,
    rtol=None,
    atol=None,
    equal_nan=False,
    check_device=True,
    check_dtype=True,
    check_layout=True,
    check_stride=False,
    msg=None,
):
    """Asserts that `actual` and `expected` are close, as torch.testing.assert_close.

    Tensors (and numpy arrays, compared with numpy arrays) must agree in shape, device, dtype
    and layout (each check can be turned off but shape) and elementwise satisfy
    ``|actual - expected| <= atol + rtol * |expected|``; the default rtol/atol follow the dtype
    (float32: 1.3e-6 / 1e-5, float64: 1e-7 / 1e-7, integers and bool: exact). Python and numpy
    scalars, None and bools compare too, and (nested) sequences and mappings of all of these
    compare item by item. `msg` (a string, or a callable given the generated message) replaces
    the message of a failed comparison.
    """
    __tracebackhide__ = True  # noqa: F841 - pytest hides this frame in tracebacks
    opts = dict(
        allow_subclasses=allow_subclasses, rtol=rtol, atol=atol, equal_nan=equal_nan,
        check_device=check_device, check_dtype=check_dtype, check_layout=check_layout,
        check_stride=check_stride,
    )
    pairs = []
    try:
        _make_pairs(actual, expected, (), opts, pairs)
    except _Failure as failure:
        raise failure.to_error() from None
    first = None
    for pair in pairs:
        try:
            pair.compare()
        except _Failure as failure:
            first = first or failure
        except Exception as error:
            raise RuntimeError(
                f"Comparing the {pair.kind}{_where(pair.path)} raised the unexpected exception above "
                f"(rtol={pair.__dict__.get('rtol')}, atol={pair.__dict__.get('atol')}, "
                f"equal_nan={equal_nan!r})."
            ) from error
    if first is not None:
        raise first.to_error(msg) from None
