"""Printing of tensors in OneFlow's format.

OneFlow prints tensors exactly like PyTorch does, with two differences: type
names say ``oneflow.`` instead of ``torch.``, and the dtype is printed for
every dtype (PyTorch leaves out float32, int64 and bool).  Everything here
works on a plain numpy array holding the values, so the module depends on
numpy and the standard library only; ``Tensor.__repr__`` copies the data to
the host and calls :func:`format_tensor`.

The number rules (precision, integer style ``1.``, when scientific notation is
chosen, column widths, wrapping, summarisation with ``...``) follow PyTorch's
observable behaviour, quirks included, because users and tests compare the
two outputs character by character.
"""

import math

import numpy as np

__all__ = ["set_printoptions", "get_printoptions", "format_tensor"]


class _PrintOptions:
    """The current print options (module-wide, like PyTorch's PRINT_OPTS)."""

    precision = 4  # digits after the decimal point
    threshold = 1000  # summarise when numel exceeds this
    edgeitems = 3  # items kept at each end of a summarised dimension
    linewidth = 80  # characters per line before wrapping
    sci_mode = None  # None: decide automatically; True/False: force


_OPTS = _PrintOptions()
_OPTION_NAMES = ("precision", "threshold", "edgeitems", "linewidth", "sci_mode")

_PROFILES = {
    "default": dict(precision=4, threshold=1000, edgeitems=3, linewidth=80),
    "short": dict(precision=2, threshold=1000, edgeitems=2, linewidth=80),
    "full": dict(precision=4, threshold=math.inf, edgeitems=3, linewidth=80),
}

# dtype names whose values print as floating-point numbers.  bfloat16 arrives
# as float32 values, but the name is checked too so that an integer-valued
# array with a float dtype name still prints as ``1.``.
_FLOAT_NAMES = {"float16", "half", "bfloat16", "float32", "float", "float64", "double"}


def set_printoptions(
    precision=None,
    threshold=None,
    edgeitems=None,
    linewidth=None,
    profile=None,
    sci_mode=None,
):
    """Set the options for printing tensors (same meaning as in PyTorch).

    ``profile`` ('default', 'short' or 'full') sets the four size options first;
    explicit arguments then override it.  As in PyTorch, ``sci_mode`` is always
    assigned, so any call without it returns to automatic scientific notation.
    """
    if profile is not None and profile in _PROFILES:
        for name, value in _PROFILES[profile].items():
            setattr(_OPTS, name, value)
    for name, value in (
        ("precision", precision),
        ("threshold", threshold),
        ("edgeitems", edgeitems),
        ("linewidth", linewidth),
    ):
        if value is not None:
            setattr(_OPTS, name, value)
    _OPTS.sci_mode = sci_mode


def get_printoptions() -> dict:
    """Current options as a dict that can be passed back to set_printoptions."""
    return {name: getattr(_OPTS, name) for name in _OPTION_NAMES}


class _Formatter:
    """Decides one number style and one column width for a whole tensor.

    Every element of a tensor is printed with the same style and padded to the
    same width so that columns line up.  The decision is made on the elements
    that will actually be shown (the summarised data when summarising).
    """

    def __init__(self, values, floating):
        self.floating = floating
        self.int_mode = True  # floats that are all integers print as "1."
        self.sci_mode = False
        self.max_width = 1
        flat = values.reshape(-1)
        if not floating:
            # For ints the longest text is at the smallest or largest value
            # (the minus sign counts); for bool "False" is longer than "True".
            if flat.size:
                ends = (flat.min().item(), flat.max().item())
                self.max_width = max(len(str(v)) for v in ends)
            return
        # Zeros, nan and inf do not influence the style.
        vals = flat[np.isfinite(flat) & (flat != 0)]
        if vals.size == 0:
            # Nothing to measure: integer style, width 1.  PyTorch returns
            # before looking at the sci_mode option here, so it is ignored.
            return
        mags = np.abs(vals)
        lo, hi = float(mags.min()), float(mags.max())
        self.int_mode = bool(np.all(vals == np.ceil(vals)))
        if _OPTS.sci_mode is None:
            # Fixed point would hide digits or need very wide columns.
            self.sci_mode = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
        else:
            self.sci_mode = bool(_OPTS.sci_mode)
        # The length of a formatted number grows with its magnitude, except the
        # exponent, which is longest at both extremes; so measuring the
        # smallest and largest value of each sign gives the widest entry.
        candidates = []
        for part in (vals[vals > 0], vals[vals < 0]):
            if part.size:
                candidates += [float(part.min()), float(part.max())]
        prec = _OPTS.precision
        if self.sci_mode:
            widths = [len(f"{v:.{prec}e}") for v in candidates]
        elif self.int_mode:
            widths = [len(f"{v:.0f}") + 1 for v in candidates]  # +1 for the "."
        else:
            widths = [len(f"{v:.{prec}f}") for v in candidates]
        self.max_width = max(widths)

    def format(self, value):
        """Format one Python scalar, right-aligned to the common width."""
        if self.floating:
            prec = _OPTS.precision
            if self.sci_mode:
                text = f"{value:{self.max_width}.{prec}e}"
            elif self.int_mode:
                text = f"{value:.0f}"
                if math.isfinite(value):
                    text += "."  # mark the tensor as floating point
            else:
                text = f"{value:.{prec}f}"
        else:
            text = str(value)  # ints, and True/False for bool
        return text.rjust(self.max_width)


