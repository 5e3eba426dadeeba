"""Flattening of the nested containers (tuple, list, namedtuple, dict) that the function
transforms take and return: leaves in order, and a spec that rebuilds the structure."""


def flatten(tree):
    """(leaves, spec)."""
    leaves = []

    def walk(t):
        if isinstance(t, dict):
            keys = list(t.keys())
            return ("dict", keys, [walk(t[k]) for k in keys])
        if isinstance(t, tuple) and hasattr(t, "_fields"):
            return ("namedtuple", type(t), [walk(v) for v in t])
        if isinstance(t, (tuple, list)):
            return (type(t).__name__, None, [walk(v) for v in t])
        leaves.append(t)
        return ("leaf", None, None)

    return leaves, walk(tree)


def unflatten(leaves, spec):
    it = iter(leaves)

    def build(s):
        kind, meta, children = s
        if kind == "leaf":
            return next(it)
        vals = [build(c) for c in children]
        if kind == "dict":
            return dict(zip(meta, vals))
        if kind == "namedtuple":
            return meta(*vals)
        return tuple(vals) if kind == "tuple" else list(vals)

    return build(spec)


def broadcast_prefix(prefix, tree, what):
    """prefix (an int / None or a structure matching a prefix of tree) expanded to one value per
    leaf of tree; ValueError naming `what` when the structures differ."""
    if not isinstance(prefix, (tuple, list, dict)):
        return [prefix] * len(flatten(tree)[0])
    if isinstance(prefix, dict) != isinstance(tree, dict) or (
            isinstance(prefix, (tuple, list)) and (not isinstance(tree, (tuple, list)) or len(prefix) != len(tree))):
        raise ValueError(f"{what} must match the structure of the inputs (a prefix of it), got {prefix!r}")
    if isinstance(prefix, dict):
        if set(prefix) != set(tree):
            raise ValueError(f"{what}: the keys {sorted(prefix)} differ from the inputs' {sorted(tree)}")
        return [v for k in tree for v in broadcast_prefix(prefix[k], tree[k], what)]
    return [v for p, t in zip(prefix, tree) for v in broadcast_prefix(p, t, what)]
