"""``flow.config`` and the 0.x ``flow.env`` setters: the session's resource and runtime settings
of OneFlow 0.x (``flow.config.gpu_device_num(8)``, ``flow.env.log_dir("./log")``...).

In OneFlow 0.x these filled the session's ConfigProto before it started: the devices and machines
a job is spread over, thread pools, RDMA / NCCL buffers. Here a job runs on one device of this
machine (its placement scope's, else its inputs', else the CPU; docs/job_functions.md), so each
setter is checked and recorded in ``SETTINGS`` (``current_resource()`` and the session's
``config_proto`` read it) and, where this machine has the thing it sets, applies it: see each
function's docstring. Settings of hardware this build does not drive (RDMA, NCCL fusion and
streams, pinned-memory reservations) are accepted, checked and recorded, as a 0.x script run on a
machine without them needs.
"""
import ctypes
import os

SETTINGS = {}          # name -> value given (flow.config.* and flow.env.*)
_loaded_libraries = []  # handles of flow.config.load_library (kept alive)


def _count(name, n):
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"config.{name}: expected a non-negative int, got {n!r}")
    SETTINGS[name] = n


def _flag(name, val):
    if not isinstance(val, bool):
        raise TypeError(f"config.{name}: expected a bool, got {type(val).__name__}")
    SETTINGS[name] = val


def _positive(name, v):
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0:
        raise ValueError(f"config.{name}: expected a non-negative number, got {v!r}")
    SETTINGS[name] = v


# ---- devices and machines ----

def gpu_device_num(val):
    """GPUs per machine a job spreads its batch over. A job runs on one device here; asking for
    more GPUs than the machine has is an error (as OneFlow's session start), and 0 GPUs on a
    machine without CUDA is what the 0.x scripts' CPU runs give."""
    from .. import cuda
    _count("gpu_device_num", val)
    have = cuda.device_count() if cuda.is_available() else 0
    if val > have and have > 0:
        del SETTINGS["gpu_device_num"]
        raise ValueError(f"config.gpu_device_num: {val} GPUs asked for, this machine has {have}")


def cpu_device_num(val):
    """CPU devices per machine (OneFlow's CPU 'devices' are thread streams): recorded."""
    _count("cpu_device_num", val)


def machine_num(val):
    """Machines of the job: must be at most the processes launched (WORLD_SIZE), since this
    implementation starts no remote processes itself."""
    from .. import env
    _count("machine_num", val)
    if val > env.get_world_size():
        del SETTINGS["machine_num"]
        raise ValueError(f"config.machine_num: {val} machines asked for, {env.get_world_size()} processes "
                         "were launched (python -m oneflow.distributed.launch)")


def compute_thread_pool_size(val):
    """Threads of the compute pool: sets the CPU kernels' thread count (flow.set_num_threads)."""
    from .. import set_num_threads
    _count("compute_thread_pool_size", val)
    if val > 0:
        set_num_threads(val)


def enable_tensor_float_32_compute(val=True):
    """TF32 in CUDA matmuls and convolutions (no effect on CPU computations)."""
    _flag("enable_tensor_float_32_compute", val)
    from .. import backends
    cuda = getattr(backends, "cuda", None)
    if cuda is not None and hasattr(cuda, "matmul"):
        cuda.matmul.allow_tf32 = val
    if hasattr(backends, "cudnn"):
        backends.cudnn.allow_tf32 = val


# ---- model I/O ----

def enable_legacy_model_io(val=True):
    """0.x's switch between its two checkpoint formats. Both are the same snapshot format here
    (framework/serialization/_snapshot_format.py), so either setting reads and writes OneFlow's snapshots; recorded and
    answered by legacy_model_io_enabled()."""
    _flag("enable_legacy_model_io", val)


def legacy_model_io_enabled():
    return SETTINGS.get("enable_legacy_model_io", True)


def enable_model_io_v2(val=True):
    """The other side of enable_legacy_model_io (same snapshot format here)."""
    _flag("enable_model_io_v2", val)


def max_mdsave_worker_num(val):
    """Threads writing snapshots: checkpoints are written by this process's one thread."""
    _count("max_mdsave_worker_num", val)


def load_library(val):
    """Loads a shared library of custom ops into the process (ctypes, with its symbols global,
    as OneFlow's dlopen): its static registrations run now."""
    if not isinstance(val, str):
        raise TypeError(f"config.load_library: expected a path, got {type(val).__name__}")
    if not os.path.isfile(val):
        raise FileNotFoundError(f"config.load_library: no library {val}")
    _loaded_libraries.append(ctypes.CDLL(val, mode=ctypes.RTLD_GLOBAL))
    SETTINGS.setdefault("load_library", []).append(val)


load_library_now = load_library


# ---- accepted for hardware and runtimes this build does not drive (recorded, checked) ----

def _recorder(name, check):
    def setter(val=True):
        check(name, val)
    setter.__name__ = name
    setter.__doc__ = (f"OneFlow 0.x's `{name}`: tunes a runtime part this build does not have (RDMA "
                      "transport, NCCL streams, pinned-memory reservations, actor threads); checked and "
                      "recorded in config.SETTINGS, results are unchanged.")
    return setter


