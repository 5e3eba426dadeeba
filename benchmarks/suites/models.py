"""Whole-model rows: a training step (forward, loss, backward, optimizer step) and an inference
forward of each model in benchmarks/models, eager and compiled (oneflow: nn.Graph; torch:
torch.compile). The step is written as each library's users write it."""
import numpy as np

from measure import Case
from models import MODELS

TRANSFORMERS = {"vit_s16", "bert_base", "gpt2_small"}
QUICK = {"cnn", "lstm_lm", "dlrm"}
SIZE = {"value": "full"}  # run.py --size tiny sets "tiny" (the harness test)


def _optimizer(lib, name, model):
    if name in TRANSFORMERS:
        return lib.optim.AdamW(model.parameters(), lr=1e-4)
    return lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)


def _setup(lib, name):
    module = MODELS[name]
    cfg = module.SIZES[SIZE["value"]]
    lib.manual_seed(0)
    model = module.build(lib, cfg)
    inputs, target = module.batch(lib, cfg, np.random.default_rng(0))
    return module, model, inputs, target


def _flow_train_graph(lib, module, model, opt):
    class TrainGraph(lib.nn.Graph):
        def __init__(self):
            super().__init__()
            self.model = model
            self.add_optimizer(opt)

        def build(self, *args):
            loss = module.loss(lib, self.model(*args[:-1]), args[-1])
            loss.backward()
            return loss

    return TrainGraph()


def _flow_infer_graph(lib, model):
    class InferGraph(lib.nn.Graph):
        def __init__(self):
            super().__init__()
            self.model = model

        def build(self, *args):
            return self.model(*args)

    return InferGraph()


def train(name):
    def make(lib, mode):
        module, model, inputs, target = _setup(lib, name)
        opt = _optimizer(lib, name, model)
        if mode == "graph" and lib.__name__ == "oneflow":
            graph = _flow_train_graph(lib, module, model, opt)
            return lambda: graph(*inputs, target)
        forward = lib.compile(model) if mode == "graph" else model

        def step():
            opt.zero_grad()
            loss = module.loss(lib, forward(*inputs), target)
            loss.backward()
            opt.step()
            return loss
        return step
    return make


def infer(name):
    def make(lib, mode):
        module, model, inputs, _ = _setup(lib, name)
        model.eval()
        if mode == "graph" and lib.__name__ == "oneflow":
            graph = _flow_infer_graph(lib, model)
            return lambda: graph(*inputs)
        forward = lib.compile(model) if mode == "graph" else model

        def step():
            with lib.no_grad():
                return forward(*inputs)
        return step
    return make


def flops(lib, mode, step):
    """Floating-point operations of one step, counted by torch's FlopCounterMode on the eager torch
    twin (the same work runs in both libraries)."""
    if lib.__name__ != "torch" or mode != "eager":
        return {}
    from torch.utils.flop_counter import FlopCounterMode

    counter = FlopCounterMode(display=False)
    with counter:
        step()
    return {"flops": counter.get_total_flops()}


def cases():
    rows = []
    for name, module in MODELS.items():
        items = module.items(module.SIZES[SIZE["value"]])
        for phase, make in (("train", train), ("infer", infer)):
            rows.append(Case("models", f"{name}/{phase}", make(name), "rate", items, module.UNIT + "/s",
                             modes=("eager", "graph"), quick=name in QUICK, info=flops))
    return rows
