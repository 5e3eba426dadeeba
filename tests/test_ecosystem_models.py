"""What OneFlow's official training scripts (Oneflow-Inc/models) need of the framework (issue 37),
written from their documented usage: the BERT pre-training reads its OFRecords inside nn.Graph's
build() and warms up its own PolynomialLR (a subclass of OneFlow's older LrScheduler API) with
WarmUpLR. The scripts themselves are no test dependency: docs/upstream_suite.md "Ecosystem code"
says how they were run."""
import math

import numpy as np
import pytest

import oneflow as flow
from oneflow import nn
from oneflow.nn.modules.ofrecord import write_ofrecord
from oneflow.nn.optimizer.lr_scheduler import LrScheduler  # (the BERT script's import)

pytest.importorskip("google.protobuf", reason="protobuf is installed by scripts/setup.sh")

SEQ = 6


@pytest.fixture
def bert_records(tmp_path):
    rs = np.random.RandomState(0)
    recs = [{"input_ids": rs.randint(0, 20, SEQ).astype(np.int32), "next_sentence_labels": np.array([i % 2], np.int32),
             "masked_lm_weights": rs.rand(2).astype(np.float32)} for i in range(8)]
    write_ofrecord(str(tmp_path / "part-0"), recs[:4])
    write_ofrecord(str(tmp_path / "part-1"), recs[4:])
    return str(tmp_path), recs


class _Loader(nn.Module):
    """The script's OfRecordDataLoader: a reader and one raw decoder per feature."""

    def __init__(self, folder):
        super().__init__()
        self.reader = nn.OFRecordReader(folder, batch_size=2, data_part_num=2)
        self.ids = nn.OfrecordRawDecoder("input_ids", [SEQ], dtype=flow.int32)
        self.labels = nn.OfrecordRawDecoder("next_sentence_labels", [1], dtype=flow.int32)
        self.weights = nn.OfrecordRawDecoder("masked_lm_weights", [2], dtype=flow.float)

    def forward(self):
        records = self.reader()
        return self.ids(records), self.labels(records), self.weights(records)


def test_records_read_inside_a_training_graph(bert_records):
    folder, recs = bert_records
    flow.manual_seed(0)
    emb, head = nn.Embedding(20, 4), nn.Linear(4, 2)
    model = nn.Sequential(emb)
    opt = flow.optim.SGD(list(emb.parameters()) + list(head.parameters()), lr=0.1)

    class Pretrain(nn.Graph):
        def __init__(self):
            super().__init__()
            self.loader, self.model, self.head = _Loader(folder), model, head
            self.add_optimizer(opt)

        def build(self):
            ids, labels, weights = self.loader()
            logits = self.head(self.model(ids.to(flow.int64)).mean(1))
            loss = nn.CrossEntropyLoss()(logits, labels.reshape(-1).to(flow.int64)) * weights.sum()
            loss.backward()
            return loss, ids, labels, weights

    g = Pretrain()
    seen = []
    for _ in range(5):  # each call reads the next batch (part 0, part 1, then around again)
        loss, ids, labels, weights = g()
        assert ids.dtype == flow.int32 and ids.shape == (2, SEQ) and weights.dtype == flow.float32
        seen.append(ids.numpy())
        assert np.isfinite(loss.numpy())
    order = [0, 1, 2, 3, 4, 5, 6, 7, 0, 1]
    np.testing.assert_array_equal(np.concatenate(seen), np.stack([recs[i]["input_ids"] for i in order]))
    np.testing.assert_array_equal(labels.numpy().reshape(-1), [0, 1])
    np.testing.assert_allclose(weights.numpy(), np.stack([recs[i]["masked_lm_weights"] for i in (0, 1)]))


def test_tensor_buffer_decoders_stay_eager_in_a_graph(bert_records):
    folder, _ = bert_records

    class Images(nn.Graph):
        def __init__(self):
            super().__init__()
            self.reader = nn.OFRecordReader(folder, batch_size=2, data_part_num=2)
            self.decode = nn.OFRecordBytesDecoder("input_ids")

        def build(self):
            return self.decode(self.reader())

    with pytest.raises(NotImplementedError, match="decode with OFRecordRawDecoder"):
        Images()()


class _PolynomialLR(LrScheduler):
    """The BERT script's own scheduler, in OneFlow's older API: get_lr() is the rates at last_step."""

    def __init__(self, optimizer, steps, end_learning_rate=0.0, power=1.0):
        self.max_decay_steps, self.end_learning_rate, self.power = steps, end_learning_rate, power
        super().__init__(optimizer)

    def get_lr(self):
        step = min(self.last_step, self.max_decay_steps)
        return [(b - self.end_learning_rate) * (1 - step / self.max_decay_steps) ** self.power + self.end_learning_rate
                for b in self.base_lrs]


def test_warmup_over_a_scheduler_of_the_older_api():
    opt = flow.optim.SGD([nn.Parameter(flow.ones(1))], lr=1.0)
    sch = flow.optim.lr_scheduler.WarmUpLR(_PolynomialLR(opt, steps=8), warmup_factor=0, warmup_iters=2,
                                           warmup_method="linear")
    lrs = []
    for _ in range(6):
        lrs.append(opt.param_groups[0]["lr"])
        sch.step()
    # warmup from 0 to the polynomial's rate at step 2 (0.75), then the polynomial's own rates
    np.testing.assert_allclose(lrs, [0.0, 0.375, 0.75, 0.625, 0.5, 0.375])
    assert math.isclose(sch.inner.get_last_lr()[0], 0.25)  # (its counters follow the warmup's)
    with pytest.raises(ValueError, match="can't wrap MultiplicativeLR"):  # (chainable: no closed form)
        flow.optim.lr_scheduler.WarmUpLR(flow.optim.lr_scheduler.MultiplicativeLR(opt, lambda s: 0.9))
