"""Per-kernel GPU time of one benchmark case of bench_gpu.py, under Nsight Compute (issue 13:
a case slower than PyTorch's, traced to its kernels). On the GPU machine:

    ncu --csv --profile-from-start off --metrics gpu__time_duration.sum \
        python benchmarks/kernel_profile.py run oneflow|torch "resnet18 train" > ncu.csv
    python benchmarks/kernel_profile.py summary ncu.csv     # anywhere: time per kernel name

`run` takes the first bench_gpu.py case whose name contains the text, calls it twice (the first
warms the allocator, cuDNN's algorithm choice and the optimizer state), and only the second call
runs between the driver's cuProfilerStart / cuProfilerStop, so ncu sees one call.
"""

import csv
import ctypes
import sys
from collections import defaultdict


def run(lib, case):
    if lib == "torch":
        import torch as L
    else:
        import oneflow as L
    sys.path.insert(0, __file__.rsplit("/", 1)[0])
    from bench_gpu import _cases

    name, (make, _) = next((k, v) for k, v in _cases("cuda", False).items() if case in k)
    print("case:", name, file=sys.stderr)
    call = make(L)
    call()
    L.cuda.synchronize()
    driver = ctypes.CDLL("libcuda.so.1")
    driver.cuProfilerStart()
    call()
    L.cuda.synchronize()
    driver.cuProfilerStop()


def summary(path):
    with open(path) as f:
        lines = f.read().splitlines()
    rows = [l for l in lines if l.startswith('"')]  # ncu's CSV, after the program's output
    if not rows:
        sys.exit("no ncu CSV rows")
    reader = csv.DictReader(rows)
    total, count = defaultdict(float), defaultdict(int)
    for r in reader:
        if r.get("Metric Name") != "gpu__time_duration.sum":
            continue
        v = float(r["Metric Value"].replace(",", ""))
        scale = {"nsecond": 1e-3, "usecond": 1.0, "msecond": 1e3}.get(r.get("Metric Unit", "nsecond"), 1e-3)
        name = r["Kernel Name"].split("(")[0][:90]
        total[name] += v * scale
        count[name] += 1
    all_us = sum(total.values())
    print(f"{sum(count.values())} kernels, {all_us / 1e3:.2f} ms of GPU time in the call\n")
    print("| kernel | launches | us | share |\n|---|---|---|---|")
    for name, us in sorted(total.items(), key=lambda kv: -kv[1])[:40]:
        print(f"| {name} | {count[name]} | {us:.0f} | {100 * us / all_us:.1f}% |")


if __name__ == "__main__":
    if sys.argv[1] == "run":
        run(sys.argv[2], sys.argv[3])
    else:
        summary(sys.argv[2])
