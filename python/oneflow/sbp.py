"""``oneflow.sbp``: how a global tensor is laid out over the ranks of its placement (docs/architecture.md §8,
docs/global_tensors.md). ``split(dim)``: each rank holds a slice along ``dim`` (the first
``size % n`` ranks one element more, as OneFlow's balanced splitter); ``broadcast``: every rank
holds the whole tensor; ``partial_sum``: every rank holds an addend of it."""


class sbp:
    """One SBP value (OneFlow's ``oneflow._oneflow_internal.sbp.sbp``)."""

    __slots__ = ("_kind", "_dim")

    def __init__(self, kind, dim=None):
        if kind not in ("S", "B", "P"):
            raise ValueError(f"oneflow.sbp: unknown kind {kind!r}")
        object.__setattr__(self, "_kind", kind)
        object.__setattr__(self, "_dim", dim)

    def __setattr__(self, name, value):
        raise AttributeError("oneflow.sbp values are immutable")

    def __eq__(self, other):
        return isinstance(other, sbp) and (self._kind, self._dim) == (other._kind, other._dim)

    def __hash__(self):
        return hash((self._kind, self._dim))

    def __repr__(self):
        if self._kind == "S":
            return f"oneflow.sbp.split(dim={self._dim})"
        return "oneflow.sbp.broadcast" if self._kind == "B" else "oneflow.sbp.partial_sum"

    def __call__(self):
        """Itself: upstream's SBP values are callable too (`flow.sbp.broadcast()` is
        `flow.sbp.broadcast`, `flow.sbp.split(0)()` is `flow.sbp.split(0)`), as code written for
        its 0.x API spells them."""
        return self

    def __reduce__(self):
        return (sbp, (self._kind, self._dim))


def split(dim):
    """Each rank holds a slice along ``dim`` (a non-negative int)."""
    if isinstance(dim, bool) or not isinstance(dim, int):
        raise TypeError(f"oneflow.sbp.split: dim must be an int, got {type(dim).__name__}")
    if dim < 0:
        raise SplitAxisError(f"oneflow.sbp.split: dim must be non-negative, got {dim} (Split axis must not be "
                             f"negative, but got {dim}!)")
    return sbp("S", dim)


class SplitAxisError(ValueError, RuntimeError):
    """A split axis out of range: a ValueError (a bad argument value, as raised before) and
    OneFlow's RuntimeError (upstream's check raises one: code catching either works). Its text
    carries upstream's too, in brackets."""


broadcast = sbp("B")
partial_sum = sbp("P")

__all__ = ["sbp", "split", "broadcast", "partial_sum"]
