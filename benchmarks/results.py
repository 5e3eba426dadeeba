"""RESULTS.md from the rows benchmarks/run.py measured: the header (machine, date, commit,
command), the op rows, the model rows (eager and compiled, throughput, GFLOP/s, memory, start-up),
the targets of the whole-model issue with met / missed, and the older scripts' tables. Hand-written
explanations of missed targets live in RESULTS-notes.md and are copied in below the tables."""
import os
import platform
import subprocess

import torch

HERE = os.path.dirname(os.path.abspath(__file__))


def _cpu():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _memory_gib():
    try:
        with open("/proc/meminfo") as f:
            return int(f.readline().split()[1]) / 2 ** 20
    except (OSError, ValueError, IndexError):
        return float("nan")


def _commit():
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              cwd=HERE).stdout.strip() or "unknown"
    except OSError:
        return "unknown"


def _t(s):
    if s is None:
        return "n/a"
    return f"{s * 1e6:.2f} us" if s < 1e-3 else (f"{s * 1e3:.2f} ms" if s < 1 else f"{s:.2f} s")


def _timed(row, lib):
    if lib not in row:
        return "n/a"
    med, spread = row[lib]
    return f"{_t(med)} ±{spread * 100:.0f}%"


def _ratio(row):
    return row["oneflow"][0] / row["torch"][0] if "oneflow" in row and "torch" in row else None


def _fmt_ratio(r):
    return "n/a" if r is None else f"{r:.2f}x"


def _rate(row, lib, limits):
    case = row["case"]
    if lib not in row or not case.work:
        return ""
    value = case.work / row[lib][0]
    if case.unit in ("GB/s", "GFLOP/s"):
        text = f"{value / 1e9:.1f} {case.unit}"
        limit = {"flops": limits["gflops"], "bandwidth": limits["gbs"]}.get(case.limit)
        return text + (f" ({value / 1e9 / limit * 100:.0f}%)" if limit else "")
    return f"{value:,.0f} {case.unit}"


def _op_table(rows, limits):
    out = ["| row | oneflow | torch | time ratio | oneflow rate (of limit) | torch rate | note |",
           "|---|---|---|---|---|---|---|"]
    for row in rows:
        out.append(f"| {row['case'].name} | {_timed(row, 'oneflow')} | {_timed(row, 'torch')} | "
                   f"{_fmt_ratio(_ratio(row))} | {_rate(row, 'oneflow', limits)} | {_rate(row, 'torch', limits)} | "
                   f"{row.get('note', '')} |")
    return out


