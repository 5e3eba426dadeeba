"""A survey of many everyday ops, flow against torch, each library in a process of its own:
finds performance cliffs (rows flagged <<< when flow takes over 1.25x torch's time). Medians of
15 calls; single runs on the shared 2-core machines drift by +-15 percent, so only large gaps count.

    .venv/bin/python benchmarks/bench_survey.py            # every case
    .venv/bin/python benchmarks/bench_survey.py clamp pow  # cases whose name contains these
"""

import subprocess
import sys

CHILD = r"""
import statistics, sys, time
import numpy as np
L = __import__(sys.argv[1]); L.set_num_threads(2)
F = L.nn.functional
rng = np.random.default_rng(0)
a = L.tensor(rng.standard_normal((64, 256, 64)).astype(np.float32))
m = L.tensor(rng.standard_normal((1024, 1024)).astype(np.float32))
p = L.tensor(rng.uniform(0.05, 0.95, (1024, 1024)).astype(np.float32))
img = L.tensor(rng.standard_normal((32, 64, 28, 28)).astype(np.float32))
cases = {
 "var(0,2)": lambda: a.var(dim=(0, 2)),
 "std(0,2,3) img": lambda: img.std(dim=(0, 2, 3)),
 "mean(0,2,3) img": lambda: img.mean(dim=(0, 2, 3)),
 "sum(1) of T": lambda: m.t().sum(dim=1),
 "max(0) vals+idx": lambda: m.max(dim=0),
 "argmax(0)": lambda: m.argmax(dim=0),
 "cumsum(0)": lambda: m.cumsum(dim=0),
 "softmax(0)": lambda: L.softmax(m, dim=0),
 "log_softmax(1) img": lambda: L.log_softmax(img, dim=1),
 "norm(dim=1)": lambda: L.linalg.norm(m, dim=1),
 "logsumexp(0)": lambda: L.logsumexp(m, dim=0),
 "prod(0)": lambda: m.prod(dim=0),
 "any(0)": lambda: (m > 2).any(dim=0),
 "T contiguous": lambda: m.t().contiguous(),
 "img permute contig": lambda: img.permute(0, 2, 3, 1).contiguous(),
 "where": lambda: L.where(m > 0, m, m * 0.1),
 "clamp": lambda: m.clamp(-0.5, 0.5),
 "pow 2.5": lambda: m.abs().pow(2.5),
 "add bcast col": lambda: m + m[:, :1],
 "mul T": lambda: m * m.t(),
 "cat dim1": lambda: L.cat([m, m], dim=1),
 "index [::2]": lambda: m[::2, ::2].contiguous(),
 "masked_fill": lambda: m.masked_fill(m > 0, 0.0),
 "topk rows": lambda: m.topk(10, dim=1),
 "sort rows": lambda: m.sort(dim=1),
 "mm T": lambda: m.t() @ m,
 "hardtanh": lambda: F.hardtanh(m), "relu6": lambda: F.relu6(m), "leaky_relu": lambda: F.leaky_relu(m, 0.1),
 "elu": lambda: F.elu(m), "selu": lambda: F.selu(m), "softplus": lambda: F.softplus(m), "mish": lambda: F.mish(m),
 "hardswish": lambda: F.hardswish(m), "hardsigmoid": lambda: F.hardsigmoid(m), "logsigmoid": lambda: F.logsigmoid(m),
 "softsign": lambda: F.softsign(m), "tanhshrink": lambda: F.tanhshrink(m), "threshold": lambda: F.threshold(m, 0.1, 20.0),
 "nan_to_num": lambda: L.nan_to_num(m), "abs": lambda: m.abs(), "sign": lambda: m.sign(), "round": lambda: m.round(),
 "floor": lambda: m.floor(), "remainder": lambda: L.remainder(m, 0.7), "fmod": lambda: L.fmod(m, 0.7),
 "lerp": lambda: L.lerp(m, p, 0.3), "addcmul": lambda: L.addcmul(m, m, p, value=0.5), "addcdiv": lambda: L.addcdiv(m, m, p, value=0.5),
 "maximum": lambda: L.maximum(m, p), "minimum": lambda: L.minimum(m, p), "logit": lambda: L.logit(p),
 "pow 3": lambda: m.pow(3), "pow 0.5": lambda: p.pow(0.5), "square": lambda: m.square(), "rsqrt": lambda: p.rsqrt(),
 "atan2": lambda: L.atan2(m, p), "hypot": lambda: L.hypot(m, p), "xlogy": lambda: L.xlogy(p, p),
 "mse": lambda: F.mse_loss(m, p), "l1": lambda: F.l1_loss(m, p), "smooth_l1": lambda: F.smooth_l1_loss(m, p),
 "bce": lambda: F.binary_cross_entropy(p, p), "bce_logits": lambda: F.binary_cross_entropy_with_logits(m, p),
 "kl_div": lambda: F.kl_div(m, p, reduction="batchmean"), "normalize": lambda: F.normalize(m, dim=1),
 "cosine_sim": lambda: F.cosine_similarity(m, p, dim=1), "pdist-ish cdist": lambda: L.cdist(m[:256], p[:256]),
 "eq": lambda: m == p, "gt sum": lambda: (m > p).sum(), "isnan any": lambda: m.isnan().any(),
 "to half": lambda: m.to(L.float16), "to int": lambda: m.to(L.int32), "tril": lambda: m.tril(), "flip": lambda: m.flip(0),
 "roll": lambda: m.roll(3, 1), "repeat": lambda: m[:64].repeat(4, 2), "expand contig": lambda: m[:1].expand(1024, 1024).contiguous(),
}
sel = sys.argv[2:]
for name, f in cases.items():
    if sel and not any(s in name for s in sel):
        continue
    for _ in range(3):
        f()
    ts = []
    for _ in range(15):
        t0 = time.perf_counter(); f(); ts.append(time.perf_counter() - t0)
    print(f"{name}\t{statistics.median(ts)}", flush=True)
"""


def run(lib, sel):
    r = subprocess.run([sys.executable, "-c", CHILD, lib, *sel], capture_output=True, text=True, timeout=900)
    if r.returncode != 0:
        raise RuntimeError(f"{lib}: {r.stderr.strip().splitlines()[-1] if r.stderr.strip() else 'failed'}")
    return dict((k, float(v)) for k, v in (line.split("\t") for line in r.stdout.strip().splitlines()))


def main():
    sel = sys.argv[1:]
    f, t = run("oneflow", sel), run("torch", sel)
    print(f"{'case':22s} {'flow':>10s} {'torch':>10s} {'torch/flow':>11s}")
    for k, tf in f.items():
        tt = t[k]
        print(f"{k:22s} {tf * 1e3:8.3f}ms {tt * 1e3:8.3f}ms {tt / tf:11.2f}{'  <<<' if tt / tf < 0.8 else ''}")


if __name__ == "__main__":
    main()