class _ComplexFormatter:
    """PyTorch's complex layout: the real and imaginary parts each get their own formatter,
    and an element reads ``re+imj`` (the imaginary part's sign replaces the ``+``)."""

    def __init__(self, values):
        self.re = _Formatter(values.real.astype(np.float64), True)
        self.im = _Formatter(values.imag.astype(np.float64), True)
        self.max_width = self.re.max_width + self.im.max_width + 1  # + the "j"

    def format(self, value):
        value = complex(value)
        real = self.re.format(value.real)
        imag = (self.im.format(value.imag) + "j").lstrip()
        return real + imag if imag[0] in "+-" else real + "+" + imag


def _summarized(a, edge):
    """The elements that remain visible when the tensor is summarised."""
    if a.ndim == 0:
        return a
    if a.ndim >= 2 and edge == 0:
        # Only "..." is printed, so no number takes part in the layout.
        return a[(slice(0, 0),) * a.ndim]
    for axis, n in enumerate(a.shape):
        if n > 2 * edge:
            keep = np.r_[0:edge, n - edge : n]
            a = np.take(a, keep, axis=axis)
    return a


def _vector(a, indent, summarize, fmt):
    """Format a 1-D array, wrapping lines to fit the line width."""
    edge = _OPTS.edgeitems
    if summarize and not edge:
        items = ["..."]
    elif summarize and a.shape[0] > 2 * edge:
        items = (
            [fmt.format(v) for v in a[:edge].tolist()]
            + [" ..."]
            + [fmt.format(v) for v in a[-edge:].tolist()]
        )
    else:
        items = [fmt.format(v) for v in a.tolist()]
    # Each entry takes its width plus ", "; always at least one per line.
    per_line = max(1, int(math.floor((_OPTS.linewidth - indent) / (fmt.max_width + 2))))
    lines = [", ".join(items[i : i + per_line]) for i in range(0, len(items), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested(a, indent, summarize, fmt):
    """Format an array of any rank; ``indent`` is the column of its '['."""
    if a.ndim == 0:
        return fmt.format(a.item())
    if a.ndim == 1:
        return _vector(a, indent, summarize, fmt)
    edge, n = _OPTS.edgeitems, a.shape[0]
    if summarize and n > 2 * edge:
        rows = list(range(edge)) + [None] + list(range(n - edge, n))
    else:
        rows = list(range(n))
    parts = ["..." if i is None else _nested(a[i], indent + 1, summarize, fmt) for i in rows]
    # Sub-blocks of rank k are separated by k blank-line-producing newlines
    # (rows: one newline, 2-D blocks: a blank line, ...).
    sep = "," + "\n" * (a.ndim - 1) + " " * (indent + 1)
    return "[" + sep.join(parts) + "]"


def _add_suffixes(text, suffixes, indent):
    """Append ``, key=value`` parts, moving one to a new line if it would
    overflow.  The current-line length is over-counted by 2, as in PyTorch
    (so that the layout decisions are identical)."""
    out = [text]
    line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if line_len + len(suffix) + 2 > _OPTS.linewidth:
            out.append(",\n" + " " * indent + suffix)
            line_len = indent + len(suffix)
        else:
            out.append(", " + suffix)
            line_len += len(suffix) + 2
    out.append(")")
    return "".join(out)


def format_tensor(arr, dtype_name, device=None, extras=()) -> str:
    """Return the repr of a tensor, e.g. ``tensor([1., 2.], dtype=oneflow.float32)``.

    arr:        numpy array with the values (bfloat16: float32 values).
    dtype_name: 'float32', 'int64', 'bool', ... (a 'oneflow.' prefix is allowed).
    device:     None/'cpu' prints nothing, otherwise ``device='cuda:0'``.
    extras:     preformatted suffixes such as 'requires_grad=True' or
                'grad_fn=<AddBackward0>', appended after the dtype.
    """
    a = np.asarray(arr)
    dtype_name = str(dtype_name)
    if dtype_name.startswith("oneflow."):
        dtype_name = dtype_name[len("oneflow.") :]
    is_complex = a.dtype.kind == "c"
    floating = a.dtype.kind == "f" or dtype_name in _FLOAT_NAMES
    if is_complex:
        a = a.astype(np.complex128)
    elif floating:
        # float64 holds float16/bfloat16/float32 values exactly; Python then
        # formats every value as a double, which is what PyTorch does too.
        a = a.astype(np.float64)
    prefix = "tensor("
    indent = len(prefix)
    suffixes = []
    if device is not None and str(device).split(":")[0] != "cpu":
        suffixes.append(f"device='{device}'")
    if a.size == 0:
        body = "[]"
        # "[]" alone reads as shape (0,), so any other shape is spelled out.
        if a.ndim != 1:
            suffixes.append(f"size={tuple(a.shape)}")
    else:
        if not _OPTS.edgeitems:
            # With no edge items a summary shows nothing; PyTorch then always
            # states the size instead.
            suffixes.append(f"size={tuple(a.shape)}")
        summarize = a.size > _OPTS.threshold
        shown = _summarized(a, _OPTS.edgeitems) if summarize else a
        fmt = _ComplexFormatter(shown) if is_complex else _Formatter(shown, floating)
        body = _nested(a, indent, summarize, fmt)
    suffixes.append("dtype=oneflow." + dtype_name)
    suffixes.extend(extras)
    return _add_suffixes(prefix + body, suffixes, indent)
