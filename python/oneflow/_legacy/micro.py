"""The micro-batch ops of the job-function API (INVENTORY C.3): ``unpack``, ``repeat``, ``acc``,
``pack``.

Note [Micro-batches]: OneFlow's jobs give a blob a *time shape*: ``unpack(x, n)`` cuts x along
dim 0 into n pieces that flow through the following ops one after another, ``repeat(x, n)`` hands
the same blob to n steps, ``acc(x, n)`` sums every n consecutive steps' blobs into one and
``pack(x, n)`` concatenates them along dim 0. Here a blob with a time shape is a ``MicroBatches``:
the list of its steps' tensors. An op given one runs once per step (its other arguments the same
at every step; two of them must have the same number of steps) and returns one. The steps' ops
are ordinary ops, so a job traces and differentiates them as any others:
``minimize(acc(loss, n))`` accumulates the gradients of n micro-batches, OneFlow's gradient
accumulation in a static job. Table ops reach ``map_op`` as global tensors reach their dispatcher
(Note [Global arguments]: a MicroBatches is a Python object the bindings hand on)."""
from .. import _oneflow_internal as _C


class MicroBatches:
    """A blob with a time shape: ``steps`` (its tensors, one per step); ``shape`` / ``dtype`` are a
    step's (a job's static shapes)."""

    _oneflow_global_ = True  # (the bindings' marker of Python-level tensor kinds: Note [Global arguments])
    __slots__ = ("steps",)

    def __init__(self, steps):
        if not steps:
            raise ValueError("a micro-batch blob needs at least one step")
        self.steps = list(steps)

    def __len__(self):
        return len(self.steps)

    @property
    def shape(self):
        return self.steps[0].shape

    @property
    def dtype(self):
        return self.steps[0].dtype

    @property
    def device(self):
        return self.steps[0].device

    def dim(self):
        return self.steps[0].dim()

    ndim = property(dim)

    def __getattr__(self, name):
        from .. import Tensor
        if name.startswith("__") or not hasattr(Tensor, name):
            raise AttributeError(f"micro-batch blob has no attribute '{name}'")
        if not callable(getattr(Tensor, name)):
            return map_op(lambda t: getattr(t, name), (self,), {})
        return lambda *args, **kwargs: map_op(lambda t, *a, **k: getattr(t, name)(*a, **k), (self,) + args, kwargs)

    def __getitem__(self, index):
        return map_op(lambda t, i: t[i], (self, index), {})

    def __repr__(self):
        return f"MicroBatches({len(self.steps)} steps of shape {tuple(self.shape)}, dtype={self.dtype})"


def _operator(name, swap=False):
    import operator
    op = getattr(operator, name.replace("__r", "__", 1).strip("_"))

    def method(self, *other):
        args = (other[0], self) if swap else (self,) + other
        return map_op(op, args, {})
    method.__name__ = name
    return method


for _n in ("__add__", "__sub__", "__mul__", "__truediv__", "__floordiv__", "__mod__", "__pow__", "__matmul__",
           "__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__", "__neg__", "__abs__"):
    setattr(MicroBatches, _n, _operator(_n))
for _n in ("__radd__", "__rsub__", "__rmul__", "__rtruediv__", "__rpow__", "__rmatmul__"):
    setattr(MicroBatches, _n, _operator(_n, swap=True))
MicroBatches.__hash__ = object.__hash__


def _count(obj, found):
    if isinstance(obj, MicroBatches):
        found.append(len(obj))
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            _count(o, found)
    elif isinstance(obj, dict):
        for o in obj.values():
            _count(o, found)
    return found


def _step(obj, i):
    if isinstance(obj, MicroBatches):
        return obj.steps[i]
    if isinstance(obj, list):
        return [_step(o, i) for o in obj]
    if isinstance(obj, tuple):
        return tuple(_step(o, i) for o in obj)
    if isinstance(obj, dict):
        return {k: _step(v, i) for k, v in obj.items()}
    return obj


def _gather(results):
    first = results[0]
    if isinstance(first, _C.Tensor):
        return MicroBatches(results)
    if isinstance(first, tuple) and type(first) is not tuple:  # named tuples (max's values, indices)
        return type(first)(*[_gather(list(col)) for col in zip(*results)])
    if isinstance(first, (list, tuple)):
        return type(first)(_gather(list(col)) for col in zip(*results))
    return first  # (a value the same at every step: a shape)


def has_steps(args, kwargs):
    return bool(_count((args, kwargs), []))


def map_op(fn, args, kwargs):
    """fn once per step of the micro-batch arguments; the results as micro-batches."""
    counts = set(_count((args, kwargs), []))
    if len(counts) > 1:
        raise ValueError(f"micro-batch blobs of different time shapes ({sorted(counts)} steps) in one op")
    n = counts.pop()
    return _gather([fn(*_step(args, i), **_step(kwargs, i)) for i in range(n)])


def _steps_of(x, what):
    if isinstance(x, MicroBatches):
        return x.steps
    if isinstance(x, _C.Tensor):
        return [x]
    raise TypeError(f"{what}: expected a blob, got {type(x).__name__}")


def _num(n, what):
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"{what}: the number of steps must be a positive int, got {n!r}")
    return n


def _result(steps):
    return steps[0] if len(steps) == 1 else MicroBatches(steps)


def unpack(input, unpack_num, name=None):  # noqa: A002 - OneFlow's names
    """Each step's blob cut along dim 0 into `unpack_num` pieces, one step each."""
    from .. import chunk
    n = _num(unpack_num, "unpack")
    out = []
    for t in _steps_of(input, "unpack"):
        if t.dim() == 0 or t.shape[0] % n:
            raise ValueError(f"unpack: dim 0 of a blob of shape {tuple(t.shape)} does not divide into {n} pieces")
        out += list(chunk(t, n, 0))
    return _result(out)


def repeat(input, repeat_num, name=None):  # noqa: A002
    """Each step's blob handed to `repeat_num` steps."""
    n = _num(repeat_num, "repeat")
    return _result([t for t in _steps_of(input, "repeat") for _ in range(n)])


def _groups(x, n, what):
    steps = _steps_of(x, what)
    if len(steps) % n:
        raise ValueError(f"{what}: a blob of {len(steps)} steps does not make groups of {n}")
    return [steps[i:i + n] for i in range(0, len(steps), n)]


def acc(one, max_acc_num, name=None):
    """The sum of every `max_acc_num` consecutive steps' blobs: one step per group."""
    from .. import add
    out = []
    for group in _groups(one, _num(max_acc_num, "acc"), "acc"):
        total = group[0]
        for t in group[1:]:
            total = add(total, t)
        out.append(total)
    return _result(out)


def pack(input, pack_num, name=None):  # noqa: A002
    """Every `pack_num` consecutive steps' blobs concatenated along dim 0: one step per group."""
    from .. import cat
    return _result([cat(g, 0) for g in _groups(input, _num(pack_num, "pack"), "pack")])
