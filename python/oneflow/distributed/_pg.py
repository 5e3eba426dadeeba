"""The default process group and its sub-groups (Note [Process groups] in src/dist): how processes
find each other (env://, tcp://, file://, or a store), which group a call uses, and the rank
translation between a group and the world."""
import datetime
import enum
import ipaddress
import os
import socket
import warnings

from .. import _oneflow_internal as _C

GLOO = _C._gloo_available()
# a CUDA build that found NCCL (Note [NCCL groups]); only a CUDA build binds _nccl_available
NCCL = hasattr(_C, "_nccl_available") and _C._nccl_available()
AVAILABLE = GLOO or NCCL
_DEFAULT_TIMEOUT = datetime.timedelta(minutes=30)  # PyTorch's default for Gloo


class ReduceOp(enum.IntEnum):
    """The reductions of all_reduce / reduce / reduce_scatter (`dist.ReduceOp.SUM`, ...)."""
    SUM = 0
    PRODUCT = 1
    MIN = 2
    MAX = 3
    BAND = 4
    BOR = 5
    BXOR = 6
    AVG = 7  # SUM, then divided by the group's size (floating and complex tensors)


ReduceOp.RedOpType = ReduceOp  # PyTorch scripts also spell it dist.ReduceOp.RedOpType.SUM


class Backend(str):
    """Backend names: "gloo" (CPU tensors; CUDA ones through host memory), "nccl" (CUDA tensors on
    NCCL where the build has it, else as "gloo"), "cpu:gloo,cuda:nccl" (the default where NCCL
    is built); "mpi" is not available."""
    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    MPI = "mpi"

    def __new__(cls, name):
        if not isinstance(name, str):
            raise ValueError(f"Backend name must be a string, but got: {name!r}")
        value = name.lower()
        if value not in ("gloo", "nccl", "mpi", "undefined") and ":" not in value:
            raise ValueError(f"Invalid backend: '{name}' (available: gloo, nccl)")
        return super().__new__(cls, value)


def _store_timeout(timeout):
    if timeout is None:
        return _DEFAULT_TIMEOUT.total_seconds()
    if isinstance(timeout, datetime.timedelta):
        return timeout.total_seconds()
    return float(timeout)


class Store:
    """Base of the key-value stores processes meet through (set / get / wait)."""

    def __init__(self, impl, timeout):
        self._impl, self._timeout = impl, timeout

    def set(self, key, value):
        self._impl.set(key, value.encode() if isinstance(value, str) else bytes(value))

    def get(self, key):
        return self._impl.get(key)

    def wait(self, keys, timeout=None):
        self._impl.wait(list(keys), _store_timeout(timeout) if timeout is not None else self._timeout)

    def check(self, keys):
        """Whether every key is set (no waiting)."""
        return all(self._impl.check(k) for k in keys)

    def add(self, key, amount):
        return self._impl.add(key, int(amount))

    @property
    def timeout(self):
        return datetime.timedelta(seconds=self._timeout)

    def set_timeout(self, timeout):
        self._timeout = _store_timeout(timeout)


class TCPStore(Store):
    """A store served over TCP by the process created with is_master=True (Note [Rendezvous]):
    `TCPStore(host_name, port, world_size=None, is_master=False, timeout=timedelta(minutes=5))`.
    port=0 on the master picks a free port (the `port` property tells which)."""

    def __init__(self, host_name, port, world_size=None, is_master=False, timeout=datetime.timedelta(minutes=5),
                 wait_for_workers=True, multi_tenant=False, **kwargs):
        _require_available()
        t = _store_timeout(timeout)
        super().__init__(_C._Store.tcp(str(host_name), int(port), bool(is_master), t), t)
        self.host, self.world_size = str(host_name), world_size

    @property
    def port(self):
        return self._impl.port



class FileStore(Store):
    """A store every process can reach on a shared file system: `FileStore(path)`. (Gloo's file
    store keeps one file per key, so `path` is made a folder; as with PyTorch's, a path left from
    an earlier job must be removed first.)"""

    def __init__(self, file_name, world_size=-1):
        _require_available()
        os.makedirs(str(file_name), exist_ok=True)
        t = _DEFAULT_TIMEOUT.total_seconds()
        super().__init__(_C._Store.file(str(file_name), t), t)
        self.path, self.world_size = str(file_name), world_size


