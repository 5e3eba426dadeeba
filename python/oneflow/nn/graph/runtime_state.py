"""A compiled nn.Graph saved, loaded and shared (OneFlow's ``runtime_state_dict``,
``load_runtime_state_dict``, ``enable_shared`` / ``share_from``; docs/graph.md "Saving and sharing
a compiled graph").

What is saved is each traced program as the graph runs it (after its passes): its nodes, their
arguments, its folded constants (src/graph/serialize.h, Note [Saved programs]), its inputs' and
outputs' structure, and the inputs of the call that traced it (OneFlow's warm-up run). Tensors a
program reads by reference are saved by what they are: a parameter or buffer of the graph's modules
by its name (``model.0.weight``) -- the graph that loads the dict reads its own tensor of that name,
and ``with_eager=True`` also saves its values -- the loss-scale tensor of a training graph as a
marker, what update nodes read from the optimizer (per-run scalars, its state) by optimizer,
param group and option or parameter name and key -- bound to the loading graph's optimizer --
anything else (a constant made in ``build()``) with its values. Programs with Python steps
(a backward that stayed one, ``autograd.Function``s, global tensors' boxing, collectives) cannot be
saved: their steps are closures of the process that traced them.

Sharing: ``base.enable_shared()`` before base's first call, ``other.share_from(base)`` after it:
``other`` runs base's programs -- they read base's parameters -- and its calls with a signature
base has not seen are traced by base (into the cache both use), so the two graphs never compile a
signature twice and always see the same parameter values.
"""
from ... import _oneflow_internal as _C

FORMAT = "oneflow.nn.Graph.runtime_state_dict/1"


def _states(graph):
    """{name: tensor} of the graph's modules' parameters and buffers, named as the tracer names
    them (nn/graph/printing.py module_scopes)."""
    out = {}
    for top, module in graph._modules.items():
        for name, t in module.named_parameters():
            out[f"{top}.{name}"] = t
        for name, t in module.named_buffers():
            out[f"{top}.{name}"] = t
    return out


def _saved_tensor(t, name, states, compiled):
    """How a tensor a program reads is saved: ("state", name), ("loss_scale",) or ("value", copy)."""
    if name and states.get(name) is t:
        return ("state", name)
    if compiled.loss_scale is not None and t is compiled.loss_scale:
        return ("loss_scale", str(t.device))
    return ("value", t.detach().clone())


def _dtype_name(dtype):
    return None if dtype is None else str(dtype).split(".")[-1]


def runtime_state_dict(graph, destination=None, with_eager=False):
    if not isinstance(with_eager, bool):
        raise TypeError(f"runtime_state_dict: with_eager must be a bool, got {type(with_eager).__name__}")
    if not graph._save_runtime:
        raise RuntimeError(f"nn.Graph {graph.name}: runtime_state_dict() needs enable_save_runtime_state_dict() "
                           "called before the graph's first call (the warm-up inputs are kept from it)")
    if not graph._compiled:
        raise RuntimeError(f"nn.Graph {graph.name}: runtime_state_dict() is only available after the graph's "
                           "first call (nothing is compiled yet)")
    states = _states(graph)
    if any(getattr(type(t), "_oneflow_global_", False) for t in states.values()):
        raise NotImplementedError(f"nn.Graph {graph.name}: runtime_state_dict() of a graph with global "
                                  "parameters is not supported (its programs read their local components)")
    programs = []
    for key, compiled in graph._compiled.items():
        if compiled.barriers:
            from .printing import label_steps
            steps = [ln.strip() for ln in label_steps(compiled.program.describe(), compiled.barriers).splitlines()
                     if "<python" in ln]
            raise NotImplementedError(
                f"nn.Graph {graph.name}: runtime_state_dict() cannot save a program with Python steps "
                f"(they are closures of this process): {'; '.join(steps)}")
        data, tensors, names = compiled.program.save()
        updates = _update_refs(graph, compiled, states)
        programs.append({
            "key": key,
            "program": data,
            "tensors": [updates.get(id(t)) or _saved_tensor(t, n, states, compiled) for t, n in zip(tensors, names)],
            "updates": [(_optimizer_index(graph, u.opt), u.kind.op) for u in compiled.updates],
            "names": list(names),
            "out_spec": compiled.out_spec,
            "out_slots": list(compiled.out_slots),
            "out_consts": [None if t is None else _saved_tensor(t, _name_of(t, states), states, compiled)
                           for t in compiled.out_consts],
            "pass_stats": dict(compiled.pass_stats),
            "inputs_original": compiled.inputs_original,
        })
    out = {} if destination is None else destination
    out["format"] = FORMAT
    out["oneflow_version"] = _version()
    out["graph_name"] = graph.name
    out["graph_class"] = type(graph).__qualname__
    out["training"] = graph.training
    amp = graph.config._amp
    out["amp"] = None if amp is None else (amp[0], _dtype_name(amp[1]))
    out["oneflow_with_eager_tensor"] = with_eager
    out["states"] = {n: t.detach().clone() for n, t in states.items()} if with_eager else {}
    out["programs"] = programs
    return out


