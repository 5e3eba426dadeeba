"""``flow.BuiltinOp`` / ``flow.builtin_op`` and ``flow.user_op_builder``: build a call of any op of
the table by name (docs/architecture.md §8's boxed form: ``flow._C._call_boxed``), eagerly or inside a graph or
job function (where the call is recorded like any other op).

    op = flow.builtin_op("add").Input("input").Input("other").Output("out").Attr("alpha", 2.0).Build()
    (y,) = op(a, b)                       # a + 2 * b

    y = (flow.user_op_builder("my_add").Op("add").Input("input", [a]).Input("other", [b])
         .Output("out").Build().InferAndTryRun().RemoteBlobList()[0])

Inputs fill the op's tensor parameters in the order they are declared (the names are the
caller's); attributes are checked against the op's parameters (name and type) when set.
"""
from .. import _oneflow_internal as _C

_ATTR_TYPES = {
    "int": (int,), "float": (int, float), "bool": (bool,), "Scalar": (bool, int, float),
    "int[]": (int, list, tuple), "float[]": (int, float, list, tuple), "str": (str,),
}


def _schema(op_type_name):
    try:
        params, outputs = _C._op_schema(op_type_name)
    except ValueError:
        raise ValueError(f"BuiltinOp: no op named '{op_type_name}'") from None
    return params, outputs


class BuiltinOp:
    """A builder for a call of the table op `op_type_name`."""

    def __init__(self, op_type_name, op_name=None):
        self._type = op_type_name
        self._name = op_name or op_type_name
        self._params, self._outputs = _schema(op_type_name)
        self._inputs = []   # (name, count)
        self._declared_outputs = []
        self._attrs = {}
        self._op = None

    def Input(self, input_name, num=1):  # noqa: N802 - OneFlow's names
        if num < 1:
            raise ValueError(f"BuiltinOp {self._name}: Input '{input_name}' needs num >= 1")
        self._inputs.append((input_name, num))
        return self

    def Output(self, output_name, num=1):  # noqa: N802
        if num < 1:
            raise ValueError(f"BuiltinOp {self._name}: Output '{output_name}' needs num >= 1")
        self._declared_outputs.append((output_name, num))
        return self

    def Attr(self, attr_name, attr_value, attr_type_name=None):  # noqa: N802
        p = next((p for p in self._params if p[0] == attr_name), None)
        if p is None or p[1] in ("Tensor", "TensorLike", "Tensor[]"):
            raise ValueError(f"BuiltinOp {self._name}: op '{self._type}' has no attribute '{attr_name}'")
        allowed = _ATTR_TYPES.get(p[1])
        if allowed is not None and not (attr_value is None and p[2]) and not isinstance(attr_value, allowed):
            raise ValueError(f"BuiltinOp {self._name}: attribute '{attr_name}' is {p[1]}, got "
                             f"{type(attr_value).__name__}")
        self._attrs[attr_name] = attr_value
        return self

    def Build(self):  # noqa: N802
        """Completes the op; calling it runs the op: ``op(*inputs)`` -> tuple of outputs."""
        tensor_params = [p for p in self._params if p[1] in ("Tensor", "TensorLike", "Tensor[]")]
        if sum(n for _, n in self._inputs) > 0 and not tensor_params:
            raise ValueError(f"BuiltinOp {self._name}: op '{self._type}' takes no tensor inputs")
        self._op = _BuiltOp(self._type, self._name, sum(n for _, n in self._inputs), dict(self._attrs))
        return self._op

    @property
    def op(self):
        if self._op is None:
            raise RuntimeError(f"BuiltinOp {self._name}: call Build() first")
        return self._op


class _BuiltOp:
    def __init__(self, op_type, name, num_inputs, attrs):
        self.op_type_name, self.op_name, self._n, self._attrs = op_type, name, num_inputs, attrs

    def __call__(self, *inputs):
        flat = []
        for x in inputs:
            flat.extend(x if isinstance(x, (list, tuple)) else [x])
        if len(flat) != self._n:
            raise ValueError(f"BuiltinOp {self.op_name}: declared {self._n} inputs, got {len(flat)}")
        return tuple(_C._call_boxed(self.op_type_name, flat, self._attrs))

    def __repr__(self):
        return f"BuiltinOp({self.op_type_name!r}, inputs={self._n}, attrs={self._attrs})"


builtin_op = BuiltinOp


class UserOpConfBuilder:
    """``flow.user_op_builder(op_name).Op(type).Input(name, [blobs]).Output(name).Attr(...)
    .Build().InferAndTryRun().RemoteBlobList()``."""

    def __init__(self, op_name):
        self._name, self._type, self._inputs, self._attrs, self._outputs = op_name, None, [], {}, []

    def Op(self, op_type_name):  # noqa: N802
        _schema(op_type_name)
        self._type = op_type_name
        return self

    def Input(self, input_name, input_blob_list):  # noqa: N802
        self._inputs.extend(input_blob_list)
        return self

    def Output(self, output_name, num=1):  # noqa: N802
        self._outputs.append((output_name, num))
        return self

    def Attr(self, attr_name, attr_value, attr_type_name=None):  # noqa: N802
        self._attrs[attr_name] = attr_value
        return self

    def Build(self):  # noqa: N802
        if self._type is None:
            raise ValueError(f"user_op_builder {self._name}: call Op(type) before Build()")
        b = BuiltinOp(self._type, self._name)
        if self._inputs:
            b.Input("in", len(self._inputs))
        for k, v in self._attrs.items():
            b.Attr(k, v)
        return _UserOp(b.Build(), self._inputs)


class _UserOp:
    def __init__(self, op, inputs):
        self._op, self._inputs, self._outs = op, inputs, None

    def InferAndTryRun(self):  # noqa: N802
        self._outs = list(self._op(*self._inputs))
        return self

    def RemoteBlobList(self):  # noqa: N802
        if self._outs is None:
            raise RuntimeError("user op: call InferAndTryRun() first")
        return self._outs


def user_op_builder(op_name):
    return UserOpConfBuilder(op_name)
