"""What a traced program knows about the user's model, and ``print(graph)``.

While ``build()`` is traced, each module of the graph tells the tracer when its forward starts
and ends (forward hooks, removed after the trace), so every recorded node carries the module path
that called it (``model.0``); parameters and buffers are named (``model.0.weight``) for the
program's text. ``print(graph)`` after the first call shows the module tree with each module's
operators, as OneFlow prints a compiled graph."""
import contextlib
import re


@contextlib.contextmanager
def module_scopes(graph, tracer):
    handles, stack = [], []
    try:
        for top, module in graph._modules.items():
            for name, t in module.named_parameters():
                tracer.name(t, f"{top}.{name}")
            for name, t in module.named_buffers():
                tracer.name(t, f"{top}.{name}")
            for sub, m in module.named_modules():
                path = f"{top}.{sub}" if sub else top

                def enter(_m, _args, path=path):
                    stack.append(tracer.scope)
                    tracer.set_scope(path)

                def leave(_m, _args, _out):
                    if stack:
                        tracer.set_scope(stack.pop())
                handles.append(m.register_forward_pre_hook(enter))
                handles.append(m.register_forward_hook(leave))
        yield
    finally:
        for h in handles:
            h.remove()
        tracer.set_scope("")


def label_steps(text, barriers):
    """`<python k>` in a program's text named by its action (`<python 0: backward(%9)>`)."""
    def name(m):
        label = getattr(barriers.get(int(m.group(1))), "label", None)
        return f"<python {m.group(1)}: {label}>" if label else m.group(0)
    return re.sub(r"<python (\d+)>", name, text)


def _module_line(path, module):
    extra = module.extra_repr() if hasattr(module, "extra_repr") else ""
    return f"(MODULE:{path}:{type(module).__name__}({extra}))"


def graph_repr(graph):
    lines = [f"(GRAPH:{graph.name}:{type(graph).__name__}): ("]
    compiled = list(graph._compiled.values())
    if not compiled:  # not called yet: the modules
        for n, m in graph._modules.items():
            lines += ["  " + s for s in f"(MODULE:{n}:{type(m).__name__}): {m!r}".splitlines()]
        lines.append(")")
        return "\n".join(lines)
    program = compiled[-1].program  # (the latest signature traced)
    by_scope = {}
    for scope, text in program.nodes():
        by_scope.setdefault(scope, []).append(label_steps(text, compiled[-1].barriers))
    text = program.describe().splitlines()
    head, tail = text[0], text[-1]
    lines.append(f"  (CONFIG:config:{graph.config!r})")
    lines.append(f"  (INPUTS: {head[len('graph('):-2]})")

    def module(path, m, indent):
        pad = "  " * indent
        ops = by_scope.get(path, [])
        children = list(m.named_children())
        if not ops and not children:
            lines.append(pad + _module_line(path, m))
            return
        lines.append(pad + _module_line(path, m) + ": (")
        for text in ops:
            lines.append(f"{pad}  (OPERATOR: {text})")
        for name, child in children:
            module(f"{path}.{name}", child, indent + 1)
        lines.append(pad + ")")

    for n, m in graph._modules.items():
        module(n, m, 1)
    for text in by_scope.get("", []):  # build()'s own ops
        lines.append(f"  (OPERATOR: {text})")
    if tail.strip().startswith("return"):
        lines.append(f"  (OUTPUTS: {tail.strip()[len('return '):]})")
    lines.append(")")
    return "\n".join(lines)
