"""``oneflow.placement``: the ranks (processes) that hold a global tensor, and their device type."""
from .. import env
from .._export import export


class placement:
    """``flow.placement(type, ranks)``: ``type`` "cpu" or "cuda" ("gpu" is "cuda"); ``ranks`` a list
    of process ranks (one device each: a process's current CUDA device), or a nested list of them
    (a hierarchy: ``ranks=[[0, 1], [2, 3]]`` is a 2 x 2 mesh, each tensor laid out by one SBP per
    mesh axis). OneFlow's older form ``flow.placement("cpu", {0: [0, 1]})`` (machine -> devices,
    one process per device) names devices by machine: device d of machine m is rank
    m * (processes per machine) + d, as the launcher numbers them (`--nnodes`, `--nproc_per_node`)."""

    __slots__ = ("_type", "_ranks", "_hierarchy")

    def __init__(self, type=None, ranks=None, *, device_type=None):  # noqa: A002 - OneFlow's name
        t = type if type is not None else device_type
        if t == "gpu":
            t = "cuda"
        if t not in ("cpu", "cuda"):
            raise ValueError(f"placement: type must be 'cpu' or 'cuda', got {t!r}")
        if isinstance(ranks, dict):  # {machine: [devices]}
            ranks = _machine_ranks(ranks)
        if isinstance(ranks, range):
            ranks = list(ranks)
        if hasattr(ranks, "tolist") and hasattr(ranks, "ndim"):  # a numpy array of ranks (OneFlow accepts
            ranks = ranks.tolist()  # it; placement.ranks of an n-d array is its nesting)
        if not isinstance(ranks, (list, tuple)) or not ranks:
            raise TypeError(f"placement: ranks must be a non-empty list of ints, got {ranks!r}")
        hierarchy = _mesh_shape(ranks)
        ranks = _flat(ranks)
        if any(isinstance(r, bool) or not isinstance(r, int) or r < 0 for r in ranks):
            raise TypeError(f"placement: ranks must be non-negative ints, got {ranks!r}")
        if len(set(ranks)) != len(ranks):
            raise ValueError(f"placement: ranks repeat: {ranks!r}")
        object.__setattr__(self, "_type", t)
        object.__setattr__(self, "_ranks", tuple(ranks))
        object.__setattr__(self, "_hierarchy", hierarchy)

    def __setattr__(self, name, value):
        raise AttributeError("placement is immutable")

    @classmethod
    def all(cls, type):  # noqa: A002
        """Every rank of the job (joining the launcher's job first if needed, as runtime.world)."""
        env.init()
        return cls(type, list(range(env.get_world_size())))

    @property
    def type(self):
        return self._type

    device_type = type

    @property
    def ranks(self):
        """The ranks as a numpy array shaped as the hierarchy (OneFlow's: code reads
        `placement.ranks.shape` for the mesh's rank count)."""
        import numpy as np
        return np.array(self._ranks, dtype=np.int64).reshape(self._hierarchy)

    @property
    def hierarchy(self):
        return self._hierarchy

    def __eq__(self, other):
        return isinstance(other, placement) and (self._type, self._ranks, self._hierarchy) == \
            (other._type, other._ranks, other._hierarchy)

    def __hash__(self):
        return hash((self._type, self._ranks, self._hierarchy))

    def __repr__(self):
        return f"oneflow.placement(type=\"{self._type}\", ranks={_nest(list(self._ranks), self._hierarchy)})"

    def __reduce__(self):
        return (placement, (self._type, _nest(list(self._ranks), self._hierarchy)))


def _mesh_shape(ranks):
    """The shape of a (nested) rank list; TypeError when it is ragged."""
    if not isinstance(ranks, (list, tuple)):
        return ()
    if not ranks:
        raise TypeError("placement: an empty list among the ranks")
    inner = [_mesh_shape(r) for r in ranks]
    if any(i != inner[0] for i in inner):
        raise TypeError(f"placement: ranks must be a list of ints or a regular nested list, got {ranks!r}")
    return (len(ranks),) + inner[0]


def _flat(ranks):
    if isinstance(ranks, (list, tuple)):
        return [r for sub in ranks for r in _flat(sub)]
    return [ranks]


def _nest(flat, shape):
    if len(shape) == 1:
        return flat
    step = len(flat) // shape[0]
    return [_nest(flat[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])]


def _machine_ranks(devices):
    """The ranks of OneFlow's {machine: [devices]} form: device d of machine m is rank
    m * (processes per machine) + d (oneflow.env.get_local_size(); one machine needs none)."""
    machines = sorted(devices)
    if any(isinstance(m, bool) or not isinstance(m, int) or m < 0 for m in machines):
        raise TypeError(f"placement: the machine ids must be non-negative ints, got {list(devices)!r}")
    per = None  # (one machine: the devices are the ranks)
    if machines != [0] or env.get_node_size() > 1:
        per = env.get_local_size()
        nodes = env.get_node_size()
        if machines[-1] >= nodes:
            raise ValueError(f"placement: machine {machines[-1]} named, but the job has {nodes} machine(s) "
                             f"(ranks 0 .. {env.get_world_size() - 1}, {per} per machine)")
    ranks = []
    for m in machines:
        ds = devices[m]
        if isinstance(ds, int):
            ds = [ds]
        ds = list(ds)
        if any(isinstance(d, bool) or not isinstance(d, int) or d < 0 for d in ds):
            raise TypeError(f"placement: the devices of machine {m} must be non-negative ints, got {ds!r}")
        if per is not None and any(d >= per for d in ds):
            raise ValueError(f"placement: machine {m} has {per} processes (devices 0 .. {per - 1}), got {ds!r}")
        ranks += [d if per is None else m * per + d for d in ds]
    return ranks


@export("flow.env.all_device_placement")
def all_device_placement(device_type):
    """The placement of every rank of the job on `device_type` ("cpu" or "cuda"; one device per
    process here), as upstream's oneflow.env.all_device_placement."""
    return placement.all(device_type)