_ACCEPTED = {
    "collect_act_event": _flag, "comm_net_worker_num": _count, "disable_group_boxing_by_dst_parallel": _flag,
    "enable_debug_mode": _flag, "enable_mem_chain_merge": _flag, "nccl_use_compute_stream": _flag,
    "enable_numa_aware_cuda_malloc_host": _flag, "rdma_mem_block_mbyte": _count,
    "rdma_recv_msg_buf_mbyte": _count, "reserved_device_mem_mbyte": _count, "reserved_host_mem_mbyte": _count,
    "thread_enable_local_message_queue": _flag, "use_rdma": _flag,
}
for _n, _c in _ACCEPTED.items():
    globals()[_n] = _recorder(_n, _c)


class collective_boxing:  # noqa: N801 - flow.config.collective_boxing namespace
    """NCCL collective fusion settings: no NCCL collectives run in a one-device job; recorded."""


for _n, _c in {"enable_fusion": _flag, "nccl_enable_all_to_all": _flag, "nccl_enable_mixed_fusion": _flag,
               "nccl_fusion_all_gather": _flag, "nccl_fusion_all_reduce": _flag,
               "nccl_fusion_all_reduce_use_buffer": _flag, "nccl_fusion_broadcast": _flag,
               "nccl_fusion_max_ops": _count, "nccl_fusion_reduce": _flag, "nccl_fusion_reduce_scatter": _flag,
               "nccl_fusion_threshold_mb": _positive, "nccl_num_streams": _count,
               "num_callback_threads": _count}.items():
    setattr(collective_boxing, _n, staticmethod(_recorder("collective_boxing." + _n, _c)))

NAMES = ("gpu_device_num", "cpu_device_num", "machine_num", "compute_thread_pool_size",
         "enable_tensor_float_32_compute", "enable_legacy_model_io", "legacy_model_io_enabled",
         "enable_model_io_v2", "max_mdsave_worker_num", "load_library", "load_library_now") + tuple(_ACCEPTED)


# ---- flow.env (0.x): where the session logs and how machines reach each other ----

def log_dir(val):
    """The directory OneFlow writes its logs to: created now (a script's later writes there
    find it) and recorded; this build logs to stderr."""
    if not isinstance(val, str) or not val:
        raise ValueError(f"env.log_dir: expected a directory path, got {val!r}")
    os.makedirs(val, exist_ok=True)
    SETTINGS["log_dir"] = val


def _port(name, val):
    if isinstance(val, bool) or not isinstance(val, int) or not 0 < val < 65536:
        raise ValueError(f"env.{name}: expected a port number in 1..65535, got {val!r}")
    SETTINGS[name] = val


def ctrl_port(val):
    """The control port machines meet on: the launcher's MASTER_PORT (oneflow.distributed.launch
    --master_port) plays this part; recorded, and checked to be a port."""
    _port("ctrl_port", val)


def data_port(val):
    """The port of the data transport between machines: recorded (the process group's transport
    picks its own)."""
    _port("data_port", val)


def machine(val):
    """The job's machines ([{"addr": "192.168.1.1"}, ...] or a list of addresses): their number
    must match the processes launched; recorded."""
    from .. import env
    if isinstance(val, (str, dict)):
        val = [val]
    machines = []
    for m in val:
        if isinstance(m, str):
            m = {"addr": m}
        if not isinstance(m, dict) or not isinstance(m.get("addr"), str):
            raise ValueError(f"env.machine: each machine is an address or a dict with 'addr', got {m!r}")
        machines.append(dict(m))
    if not machines:
        raise ValueError("env.machine: no machines given")
    if len(machines) > env.get_world_size():
        raise ValueError(f"env.machine: {len(machines)} machines given, {env.get_world_size()} processes were "
                         "launched (python -m oneflow.distributed.launch --nnodes ...)")
    SETTINGS["machine"] = machines


def logtostderr(val=1):
    """Whether logs also go to stderr: this build's logs always do; recorded."""
    if isinstance(val, bool) or not isinstance(val, int) or val not in (0, 1):
        raise ValueError(f"env.logtostderr: expected 0 or 1, got {val!r}")
    SETTINGS["logtostderr"] = val


def logbuflevel(val):
    """The glog level up to which log lines are buffered: recorded (no glog here)."""
    if isinstance(val, bool) or not isinstance(val, int):
        raise ValueError(f"env.logbuflevel: expected an int, got {val!r}")
    SETTINGS["logbuflevel"] = val


def grpc_use_no_signal(val=True):
    """gRPC's signal handling of the control plane between machines: no gRPC here; recorded."""
    if not isinstance(val, bool):
        raise TypeError(f"env.grpc_use_no_signal: expected a bool, got {type(val).__name__}")
    SETTINGS["grpc_use_no_signal"] = val


ENV_NAMES = ("log_dir", "ctrl_port", "data_port", "machine", "logtostderr", "logbuflevel", "grpc_use_no_signal")
