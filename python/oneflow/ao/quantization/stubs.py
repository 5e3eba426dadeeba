"""QuantStub / DeQuantStub / QuantWrapper: where a model's quantized region starts and ends.

Before prepare_qat they are identities. prepare_qat gives QuantStub a fake-quantizer of its output
(the model's input quantization); convert turns QuantStub into Quantize and DeQuantStub into
DeQuantize (oneflow.ao.nn.quantized)."""
from ...nn.modules.module import Module


class QuantStub(Module):
    def __init__(self, qconfig=None):
        super().__init__()
        if qconfig is not None:
            self.qconfig = qconfig

    def forward(self, x):
        return x


class DeQuantStub(Module):
    def __init__(self, qconfig=None):
        super().__init__()
        if qconfig is not None:
            self.qconfig = qconfig

    def forward(self, x):
        return x


class QuantWrapper(Module):
    """module wrapped between a QuantStub and a DeQuantStub, taking the module's qconfig."""

    def __init__(self, module):
        super().__init__()
        qconfig = getattr(module, "qconfig", None)
        self.add_module("quant", QuantStub(qconfig))
        self.add_module("dequant", DeQuantStub(qconfig))
        self.add_module("module", module)
        self.train(module.training)

    def forward(self, x):
        return self.dequant(self.module(self.quant(x)))


__all__ = ["QuantStub", "DeQuantStub", "QuantWrapper"]
