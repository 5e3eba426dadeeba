"""The whole-model benchmarks (benchmarks/models, benchmarks/run.py): each model's oneflow twin,
given the torch twin's weights, computes the same outputs and gradients; each full-size model has
the reference architecture's parameter count; run.py measures and writes RESULTS.md end to end."""
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

from harness import flow

BENCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benchmarks")
sys.path.insert(0, BENCH)
from models import MODELS  # noqa: E402


def _twins(name):
    module = MODELS[name]
    cfg = module.SIZES["tiny"]
    torch.manual_seed(0)
    tm = module.build(torch, cfg)
    fm = module.build(flow, cfg)
    tstate = tm.state_dict()
    assert list(fm.state_dict()) == list(tstate), "the twins' parameter names differ"
    fm.load_state_dict({k: flow.tensor(v.detach().numpy()) for k, v in tstate.items()})
    return module, cfg, tm, fm


@pytest.mark.parametrize("name", sorted(MODELS))
def test_twins_compute_the_same(name):
    module, cfg, tm, fm = _twins(name)
    tm.eval()
    fm.eval()  # no dropout; batch norm from its running statistics
    t_in, t_target = module.batch(torch, cfg, np.random.default_rng(1))
    f_in, f_target = module.batch(flow, cfg, np.random.default_rng(1))
    t_out, f_out = tm(*t_in), fm(*f_in)
    np.testing.assert_allclose(f_out.detach().numpy(), t_out.detach().numpy(), rtol=1e-4, atol=1e-4)
    module.loss(torch, t_out, t_target).backward()
    module.loss(flow, f_out, f_target).backward()
    tgrads = dict(tm.named_parameters())
    for pname, p in fm.named_parameters():
        assert p.grad is not None, pname
        np.testing.assert_allclose(p.grad.numpy(), tgrads[pname].grad.numpy(), rtol=1e-3, atol=1e-4,
                                   err_msg=pname)


@pytest.mark.parametrize("name", sorted(n for n, m in MODELS.items() if m.REFERENCE_PARAMS))
def test_full_size_matches_reference_parameter_count(name):
    module = MODELS[name]
    with torch.device("meta"):  # sizes only: no memory for 100M-parameter models
        model = module.build(torch, module.SIZES["full"])
    assert sum(p.numel() for p in model.parameters()) == module.REFERENCE_PARAMS


def test_run_writes_results(tmp_path):
    out = tmp_path / "RESULTS.md"
    cmd = [sys.executable, os.path.join(BENCH, "run.py"), "--size", "tiny", "--suites", "models",
           "--models", "cnn", "--no-compiled", "--rounds", "2", "--target", "0.01", "--out", str(out)]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-2000:]
    text = out.read_text()
    for needle in ("| cnn/train |", "| cnn/infer |", "## Memory and start-up", "## Targets", "measured limits"):
        assert needle in text, needle
    rows = [line for line in text.splitlines() if line.startswith("| cnn/")]
    assert all("error" not in r.lower() and "n/a" not in r for r in rows), rows