def _optimizer_index(graph, opt):
    return next(i for i, (o, _) in enumerate(graph._optimizers) if o is opt)


def _update_refs(graph, compiled, states):
    """{id(tensor): ref} of what the update nodes (update_nodes.py) read from the live optimizer:
    their per-run scalar inputs, ("opt_scalar", optimizer, param group, option key, tuple index),
    and the state they update, ("opt_state", optimizer, parameter name, state key). A loading
    graph binds its own optimizer's (_loaded_update_tensor)."""
    refs = {}
    for u in compiled.updates:
        oi = _optimizer_index(graph, u.opt)
        for t, group, key, index, _ in u.scalars:
            gi = next(i for i, g in enumerate(u.opt.param_groups) if g is group)
            refs[id(t)] = ("opt_scalar", oi, gi, key, index)
        for p, key, t in u.state:
            name = _name_of(p, states)
            if not name:
                raise NotImplementedError(f"nn.Graph {graph.name}: runtime_state_dict() of an update node whose "
                                          "parameter is not one of the graph's modules' parameters")
            refs[id(t)] = ("opt_state", oi, name, key)
    return refs


def _bind_updates(graph, saved):
    """{optimizer index: UpdateNodes} for a loaded program's update nodes, each checked against
    this graph's optimizer."""
    from .update_nodes import UpdateNodes, _form
    opts = [opt for opt, _ in graph._optimizers]
    out = {}
    for oi, op in saved:
        opt = opts[oi] if oi < len(opts) else None
        kind = None if opt is None else _form(opt)
        if kind is None or kind.op != op:
            what = ("no such optimizer" if opt is None else
                    f"a {type(opt).__name__} whose update is {'a Python step()' if kind is None else kind.op}")
            raise ValueError(f"nn.Graph {graph.name}: the runtime state's program updates optimizer {oi} "
                             f"with {op} nodes; this graph has {what}")
        out[oi] = UpdateNodes(opt, kind)
    return out


def _loaded_update_tensor(graph, ref, states, updates):
    """The loading graph's tensor for an _update_refs ref, registered with its UpdateNodes."""
    from .update_nodes import _option
    u = updates[ref[1]]
    if ref[0] == "opt_scalar":
        group = u.opt.param_groups[ref[2]]
        v = _option(group, ref[3], ref[4])
        t = _C.full((), v, dtype=_C.float64)
        u.scalars.append([t, group, ref[3], ref[4], v])
        return t
    p = states.get(ref[2])
    group = next((g for g in u.opt.param_groups if any(q is p for q in g["params"])), None)
    if group is None:
        raise KeyError(f"nn.Graph {graph.name}: the runtime state's update node reads the parameter '{ref[2]}', "
                       "which this graph's optimizer does not update")
    u.kind.state(u.opt, group, [p])  # (made as a first step makes it, when the optimizer has none)
    t = u.opt.state[p][ref[3]]
    u.state.append((p, ref[3], t))
    return t


def _name_of(t, states):
    for n, s in states.items():
        if s is t:
            return n
    return ""


def _version():
    from ...version import __version__
    return __version__


