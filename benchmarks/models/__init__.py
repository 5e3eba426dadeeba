"""Whole models for benchmarks/run.py, each written once against a library module `lib` (oneflow or
torch: `lib.nn`, `lib.optim`, tensor functions), the way a user of either would write them. The
same source builds both twins, so the two libraries run the same architecture with the same
parameter names; tests/test_bench_models.py loads one twin's weights into the other and compares
outputs, and checks each parameter count against the reference model's.

Each model module defines:
  SIZES:            {"full": config, "tiny": config} (full = the benchmark's sizes, tiny = tests);
  build(lib, cfg):  the nn.Module;
  batch(lib, cfg, rng): (inputs tuple, target) for one step, made from a numpy Generator;
  loss(lib, out, target): the training loss;
  UNIT:             what one step processes ("images", "tokens", "samples") and
  items(cfg):       how many of them per step.
"""
from . import bert, cnn, dlrm, gpt2, lstm_lm, mobilenet_v3, resnet50, vit_s16

MODELS = {
    "resnet50": resnet50,
    "mobilenet_v3": mobilenet_v3,
    "vit_s16": vit_s16,
    "bert_base": bert,
    "gpt2_small": gpt2,
    "cnn": cnn,
    "lstm_lm": lstm_lm,
    "dlrm": dlrm,
}
