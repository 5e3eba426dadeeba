"""oneflow.mock_torch: unmodified PyTorch scripts run on oneflow (in subprocesses, so the test
process's own torch is untouched), and enable()/disable() swap the modules back and forth."""

import os
import subprocess
import sys
import textwrap

import pytest

from harness import SHIM

pytestmark = pytest.mark.skipif(bool(SHIM), reason="oneflow's mock_torch")

# A plain PyTorch script: tensor ops, autograd, a module and a manual SGD loop.
SCRIPT = textwrap.dedent("""
    import torch
    import torch.nn.functional as F
    from torch import nn

    print("module", torch.__name__, F.__name__, nn.__name__)
    torch.manual_seed(0)
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = (x * x).sum()
    y.backward()
    print("grad", x.grad.tolist())
    print("ops", torch.matmul(x, x).detach().tolist(), F.relu(torch.tensor([-1.0, 2.0])).tolist())

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 1)

        def forward(self, z):
            return self.fc(z)

    net = Net()
    data = torch.randn(64, 3)
    target = data @ torch.tensor([[1.0], [-2.0], [0.5]]) + 0.3
    losses = []
    for step in range(60):
        loss = ((net(data) - target) ** 2).mean()
        for p in net.parameters():
            p.grad = None
        loss.backward()
        with torch.no_grad():
            for p in net.parameters():
                p -= 0.1 * p.grad
        losses.append(loss.item())
    print("loss", losses[0] > 10 * losses[-1], round(losses[-1], 4) < 0.01)
    print("dtype", torch.float32, isinstance(torch.zeros(2), torch.Tensor))
""")


def _run(args, tmp_path, script=SCRIPT, env_extra=None):
    path = tmp_path / "script.py"
    path.write_text(script)
    env = dict(os.environ, **(env_extra or {}))
    r = subprocess.run(
        [sys.executable, *args, str(path)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=str(tmp_path),
    )
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout.splitlines()


def test_python_m_mock_torch_runs_a_pytorch_script(tmp_path):
    out = _run(["-m", "oneflow.mock_torch"], tmp_path)
    assert out[0] == "module oneflow oneflow.nn.functional oneflow.nn"
    assert out[1] == "grad [[2.0, 4.0], [6.0, 8.0]]"
    assert out[2] == "ops [[7.0, 10.0], [15.0, 22.0]] [0.0, 2.0]"
    assert out[3] == "loss True True"
    assert out[4] == "dtype oneflow.float32 True"


def test_same_script_on_real_torch_agrees(tmp_path):
    out = _run([], tmp_path)
    assert out[0] == "module torch torch.nn.functional torch.nn"
    assert out[1:4] == [
        "grad [[2.0, 4.0], [6.0, 8.0]]",
        "ops [[7.0, 10.0], [15.0, 22.0]] [0.0, 2.0]",
        "loss True True",
    ]


def test_enable_disable_in_process(tmp_path):
    script = textwrap.dedent("""
        import torch as real
        import oneflow
        import oneflow.mock_torch as mock
        with mock.enable():
            import torch
            import torch.nn as nn
            from torch.nn import functional as F
            assert torch is oneflow and nn is oneflow.nn and F is oneflow.nn.functional
            assert mock.is_enabled()
            with mock.disable():
                import torch as t2
                assert t2 is real
            import torch as t3
            assert t3 is oneflow
        import torch
        assert torch is real and not mock.is_enabled()
        import torch.nn.functional as F2
        assert F2.__name__ == "torch.nn.functional"
        mock.enable()
        import torch
        assert torch is oneflow
        try:
            import torch.not_a_module
        except ModuleNotFoundError as e:
            assert "oneflow.not_a_module" in str(e)
        mock.disable()
        mock.enable(lazy=True)
        import torch
        assert torch.zeros(2).shape == (2,)
        placeholder = torch.some_api_oneflow_lacks
        try:
            placeholder(1)
        except NotImplementedError as e:
            assert "some_api_oneflow_lacks" in str(e)
        mock.disable()
        print("ok")
    """)
    assert _run([], tmp_path, script) == ["ok"]


def test_usage_message(tmp_path):
    r = subprocess.run(
        [sys.executable, "-m", "oneflow.mock_torch"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=str(tmp_path),
    )
    assert r.returncode == 2 and "usage" in r.stderr