def load_runtime_state_dict(graph, state, warmup_with_run, compiled_cls, bare):
    """`compiled_cls`: graph.py's _Compiled; `bare`: the graph is a plain nn.Graph (any saved class)."""
    from ..._grad_mode import no_grad
    if not isinstance(state, dict) or state.get("format") != FORMAT:
        raise ValueError(f"nn.Graph {graph.name}: load_runtime_state_dict expects a dict made by "
                         f"runtime_state_dict() (format {FORMAT!r}), got "
                         f"{state.get('format') if isinstance(state, dict) else type(state).__name__!r}")
    if warmup_with_run is not None and not isinstance(warmup_with_run, bool):
        raise TypeError(f"load_runtime_state_dict: warmup_with_run must be a bool, got {type(warmup_with_run).__name__}")
    if graph._compiled:
        raise RuntimeError(f"nn.Graph {graph.name}: load_runtime_state_dict() needs a graph not called yet "
                           "(this one has compiled programs)")
    if state["training"] != graph.training:
        what = "a training graph (with add_optimizer)" if state["training"] else "an inference graph"
        raise ValueError(f"nn.Graph {graph.name}: the runtime state is of {what}; this graph "
                         f"{'has' if graph.training else 'has no'} optimizer")
    if not bare and type(graph).__qualname__ != state["graph_class"]:
        raise ValueError(f"nn.Graph {graph.name}: the runtime state was saved from a {state['graph_class']}, "
                         f"this graph is a {type(graph).__qualname__}")
    if state["training"] and warmup_with_run:
        raise ValueError(f"nn.Graph {graph.name}: warmup_with_run=True would take a training step "
                         "(optimizer update) with the saved inputs; load a training graph without it")
    states = _states(graph)
    saved_states = state.get("states") or {}
    if saved_states:  # with_eager: the saved values go into the graph's own tensors (or stand in)
        with no_grad():
            for n, t in saved_states.items():
                if n in states:
                    states[n].copy_(t)
                else:
                    states[n] = t
    amp = state.get("amp")
    if amp is not None:
        graph.config._amp = (amp[0], None if amp[1] is None else getattr(_C, amp[1]))
    for entry in state["programs"]:
        scale_refs = [r for r in entry["tensors"] if r[0] == "loss_scale"]
        loss_scale = _C.ones((), device=scale_refs[0][1] if scale_refs else "cpu")
        updates = _bind_updates(graph, entry.get("updates", ()))
        tensors = [_loaded_update_tensor(graph, ref, states, updates) if ref[0] in ("opt_scalar", "opt_state")
                   else _loaded_tensor(graph, ref, states, loss_scale) for ref in entry["tensors"]]
        program = _C._graph_program_load(entry["program"], tensors, entry["names"])
        if graph.config._passes["arena"] and not graph.training:
            program.place_in_arena()
        consts = [None if r is None else _loaded_tensor(graph, r, states, loss_scale) for r in entry["out_consts"]]
        compiled = compiled_cls(program, entry["out_spec"], entry["out_slots"], consts, {}, entry["pass_stats"])
        compiled.loss_scale = loss_scale if scale_refs else None
        compiled.inputs_original = entry["inputs_original"]
        compiled.updates = list(updates.values())
        graph._compiled[entry["key"]] = compiled
    if warmup_with_run is None:
        warmup_with_run = not graph.training
    if warmup_with_run:
        for compiled in graph._compiled.values():
            if compiled.inputs_original is not None:
                graph._execute(compiled, list(compiled.inputs_original))


def _loaded_tensor(graph, ref, states, loss_scale):
    kind = ref[0]
    if kind == "state":
        t = states.get(ref[1])
        if t is None:
            raise KeyError(f"nn.Graph {graph.name}: the runtime state reads the parameter or buffer '{ref[1]}', "
                           "which this graph's modules do not have (save it with_eager=True to carry its values)")
        return t
    if kind == "loss_scale":
        return loss_scale
    return ref[1]


def enable_shared(graph, mode=True):
    if not isinstance(mode, bool):
        raise TypeError(f"enable_shared: mode must be a bool, got {type(mode).__name__}")
    if mode and graph._compiled:
        raise RuntimeError(f"nn.Graph {graph.name}: enable_shared() must be called before the graph's first call")
    object.__setattr__(graph, "_shareable", mode)


def share_from(graph, base, graph_cls):
    if not isinstance(base, graph_cls):
        raise TypeError(f"share_from: expected an nn.Graph, got {type(base).__name__}")
    if base is graph:
        raise ValueError(f"share_from: nn.Graph {graph.name} cannot share from itself")
    while base._shared_base is not None:  # (sharing from a sharer: the programs are the first graph's)
        base = base._shared_base
    if not base._shareable:
        raise RuntimeError(f"share_from: nn.Graph {base.name} must call enable_shared() before its first call "
                           "to be shared")
    if not base._compiled:
        raise RuntimeError(f"share_from: nn.Graph {base.name} must have been called (compiled) first")
    if graph._compiled:
        raise RuntimeError(f"share_from: nn.Graph {graph.name} is compiled already; share before its first call")
    if graph.training or base.training:
        raise ValueError(f"share_from: nn.Graph {graph.name} and {base.name} must be inference graphs "
                         "(a training graph's programs write its own optimizer's parameters' gradients)")
    object.__setattr__(graph, "_shared_base", base)
    object.__setattr__(graph, "_compiled", base._compiled)
    graph.config._amp = base.config._amp
