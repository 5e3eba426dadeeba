"""``oneflow.placement``: the ranks (processes) that hold a global tensor, and their device type."""


class placement:
    """``flow.placement(type, ranks)``: ``type`` "cpu" or "cuda" ("gpu" is "cuda"); ``ranks`` a list
    of process ranks (one device each: a process's current CUDA device). OneFlow's older form
    ``flow.placement("cpu", {0: [0, 1]})`` (machine -> devices, one process per device) is read as
    ranks [0, 1] on machine 0. Multi-dimensional rank arrays (hierarchies) are not built yet."""

    __slots__ = ("_type", "_ranks")

    def __init__(self, type=None, ranks=None, *, device_type=None):  # noqa: A002 - OneFlow's name
        t = type if type is not None else device_type
        if t == "gpu":
            t = "cuda"
        if t not in ("cpu", "cuda"):
            raise ValueError(f"placement: type must be 'cpu' or 'cuda', got {t!r}")
        if isinstance(ranks, dict):  # {machine: [devices]}
            if list(ranks) != [0]:
                raise NotImplementedError("placement: several machines in one placement are not supported yet")
            ranks = list(ranks[0])
        if isinstance(ranks, range):
            ranks = list(ranks)
        if not isinstance(ranks, (list, tuple)) or not ranks:
            raise TypeError(f"placement: ranks must be a non-empty list of ints, got {ranks!r}")
        if any(isinstance(r, (list, tuple)) for r in ranks):
            raise NotImplementedError("placement: multi-dimensional ranks (a hierarchy) are not supported yet")
        if any(isinstance(r, bool) or not isinstance(r, int) or r < 0 for r in ranks):
            raise TypeError(f"placement: ranks must be non-negative ints, got {ranks!r}")
        if len(set(ranks)) != len(ranks):
            raise ValueError(f"placement: ranks repeat: {ranks!r}")
        object.__setattr__(self, "_type", t)
        object.__setattr__(self, "_ranks", tuple(ranks))

    def __setattr__(self, name, value):
        raise AttributeError("placement is immutable")

    @classmethod
    def all(cls, type):  # noqa: A002
        """Every rank of the job."""
        from .runtime import world
        return cls(type, list(range(world()[1])))

    @property
    def type(self):
        return self._type

    device_type = type

    @property
    def ranks(self):
        return list(self._ranks)

    @property
    def hierarchy(self):
        return (len(self._ranks),)

    def __eq__(self, other):
        return isinstance(other, placement) and (self._type, self._ranks) == (other._type, other._ranks)

    def __hash__(self):
        return hash((self._type, self._ranks))

    def __repr__(self):
        return f"oneflow.placement(type=\"{self._type}\", ranks={list(self._ranks)})"

    def __reduce__(self):
        return (placement, (self._type, list(self._ranks)))
