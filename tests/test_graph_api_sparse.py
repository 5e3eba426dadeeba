"""``nn.Graph.add_optimizer(optim, is_sparse=True)`` (python/oneflow/nn/graph/sparse.py): OneFlow's
indexed-slices update -- an embedding table moves only in the rows a step looked up, and only those
rows' optimizer state changes -- against PyTorch's sparse embedding gradients with SparseAdam, and
against the row-wise SGD-with-momentum rule written out; plus the dense update it differs from."""
import numpy as np
import pytest
import torch

import oneflow as flow

IDS = [np.array([[1, 3, 3], [7, 1, 2]]), np.array([[0, 9, 9], [4, 4, 4]]), np.array([[3, 5, 6], [8, 8, 1]]),
       np.array([[2, 2, 2], [11, 0, 5]])]


class Model(flow.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = flow.nn.Embedding(12, 4)
        self.head = flow.nn.Linear(4, 1)

    def forward(self, ids):
        return self.head(self.emb(ids)).sum(dim=1)


class TModel(torch.nn.Module):
    def __init__(self, sparse):
        super().__init__()
        self.emb = torch.nn.Embedding(12, 4, sparse=sparse)
        self.head = torch.nn.Linear(4, 1)

    def forward(self, ids):
        return self.head(self.emb(ids)).sum(dim=1)


class Train(flow.nn.Graph):
    def __init__(self, model, emb_opt, head_opt, is_sparse=True):
        super().__init__()
        self.model = model
        self.add_optimizer(emb_opt, is_sparse=is_sparse)
        self.add_optimizer(head_opt)

    def build(self, ids, y):
        loss = flow.nn.functional.mse_loss(self.model(ids), y)
        loss.backward()
        return loss


def _y(k):
    return np.random.RandomState(k).randn(2, 1).astype(np.float32)


def _models(sparse_torch=True):
    flow.manual_seed(0)
    m = Model()
    tm = TModel(sparse_torch)
    tm.load_state_dict({k: torch.from_numpy(v.numpy().copy()) for k, v in m.state_dict().items()})
    return m, tm


def test_sparse_adam_equals_torch_sparse_adam():
    m, tm = _models()
    g = Train(m, flow.optim.Adam(m.emb.parameters(), lr=0.1, eps=1e-10),
              flow.optim.Adam(m.head.parameters(), lr=0.1, eps=1e-10))
    t_emb = torch.optim.SparseAdam(list(tm.emb.parameters()), lr=0.1, eps=1e-10)
    t_head = torch.optim.Adam(tm.head.parameters(), lr=0.1, eps=1e-10)
    start = m.emb.weight.numpy().copy()
    for k, ids in enumerate(IDS):
        loss = g(flow.tensor(ids), flow.tensor(_y(k)))
        t_emb.zero_grad()
        t_head.zero_grad()
        tl = torch.nn.functional.mse_loss(tm(torch.from_numpy(ids)), torch.from_numpy(_y(k)))
        tl.backward()
        t_emb.step()
        t_head.step()
        np.testing.assert_allclose(loss.item(), tl.item(), rtol=1e-5)
        np.testing.assert_allclose(m.emb.weight.numpy(), tm.emb.weight.detach().numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(m.head.weight.numpy(), tm.head.weight.detach().numpy(), rtol=1e-5, atol=1e-6)
    # row 10 was never looked up: untouched, its moments zero
    np.testing.assert_array_equal(m.emb.weight.numpy()[10], start[10])
    opt = g._optimizers[0][0]
    assert float(np.abs(opt.state[m.emb.weight]["exp_avg"].numpy()[10]).max()) == 0.0


def test_sparse_momentum_sgd_is_the_row_wise_rule():
    m, tm = _models(sparse_torch=False)
    lr, mom, wd = 0.1, 0.9, 0.01
    g = Train(m, flow.optim.SGD(m.emb.parameters(), lr=lr, momentum=mom, weight_decay=wd),
              flow.optim.SGD(m.head.parameters(), lr=lr))
    w = m.emb.weight.numpy().astype(np.float64)
    buf = np.zeros_like(w)
    seen = np.zeros(len(w), bool)
    for k, ids in enumerate(IDS):
        # the reference: torch's gradient of the same model, the momentum rule on the looked-up rows
        tm.zero_grad()
        torch.nn.functional.mse_loss(tm(torch.from_numpy(ids)), torch.from_numpy(_y(k))).backward()
        grad = tm.emb.weight.grad.numpy().astype(np.float64)
        rows = np.unique(ids)
        d = grad[rows] + wd * w[rows]
        buf[rows] = np.where(seen[rows, None], mom * buf[rows] + d, d)
        seen[rows] = True
        w[rows] -= lr * buf[rows]
        with torch.no_grad():
            tm.emb.weight.copy_(torch.from_numpy(w.astype(np.float32)))
            tm.head.weight.sub_(lr * tm.head.weight.grad)
            tm.head.bias.sub_(lr * tm.head.bias.grad)
        g(flow.tensor(ids), flow.tensor(_y(k)))
        np.testing.assert_allclose(m.emb.weight.numpy(), w, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(m.head.weight.numpy(), tm.head.weight.detach().numpy(), rtol=1e-5, atol=1e-6)
        buf_got = g._optimizers[0][0].state[m.emb.weight]["momentum_buffer"].numpy()
        np.testing.assert_allclose(buf_got[seen], buf[seen], rtol=1e-5, atol=1e-6)


def test_dense_update_moves_rows_not_looked_up():
    # the same training without is_sparse: momentum keeps moving rows of earlier steps
    finals = []
    for sparse in (True, False):
        m, _ = _models()
        g = Train(m, flow.optim.SGD(m.emb.parameters(), lr=0.1, momentum=0.9),
                  flow.optim.SGD(m.head.parameters(), lr=0.1), is_sparse=sparse)
        g(flow.tensor(IDS[0]), flow.tensor(_y(0)))
        after_first = m.emb.weight.numpy().copy()
        g(flow.tensor(IDS[1]), flow.tensor(_y(1)))  # does not look up rows 1, 2, 3, 7
        finals.append((after_first, m.emb.weight.numpy().copy()))
    (s1, s2), (d1, d2) = finals
    np.testing.assert_array_equal(s2[[1, 2, 3, 7]], s1[[1, 2, 3, 7]])
    assert np.abs(d2[[1, 2, 3, 7]] - d1[[1, 2, 3, 7]]).min() > 0


def test_sparse_with_gradient_accumulation():
    # the rows of every micro-batch are the step's rows; one update with the mean gradient
    m, tm = _models()
    g = Train(m, flow.optim.Adam(m.emb.parameters(), lr=0.1, eps=1e-10),
              flow.optim.Adam(m.head.parameters(), lr=0.1, eps=1e-10))
    g.config.set_gradient_accumulation_steps(2)
    t_emb = torch.optim.SparseAdam(list(tm.emb.parameters()), lr=0.1, eps=1e-10)
    t_head = torch.optim.Adam(tm.head.parameters(), lr=0.1, eps=1e-10)
    for k, ids in enumerate(IDS):
        g(flow.tensor(ids), flow.tensor(_y(k)))
        t_emb.zero_grad()
        t_head.zero_grad()
        for i in range(2):
            out = tm(torch.from_numpy(ids[i:i + 1]))
            (torch.nn.functional.mse_loss(out, torch.from_numpy(_y(k)[i:i + 1])) / 2).backward()
        t_emb.step()
        t_head.step()
        np.testing.assert_allclose(m.emb.weight.numpy(), tm.emb.weight.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_is_sparse_must_be_bool():
    m, _ = _models()
    g = Train(m, flow.optim.SGD(m.emb.parameters(), lr=0.1), flow.optim.SGD(m.head.parameters(), lr=0.1))
    with pytest.raises(TypeError, match="is_sparse must be a bool"):
        g.add_optimizer(flow.optim.SGD(m.parameters(), lr=0.1), is_sparse=1)
