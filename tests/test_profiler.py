"""oneflow.profiler and autograd.profiler: the ops a region runs (counted as PyTorch's profiler
counts the same top-level ops), record_function ranges and their self time, key_averages and
its table, schedules with on_trace_ready, Chrome traces, the legacy interface."""
import json

import pytest
import torch

from harness import SHIM, flow

pytestmark = pytest.mark.skipif(bool(SHIM), reason="oneflow's profiler")


def _work(lib, n):
    x = lib.ones(8, 8)
    for _ in range(n):
        x = lib.relu(x * 2.0).sum(0, keepdim=True).expand(8, 8).contiguous()
    return x


def _counts(averages, names, prefix=""):
    by_key = {e.key: e.count for e in averages}
    return {n: by_key.get(prefix + n, 0) for n in names}


def test_ops_counted_as_torch_profiler_counts_them():
    with flow.profiler.profile() as fp:
        _work(flow, 3)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as tp:
        _work(torch, 3)
    names = ["relu", "mul", "sum", "ones"]
    assert _counts(fp.key_averages(), names) == _counts(tp.key_averages(), names, "aten::")
    assert _counts(fp.key_averages(), names)["relu"] == 3
    for e in fp.events():
        assert e.cpu_time_total >= 0 and not e.is_user_annotation
    with flow.profiler.profile() as fp2:
        pass
    assert len(fp2.events()) == 0  # nothing recorded outside a profile


def test_record_function_ranges_hold_their_ops():
    x = flow.randn(16, 16)
    with flow.profiler.profile() as prof:
        with flow.profiler.record_function("block"):
            for _ in range(4):
                x = flow.tanh(x @ x)

        @flow.profiler.record_function("decorated")
        def f(t):
            return t + 1

        f(x)
    evs = prof.events()
    block = [e for e in evs if e.name == "block"]
    assert len(block) == 1 and block[0].is_user_annotation
    children = block[0].cpu_children
    assert sorted(c.name for c in children) == ["matmul"] * 4 + ["tanh"] * 4
    assert block[0].cpu_time_total >= sum(c.cpu_time_total for c in children)
    assert block[0].self_cpu_time_total == pytest.approx(
        block[0].cpu_time_total - sum(c.cpu_time_total for c in children))
    dec = [e for e in evs if e.name == "decorated"]
    assert len(dec) == 1 and [c.name for c in dec[0].cpu_children] == ["add"]
    table = prof.key_averages().table(sort_by="cpu_time_total", row_limit=10)
    for text in ("Name", "Self CPU %", "CPU total", "# of Calls", "matmul", "block", "Self CPU time total"):
        assert text in table
    rows = [ln for ln in table.splitlines() if ln.strip().startswith(("matmul", "block", "tanh", "add", "decorated"))]
    assert rows[0].strip().startswith("block")  # the largest total first
    avg = prof.key_averages()
    assert {e.key: e.count for e in avg}["matmul"] == 4
    total = avg.total_average()
    assert total.count == len(evs)


def test_backward_ops_are_recorded():
    w = flow.randn(4, requires_grad=True)
    with flow.profiler.profile() as prof:
        (w * w).sum().backward()
    with torch.profiler.profile() as tp:
        tw = torch.randn(4, requires_grad=True)
        (tw * tw).sum().backward()
    nodes = {"MulBackward0", "SumBackward0"}
    assert nodes <= {e.key for e in tp.key_averages()}  # PyTorch's names for the graph's nodes
    nodes.add("AccumulateGrad")  # PyTorch: torch::autograd::AccumulateGrad
    evs = prof.events()
    got = [e for e in evs if e.name in nodes]
    assert sorted(e.name for e in got) == sorted(nodes)
    backward = [e for e in evs if e.name == "backward"]
    assert len(backward) == 1 and all(e.cpu_parent is backward[0] for e in got)


def test_schedule_and_on_trace_ready(tmp_path):
    saved = []
    sched = flow.profiler.schedule(wait=1, warmup=1, active=2, repeat=1)
    acts = [sched(i) for i in range(6)]
    ref = torch.profiler.schedule(wait=1, warmup=1, active=2, repeat=1)
    assert [a.name for a in acts] == [ref(i).name for i in range(6)]
    with flow.profiler.profile(schedule=sched, on_trace_ready=lambda p: saved.append(
            sorted(e.name for e in p.events() if e.is_user_annotation))) as prof:
        for i in range(6):
            with flow.profiler.record_function(f"step{i}"):
                flow.ones(2).add(i)
            prof.step()
    assert saved == [["step2", "step3"]]
    handler = flow.profiler.tensorboard_trace_handler(str(tmp_path), worker_name="w")
    with flow.profiler.profile(on_trace_ready=handler):
        flow.ones(3).exp()
    files = list(tmp_path.iterdir())
    assert len(files) == 1 and files[0].name.startswith("w.") and files[0].name.endswith(".pt.trace.json")
    trace = json.loads(files[0].read_text())["traceEvents"]
    assert {"ones", "exp"} <= {e["name"] for e in trace} and all(e["ph"] == "X" for e in trace)
    with pytest.raises(ValueError):
        flow.profiler.schedule(wait=0, warmup=0, active=0)


def test_chrome_trace_and_nesting_errors(tmp_path):
    with flow.profiler.profile() as prof:
        with flow.profiler.record_function("r"):
            flow.zeros(3).sin()
    path = tmp_path / "t.json"
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())["traceEvents"]
    by_name = {e["name"]: e for e in trace}
    assert by_name["r"]["cat"] == "user_annotation" and by_name["sin"]["cat"] == "cpu_op"
    assert by_name["r"]["ts"] <= by_name["sin"]["ts"] and by_name["sin"]["dur"] <= by_name["r"]["dur"]
    with flow.profiler.profile():
        with pytest.raises(RuntimeError, match="another profiler is already running"):
            flow.profiler.profile().start()
    assert flow.profiler.ProfilerActivity.CPU in flow.profiler.supported_activities()


def test_legacy_autograd_profiler():
    p = flow.autograd.profiler.profile()
    with pytest.raises(RuntimeError, match="didn't finish"):
        p.key_averages()
    with p:
        with flow.autograd.profiler.record_function("legacy"):
            flow.ones(5).cos()
    names = {e.key for e in p.key_averages()}
    assert {"legacy", "ones", "cos"} <= names
    assert "cos" in p.table(sort_by="self_cpu_time_total") and p.self_cpu_time_total >= 0
    assert p.total_average().count == len(p.function_events)
    with flow.autograd.profiler.profile(enabled=False) as off:
        flow.ones(2)
    assert off.function_events is None
