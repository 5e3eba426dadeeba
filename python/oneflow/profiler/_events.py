"""The profiler's results: FunctionEvent (one op call or record_function range), EventList
(with key_averages, table, export_chrome_trace) and FunctionEventAvg (per-name totals), with
PyTorch's names and table layout. Times are microseconds."""
import json
import os


class FunctionEvent:
    def __init__(self, name, start_ns, end_ns, thread, is_user_annotation=False):
        self.name, self.thread = name, thread
        self.time_range_start, self.time_range_end = start_ns / 1e3, end_ns / 1e3
        self.is_user_annotation = is_user_annotation
        self.cpu_children = []
        self.cpu_parent = None

    key = property(lambda self: self.name)
    cpu_time_total = property(lambda self: self.time_range_end - self.time_range_start)
    self_cpu_time_total = property(lambda self: self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children))
    device_time_total = cuda_time_total = self_device_time_total = self_cuda_time_total = property(lambda self: 0.0)
    count = property(lambda self: 1)

    def __repr__(self):
        return (f"<FunctionEvent name={self.name} cpu_time_total={self.cpu_time_total:.3f}us "
                f"self_cpu_time_total={self.self_cpu_time_total:.3f}us thread={self.thread}>")


class FunctionEventAvg:
    """The totals of the events of one name."""

    def __init__(self, key):
        self.key, self.count = key, 0
        self.cpu_time_total = self.self_cpu_time_total = 0.0
        self.is_user_annotation = False

    def add(self, ev):
        self.count += 1
        self.cpu_time_total += ev.cpu_time_total
        self.self_cpu_time_total += ev.self_cpu_time_total
        self.is_user_annotation = ev.is_user_annotation
        return self

    cpu_time = property(lambda self: self.cpu_time_total / max(self.count, 1))
    self_cpu_time = property(lambda self: self.self_cpu_time_total / max(self.count, 1))
    device_time_total = cuda_time_total = self_device_time_total = self_cuda_time_total = property(lambda self: 0.0)

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total:.3f}us "
                f"cpu_time={self.cpu_time_total:.3f}us count={self.count}>")


def _fmt_time(us):
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


class EventList(list):
    def __init__(self, events=(), nested=False):
        super().__init__(events)
        if nested:
            self._nest()

    def _nest(self):
        """Parents: the record_function ranges holding an event on the same thread."""
        stacks = {}
        for ev in sorted(self, key=lambda e: (e.thread, e.time_range_start, -e.time_range_end)):
            stack = stacks.setdefault(ev.thread, [])
            while stack and stack[-1].time_range_end <= ev.time_range_start:
                stack.pop()
            if stack:
                ev.cpu_parent = stack[-1]
                stack[-1].cpu_children.append(ev)
            stack.append(ev)

    @property
    def self_cpu_time_total(self):
        return sum(e.self_cpu_time_total for e in self)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0):
        groups = {}
        for ev in self:
            groups.setdefault(ev.key, FunctionEventAvg(ev.key)).add(ev)
        return EventList(groups.values())

    def total_average(self):
        total = FunctionEventAvg("Total")
        for ev in self:
            total.count += ev.count
            total.cpu_time_total += ev.cpu_time_total
            total.self_cpu_time_total += ev.self_cpu_time_total
        return total

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False):
        rows = [e for e in self if not top_level_events_only or getattr(e, "cpu_parent", None) is None]
        if sort_by is not None:
            rows.sort(key=lambda e: getattr(e, sort_by), reverse=True)
        if row_limit is not None and row_limit > 0:
            rows = rows[:row_limit]
        self_total = self.self_cpu_time_total or 1.0
        name_w = min(max(len("Name"), *(len(e.key) for e in rows)) if rows else 4, max_name_column_width)
        cols = ["Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg", "# of Calls"]
        sep = "-" * name_w + "  " + "  ".join("-" * 12 for _ in cols)
        lines = [header] if header else []
        lines += [sep, f"{'Name':>{name_w}}  " + "  ".join(f"{c:>12}" for c in cols), sep]
        for e in rows:
            name = e.key if len(e.key) <= name_w else e.key[:name_w - 3] + "..."
            vals = [f"{100 * e.self_cpu_time_total / self_total:.2f}%", _fmt_time(e.self_cpu_time_total),
                    f"{100 * e.cpu_time_total / self_total:.2f}%", _fmt_time(e.cpu_time_total),
                    _fmt_time(e.cpu_time_total / max(e.count, 1)), str(e.count)]
            lines.append(f"{name:>{name_w}}  " + "  ".join(f"{v:>12}" for v in vals))
        lines += [sep, f"Self CPU time total: {_fmt_time(self.self_cpu_time_total)}", ""]
        return "\n".join(lines)

    def __str__(self):
        return self.table()

    def export_chrome_trace(self, path):
        """Chrome's trace format (chrome://tracing, Perfetto, TensorBoard's profiler)."""
        pid = os.getpid()
        trace = [{"name": e.name, "ph": "X", "cat": "user_annotation" if e.is_user_annotation else "cpu_op",
                  "ts": e.time_range_start, "dur": e.cpu_time_total, "pid": pid, "tid": e.thread}
                 for e in self if isinstance(e, FunctionEvent)]
        with open(path, "w") as f:
            json.dump({"traceEvents": trace, "displayTimeUnit": "ms"}, f)