class PrefixStore(Store):
    """Another store's keys under `prefix/`."""

    def __init__(self, prefix, store):
        super().__init__(store._impl, store._timeout)
        self._prefix, self.underlying_store = prefix, store

    def set(self, key, value):
        self.underlying_store.set(f"{self._prefix}/{key}", value)

    def get(self, key):
        return self.underlying_store.get(f"{self._prefix}/{key}")

    def wait(self, keys, timeout=None):
        self.underlying_store.wait([f"{self._prefix}/{k}" for k in keys], timeout)

    def check(self, keys):
        return self.underlying_store.check([f"{self._prefix}/{k}" for k in keys])

    def add(self, key, amount):
        return self.underlying_store.add(f"{self._prefix}/{key}", amount)


class _Done:
    """A point-to-point transfer that completed when it was enqueued (NCCL's)."""

    def __init__(self, peer):
        self.peer = peer

    def wait(self):
        return self.peer


class ProcessGroup:
    """A group of processes: the world (`group.WORLD`) or one made by `new_group(ranks)`. Its CPU
    tensors travel over Gloo; its CUDA tensors over NCCL when the backend names it and the build
    has it (one communicator per device, made at the first CUDA collective), else through host
    memory over Gloo."""

    def __init__(self, store, prefix, rank, size, ranks, backend, name, host, iface, timeout):
        self._store, self._prefix, self._rank, self._size = store, prefix, rank, size
        self._ranks, self._backend, self.group_name = list(ranks), backend, name
        self._monitored = 0  # monitored_barrier calls so far (their store keys)
        self._gloo = _C._ProcessGroup(store._impl, prefix, rank, size, host, iface, timeout) if GLOO else None
        self._nccl = {}
        self._alive = True

    def rank(self):
        return self._rank

    def size(self):
        return self._size

    def name(self):
        return self._backend

    def _uses_nccl(self):
        return NCCL and "nccl" in self._backend

    def _nccl_group(self, index):
        g = self._nccl.get(index)
        if g is None:
            g = self._nccl[index] = _C._NcclGroup(self._store._impl, self._prefix + "/nccl", self._rank, self._size,
                                                 index)
        return g

    def _route(self, t):
        """(the collective library's group, the device its buffers live on) for tensor t."""
        if t.device.type == "cuda" and self._uses_nccl():
            index = t.device.index if t.device.index is not None else _cuda_current()
            return self._nccl_group(index), t.device
        if self._gloo is not None:
            return self._gloo, _CPU
        index = _cuda_current()  # an NCCL-only build: host tensors are staged on the current GPU
        return self._nccl_group(index), f"cuda:{index}"

    def __repr__(self):
        return f"ProcessGroup(backend={self._backend}, ranks={self._ranks})"


_CPU = "cpu"


def _cuda_current():
    from .. import cuda
    return cuda.current_device()


def _is_nccl(impl):
    return NCCL and isinstance(impl, _C._NcclGroup)


class _NonMember:
    def __repr__(self):
        return "GroupMember.NON_GROUP_MEMBER"


class GroupMember:
    WORLD = None  # the default group once init_process_group ran
    NON_GROUP_MEMBER = _NonMember()


class _WorldProxy:
    """`dist.group.WORLD`: the default group, looked up when used."""

    @property
    def WORLD(self):
        return GroupMember.WORLD


group = _WorldProxy()


class _State:
    store = None        # the world's store
    world = None        # the default ProcessGroup
    groups = 0          # sub-groups made so far (their store prefixes)
    host = None         # this process's address for Gloo
    iface = ""
    timeout = None
    warned_nccl = False


def _require_available():
    if not AVAILABLE:
        raise RuntimeError("oneflow.distributed is not available: this build has neither Gloo nor NCCL "
                           "(install libgloo-dev, e.g. through scripts/setup.sh, and rebuild)")


def is_available():
    return AVAILABLE


def is_initialized():
    return _State.world is not None


