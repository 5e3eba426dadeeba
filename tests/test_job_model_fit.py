"""flow.Model.fit (INVENTORY C.8; _legacy/model.py): training, validation and checkpoint configs,
eager or through nn.Graph, against the same loop in PyTorch; its errors."""
import os

import numpy as np
import pytest
import torch

import oneflow as flow


pytestmark = pytest.mark.usefixtures("fresh_job_session")


class _Classifier(flow.Model):
    def __init__(self, n_opts=1):
        super().__init__()
        self.lin = flow.nn.Linear(4, 3)
        self.n_opts = n_opts

    def forward(self, x):
        return self.lin(x)

    def training_step(self, batch, optimizer_idx=0):
        x, y = batch
        return flow.nn.functional.cross_entropy(self(x), y)

    def validation_step(self, batch):
        x, y = batch
        return (self(x).argmax(1) == y).float().mean()

    def configure_optimizers(self):
        opt = flow.optim.SGD(self.parameters(), lr=0.5)
        return ([opt], [flow.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.5)])


def _batches():
    rs = np.random.RandomState(0)
    out = []
    for _ in range(4):
        x = rs.randn(8, 4).astype(np.float32)
        out.append((flow.tensor(x), flow.tensor(x[:, :3].argmax(1))))
    return out


@pytest.mark.parametrize("mode", ["eager", "graph"])
def test_model_fit_matches_a_torch_loop(mode, tmp_path):
    flow.manual_seed(3)
    m = _Classifier()
    tlin = torch.nn.Linear(4, 3)
    tlin.load_state_dict({k: torch.from_numpy(v.numpy().copy()) for k, v in m.lin.state_dict().items()})
    data = _batches()
    train = flow.model.TrainingConfig().config_data(data).config_execution_mode(mode)
    val = flow.model.ValidationConfig().config_data(data).config_step_interval(2)
    ckpt = flow.model.CheckpointConfig().config_save(str(tmp_path), step_interval=5)
    seen = {"train": [], "val": []}

    class Record(flow.model.Callback):
        def on_training_step_end(self, outputs, step_idx, optimizer_idx):
            seen["train"].append((step_idx, float(outputs)))

        def on_validation_step_end(self, outputs, step_idx):
            seen["val"].append(step_idx)

    m.fit(training_config=train, validation_config=val, checkpoint_config=ckpt, callbacks=Record(), max_steps=10)
    topt = torch.optim.SGD(tlin.parameters(), lr=0.5)
    tsch = torch.optim.lr_scheduler.StepLR(topt, step_size=3, gamma=0.5)
    for step in range(10):
        x, y = data[step % 4]
        loss = torch.nn.functional.cross_entropy(tlin(torch.from_numpy(x.numpy())), torch.from_numpy(y.numpy()))
        assert seen["train"][step][1] == pytest.approx(loss.item(), rel=1e-5)
        topt.zero_grad()
        loss.backward()
        topt.step()
        tsch.step()
    np.testing.assert_allclose(m.lin.weight.numpy(), tlin.weight.detach().numpy(), rtol=1e-5, atol=1e-6)
    assert seen["val"] == [1, 3, 5, 7, 9]
    assert sorted(os.listdir(tmp_path)) == ["step_10", "step_5"]
    again = _Classifier()
    again.fit(training_config=flow.model.TrainingConfig().config_data(data),
              checkpoint_config=flow.model.CheckpointConfig().config_load(str(tmp_path / "step_10")), max_steps=0)
    np.testing.assert_array_equal(again.lin.weight.numpy(), m.lin.weight.numpy())
    assert m.method_overrided("validation_step") and not flow.Model.method_overrided(m, "nope")


def test_model_fit_errors():
    with pytest.raises(ValueError, match="config_data"):
        _Classifier().fit(max_steps=1)
    with pytest.raises(ValueError, match="mode must be"):
        flow.model.TrainingConfig().config_execution_mode("fast")

    class NoSteps(flow.Model):
        pass

    with pytest.raises(NotImplementedError, match="training_step"):
        NoSteps().fit(training_config=flow.model.TrainingConfig().config_data([1]), max_steps=1)
