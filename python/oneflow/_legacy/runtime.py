"""Process-level names of the job-function API: input definitions of the oldest style, the
module registry, machine / resource queries."""
from .. import typing as tp


class FixedTensorDef(tp.Numpy.Placeholder):
    """``def job(x=flow.FixedTensorDef((2, 3)))``: a static-shape input as a default value (the
    job's results then come back as futures: ``job(x).get().numpy()``)."""

    def __init__(self, shape, dtype=None, batch_axis=0, name=None):
        super().__init__(shape, dtype)


class MirroredTensorDef(tp.ListNumpy.Placeholder):
    """A dynamic-shape (mirrored) input as a default value: a list of one ndarray per device."""

    def __init__(self, shape, dtype=None, batch_axis=0, name=None):
        super().__init__(shape, dtype)


DeprecatedFixedTensorDef = FixedTensorDef
DeprecatedMirroredTensorDef = MirroredTensorDef

_modules = {}


def find_or_create_module(module_name, create, reuse=False):
    """The module registered under `module_name`, made by `create()` the first time (and again
    each time unless reuse)."""
    if not callable(create):
        raise TypeError("find_or_create_module: create must be callable")
    if module_name not in _modules or not reuse:
        _modules[module_name] = create()
    return _modules[module_name]


def current_machine_id():
    """This process's node (machine) rank: NODE_RANK of the launcher, else 0."""
    import os
    return int(os.environ.get("NODE_RANK", os.environ.get("GROUP_RANK", "0")))


class Resource:
    """What ``current_resource()`` describes: machines and devices of the job."""

    def __init__(self):
        import os
        from .. import cuda, get_num_threads
        self.machine_num = int(os.environ.get("NNODES", "1"))
        self.gpu_device_num = cuda.device_count() if cuda.is_available() else 0
        self.cpu_device_num = 1
        self.comm_net_worker_num = 0
        self.max_mdsave_worker_num = 0
        self.compute_thread_pool_size = get_num_threads()

    def __repr__(self):
        return (f"Resource(machine_num={self.machine_num}, gpu_device_num={self.gpu_device_num}, "
                f"cpu_device_num={self.cpu_device_num})")


def current_resource():
    return Resource()


_STRATEGIES = ("reuse_mem_priority", "parallelism_priority", "custom_parallelism", "mem_sharing_priority")


def inter_job_reuse_mem_strategy(strategy_str, job_set=None, **kwargs):
    """Memory sharing between jobs: each job here allocates and frees its own tensors, so the
    strategy is checked and recorded (``inter_job_reuse_mem_strategy.current``)."""
    if strategy_str not in _STRATEGIES:
        raise ValueError(f"inter_job_reuse_mem_strategy: strategy must be one of {_STRATEGIES}, got {strategy_str!r}")
    if strategy_str == "custom_parallelism" and "job_name_groups" not in kwargs:
        raise ValueError("inter_job_reuse_mem_strategy: custom_parallelism needs job_name_groups=")
    inter_job_reuse_mem_strategy.current = (strategy_str, kwargs)


inter_job_reuse_mem_strategy.current = None
