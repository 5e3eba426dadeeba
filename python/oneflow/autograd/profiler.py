"""oneflow.autograd.profiler: the legacy profiler interface (torch.autograd.profiler.profile:
`with profile() as prof: ...; prof.key_averages().table()`) over oneflow.profiler's recorder."""
from ..profiler import EventList, FunctionEvent, FunctionEventAvg, record_function  # noqa: F401


class profile:  # noqa: N801 - torch's name
    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False,
                 with_flops=False, profile_memory=False, with_stack=False, with_modules=False,
                 use_kineto=False, use_cpu=True, experimental_config=None, acc_events=False,
                 custom_trace_id_callback=None):
        self.enabled = enabled
        self.function_events = None
        self._prof = None

    def __enter__(self):
        if self.enabled:
            from .. import profiler
            self._prof = profiler.profile()
            self._prof.start()
        return self

    def __exit__(self, *exc):
        if self._prof is not None:
            self._prof.stop()
            self.function_events = self._prof.events()
        return False

    def _events(self):
        if self.function_events is None:
            raise RuntimeError("Profiler didn't finish running")
        return self.function_events

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0):
        return self._events().key_averages()

    def total_average(self):
        return self._events().total_average()

    def table(self, sort_by=None, row_limit=100, **kwargs):
        return self._events().table(sort_by=sort_by, row_limit=row_limit, **kwargs)

    @property
    def self_cpu_time_total(self):
        return self._events().self_cpu_time_total

    def export_chrome_trace(self, path):
        self._events().export_chrome_trace(path)

    def __str__(self):
        return str(self._events())