def is_gloo_available():
    return GLOO


def is_nccl_available():
    return NCCL


def is_mpi_available():
    return False


def is_torchelastic_launched():
    return os.getenv("TORCHELASTIC_RUN_ID") is not None


def _env(name, what):
    value = os.environ.get(name)
    if value is None:
        raise ValueError(f"Error initializing the process group with env:// rendezvous: environment variable "
                         f"{name} expected, but not set ({what})")
    return value


def _local_address(master_addr, master_port):
    """The address the other processes reach this one at: GLOO_SOCKET_IFNAME's interface when set,
    the loopback address when the master is local, else the interface that routes to the master."""
    iface = os.environ.get("GLOO_SOCKET_IFNAME", "")
    if iface:
        return "", iface.split(",")[0]
    try:
        if master_addr in ("localhost", "") or ipaddress.ip_address(socket.gethostbyname(master_addr)).is_loopback:
            return "127.0.0.1", ""
    except (OSError, ValueError):
        pass
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect((master_addr, int(master_port)))
            return s.getsockname()[0], ""
    except OSError:
        return socket.gethostname(), ""


def _parse_rendezvous(init_method, rank, world_size, timeout):
    """(store, rank, world_size, master_addr, master_port) from the init method's URL."""
    if init_method is None or init_method == "env://":
        rank = int(_env("RANK", "the rank of this process")) if rank < 0 else rank
        world_size = int(_env("WORLD_SIZE", "the number of processes")) if world_size < 0 else world_size
        addr = _env("MASTER_ADDR", "the address of rank 0")
        port = int(_env("MASTER_PORT", "a free port on rank 0"))
    elif init_method.startswith("tcp://"):
        hostport = init_method[len("tcp://"):].split("?")[0]
        addr, _, port = hostport.rpartition(":")
        addr = addr.strip("[]")
        if not addr or not port.isdigit():
            raise ValueError(f"init_process_group: init_method '{init_method}' is not tcp://host:port")
        port = int(port)
        rank = int(os.environ.get("RANK", -1)) if rank < 0 else rank
        world_size = int(os.environ.get("WORLD_SIZE", -1)) if world_size < 0 else world_size
    elif init_method.startswith("file://"):
        if rank < 0 or world_size < 0:
            raise ValueError("init_process_group: a file:// init_method needs rank and world_size")
        return FileStore(init_method[len("file://"):]), rank, world_size, "127.0.0.1", 0
    else:
        raise ValueError(f"init_process_group: unsupported init_method '{init_method}' "
                         "(env://, tcp://host:port or file:///path)")
    if rank < 0 or world_size < 1:
        raise ValueError(f"init_process_group: needs rank and world_size (got rank={rank}, world_size={world_size})")
    _check_rank(rank, world_size)
    store = TCPStore(addr, port, world_size, is_master=(rank == 0), timeout=timeout)
    return store, rank, world_size, addr, port


def _check_rank(rank, world_size):
    if not 0 <= rank < world_size:
        raise ValueError(f"init_process_group: rank {rank} is outside a world of {world_size} processes")


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1, store=None,
                       group_name="", pg_options=None, device_id=None):
    """Joins this process to the job's default group (PyTorch's call). The processes meet through
    `store`, or through `init_method`: env:// (MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE, as the
    launcher sets them), tcp://host:port or file:///path."""
    _require_available()
    if _State.world is not None:
        raise RuntimeError("trying to initialize the default process group twice!")
    backend = Backend(backend or ("cpu:gloo,cuda:nccl" if NCCL and GLOO else "nccl" if NCCL else "gloo"))
    if backend == Backend.MPI:
        raise RuntimeError("init_process_group: the MPI backend is not available in this build (use gloo)")
    if backend == Backend.GLOO and not GLOO:
        raise RuntimeError("init_process_group: this build has no Gloo (install libgloo-dev and rebuild); "
                           "use the 'nccl' backend for CUDA tensors")
    if backend == Backend.NCCL and not NCCL and not _State.warned_nccl:
        _State.warned_nccl = True
        warnings.warn("init_process_group: this build has no NCCL; the 'nccl' group runs on Gloo, staging CUDA "
                      "tensors through host memory")
    t = _store_timeout(timeout)
    if store is None:
        store, rank, world_size, addr, port = _parse_rendezvous(init_method, rank, world_size, t)
    else:
        if rank < 0 or world_size < 1:
            raise ValueError("init_process_group: with a store, rank and world_size must be given")
        addr, port = getattr(store, "host", "127.0.0.1"), getattr(store, "port", 0)
    _check_rank(rank, world_size)
    host, iface = _local_address(addr, port)
    _State.world = ProcessGroup(store, "default_pg", rank, world_size, range(world_size), str(backend),
                                group_name or "default_pg", host, iface, t)
    _State.store, _State.host, _State.iface, _State.timeout = store, host, iface, t
    GroupMember.WORLD = _State.world
    from ._failures import record_uncaught_exceptions
    record_uncaught_exceptions(_State)  # Note [Failed processes]


