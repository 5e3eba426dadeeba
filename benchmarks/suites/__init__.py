"""The suites of benchmarks/run.py. `core` and `models` are cases run in one worker process per
library (measure.py); the older per-subject scripts (bench_*.py) still time both libraries in one
process and run as whole scripts (SCRIPTS), their tables copied into RESULTS.md."""

SCRIPTS = ["bench_math", "bench_index", "bench_linalg", "bench_random", "bench_fft", "bench_nn_func",
           "bench_nn_conv", "bench_nn_attention", "bench_nn_rnn", "bench_fused", "bench_vision",
           "bench_train", "bench_graph"]


def registry():
    from . import core, models
    cases = {}
    for module in (core, models):
        for case in module.cases():
            cases[case.key()] = case
    return cases