def _model_table(rows, limits):
    by = {}
    for row in rows:
        by.setdefault(row["case"].name, {})[row["mode"]] = row
    out = ["| model / phase | oneflow eager | torch eager | eager ratio | oneflow graph | torch.compile | "
           "compiled ratio | oneflow throughput | oneflow GFLOP/s (of peak) | first call: graph / compile | note |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, modes in by.items():
        e, g = modes.get("eager", {}), modes.get("graph", {})
        flops = e.get("flops")
        gf = ""
        if flops and "oneflow" in e:
            v = flops / e["oneflow"][0] / 1e9
            gf = f"{v:.1f} ({v / limits['gflops'] * 100:.0f}%)"
        first = ""
        if "oneflow_first" in g:
            first = f"{_t(g['oneflow_first'])} / {_t(g['torch_first'])}"
        notes = "; ".join(r["note"] for r in (e, g) if r.get("note"))
        out.append(f"| {name} | {_timed(e, 'oneflow')} | {_timed(e, 'torch')} | {_fmt_ratio(_ratio(e)) if e else ''} | "
                   f"{_timed(g, 'oneflow') if g else ''} | {_timed(g, 'torch') if g else ''} | "
                   f"{_fmt_ratio(_ratio(g)) if g else ''} | {_rate(e, 'oneflow', limits) if e else ''} | {gf} | "
                   f"{first} | {notes} |")
    return out


def _probe_table(probes):
    out = ["| model | oneflow peak RSS | torch peak RSS | memory ratio | oneflow import→first step | "
           "torch import→first step | start-up ratio |", "|---|---|---|---|---|---|---|"]
    for name in dict.fromkeys(n for n, _ in probes):
        f, t = probes[(name, "oneflow")], probes[(name, "torch")]
        if "error" in f or "error" in t:
            out.append(f"| {name} | {f.get('error', '')} | {t.get('error', '')} | | | | |")
            continue
        out.append(f"| {name} | {f['peak_rss_mb']:.0f} MB | {t['peak_rss_mb']:.0f} MB | "
                   f"{f['peak_rss_mb'] / t['peak_rss_mb']:.2f}x | {f['first_step_s']:.2f} s | "
                   f"{t['first_step_s']:.2f} s | {f['first_step_s'] / t['first_step_s']:.2f}x |")
    return out


def _targets(rows, probes):
    """The whole-model issue's targets, checked on this run's numbers."""
    out = []

    def check(label, values, limit):
        missed = [f"{k} {v:.2f}x" for k, v in values if v is not None and v > limit]
        if values:
            out.append(f"- {label} (≤ {limit}x): " + ("met" if not missed else "missed: " + ", ".join(missed)))

    eager = [r for r in rows if r["case"].suite == "models" and r["mode"] == "eager"]
    check("eager training step vs PyTorch eager", [(r["case"].name, _ratio(r)) for r in eager
                                                   if r["case"].name.endswith("/train")], 0.9)
    check("eager inference vs PyTorch eager", [(r["case"].name, _ratio(r)) for r in eager
                                               if r["case"].name.endswith("/infer")], 0.9)
    names = dict.fromkeys(n for n, _ in probes)
    ok = [n for n in names if "error" not in probes[(n, "oneflow")] and "error" not in probes[(n, "torch")]]
    check("peak memory vs PyTorch", [(n, probes[(n, "oneflow")]["peak_rss_mb"] / probes[(n, "torch")]["peak_rss_mb"])
                                     for n in ok], 1.0)
    check("import to end of first step vs PyTorch",
          [(n, probes[(n, "oneflow")]["first_step_s"] / probes[(n, "torch")]["first_step_s"]) for n in ok], 1.0)
    return out


def render(rows, probes, scripts, limits, meta):
    import oneflow  # noqa: F401 - version of the package measured

    lines = ["# Benchmark results", "",
             "Written by `benchmarks/run.py`; do not edit by hand (explanations go in RESULTS-notes.md).", "",
             f"- machine: {_cpu()}, {os.cpu_count()} cores, {_memory_gib():.0f} GiB; {meta['threads']} threads "
             "for each library",
             f"- date: {meta['started']:%Y-%m-%d %H:%M} UTC; commit {_commit()}; PyTorch {torch.__version__}",
             f"- command: `{meta['command']}`; {meta['rounds']} interleaved rounds per row, median ± half the "
             f"range; model sizes: {meta['size']}",
             f"- measured limits: {limits['gflops']:.1f} GFLOP/s (float32 matmul 2048³, the fastest of numpy's, "
             f"torch's and oneflow's: {limits['gflops_by']}), {limits['gbs']:.1f} GB/s (1 GiB copy, read + write; "
             "rows whose data fits in the cache can exceed it)",
             "- time ratio = oneflow / torch (lower is better; 1.00x = parity)", ""]
    core = [r for r in rows if r["case"].suite == "core"]
    models = [r for r in rows if r["case"].suite == "models"]
    if core:
        lines += ["## Op rows", ""] + _op_table(core, limits) + [""]
    if models:
        lines += ["## Whole models", "",
                  "Training step = forward, loss, backward, optimizer step (SGD momentum; AdamW for the "
                  "transformers). Compiled: oneflow `nn.Graph`, torch `torch.compile` (inductor).", ""]
        lines += _model_table(models, limits) + [""]
    if probes:
        lines += ["## Memory and start-up (fresh process per library and model, eager training)", ""]
        lines += _probe_table(probes) + [""]
    targets = _targets(rows, probes)
    if targets:
        lines += ["## Targets", ""] + targets + [""]
    notes = os.path.join(HERE, "RESULTS-notes.md")
    if os.path.exists(notes):
        with open(notes) as f:
            lines += [f.read().strip(), ""]
    for name, text in scripts.items():
        script, _, extra = name.partition(" ")  # (a name may carry the script's arguments)
        title = f"{script}.py {extra}" if extra else f"{script}.py (both libraries in one process)"
        lines += [f"## {title}", "", "```", text, "```", ""]
    return "\n".join(lines)