def destroy_process_group(group=None):
    """Leaves the default group (and every sub-group with it), or forgets one sub-group."""
    if group is None or group is _State.world:
        _State.world = GroupMember.WORLD = None
        _State.store = None
        _State.groups = 0
    elif isinstance(group, ProcessGroup):
        group._alive = False


def _world():
    if _State.world is None:
        raise RuntimeError("Default process group has not been initialized, please make sure to call "
                           "init_process_group.")
    return _State.world


def _group(group):
    """The ProcessGroup a call with `group=` runs on; None for a non-member."""
    world = _world()
    if group is None or group is GroupMember.WORLD:
        return world
    if group is GroupMember.NON_GROUP_MEMBER:
        return None
    if not isinstance(group, ProcessGroup):
        raise TypeError(f"expected a ProcessGroup, got {type(group).__name__}")
    if not group._alive:
        raise RuntimeError("this process group was destroyed")
    return group


def new_group(ranks=None, timeout=None, backend=None, pg_options=None, use_local_synchronization=False,
              group_desc=None):
    """A group of some of the world's ranks. Every process of the world calls it, in the same order
    with the same ranks (PyTorch's rule); the others get GroupMember.NON_GROUP_MEMBER."""
    world = _world()
    n = world.size()
    ranks = sorted(range(n) if ranks is None else (int(r) for r in ranks))
    if len(set(ranks)) != len(ranks) or any(not 0 <= r < n for r in ranks):
        raise ValueError(f"new_group: ranks {ranks} must be distinct ranks of the world (0 .. {n - 1})")
    _State.groups += 1
    prefix = f"group{_State.groups}"
    if world.rank() not in ranks:
        return GroupMember.NON_GROUP_MEMBER
    t = _store_timeout(timeout) if timeout is not None else _State.timeout
    return ProcessGroup(_State.store, prefix, ranks.index(world.rank()), len(ranks), ranks,
                        str(Backend(backend or world._backend)), prefix, _State.host, _State.iface, t)


def get_rank(group=None):
    """This process's rank in `group` (the world by default); -1 outside it."""
    g = _group(group)
    return -1 if g is None else g.rank()


def get_world_size(group=None):
    g = _group(group)
    return -1 if g is None else g.size()


def get_backend(group=None):
    g = _group(group)
    if g is None:
        raise ValueError("Invalid process group specified")
    return g._backend


def get_process_group_ranks(group):
    g = _group(group)
    return list(g._ranks) if g is not None else []


def get_global_rank(group, group_rank):
    ranks = get_process_group_ranks(group)
    if not 0 <= group_rank < len(ranks):
        raise ValueError(f"Group rank {group_rank} is not part of group {group}")
    return ranks[group_rank]


def get_group_rank(group, global_rank):
    ranks = get_process_group_ranks(group)
    if global_rank not in ranks:
        raise ValueError(f"Global rank {global_rank} is not part of group {group}")
    return ranks.index(global_rank)


def _peer(g, global_rank, what):
    """A global rank argument (src / dst) as a rank of g."""
    try:
        return g._ranks.index(int(global_rank))
    except ValueError:
        raise ValueError(f"{what} {global_rank} is not a rank of {g}") from None
