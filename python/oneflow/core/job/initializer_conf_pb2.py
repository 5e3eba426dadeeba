"""OneFlow 0.x's ``InitializerConf`` message as its scripts build it by hand::

    init = initializer_conf_pb2.InitializerConf()
    init.truncated_normal_conf.std = 0.8

The set sub-message (the message's ``type`` oneof, fields with the .proto's defaults) decides how
a variable is filled; the object is an initializer that ``flow.get_variable`` and the layers take
like the ones ``flow.*_initializer`` return."""
from ..._legacy import initializers as _init

# VarianceNorm and RandomDistribution enums (initializer_conf.proto)
kFanIn, kFanOut, kAverage = 0, 1, 2
kRandomUniform, kRandomNormal, kTruncatedNormal = 0, 1, 2
_MODES = {kFanIn: "fan_in", kFanOut: "fan_out", kAverage: "fan_avg"}
_DISTS = {kRandomUniform: "random_uniform", kRandomNormal: "random_normal", kTruncatedNormal: "truncated_normal"}

_FIELDS = {  # sub-message -> its fields with their defaults
    "constant_conf": {"value": 0.0}, "constant_int_conf": {"value": 0},
    "random_uniform_conf": {"min": 0.0, "max": 1.0}, "random_uniform_int_conf": {"min": 0, "max": 1},
    "random_normal_conf": {"mean": 0.0, "std": 1.0}, "truncated_normal_conf": {"mean": 0.0, "std": 0.05},
    "xavier_conf": {"variance_norm": kFanIn, "data_format": ""},
    "msra_conf": {"variance_norm": kFanIn, "data_format": ""},
    "variance_scaling_conf": {"scale": 1.0, "variance_norm": kFanIn, "distribution": kRandomUniform,
                              "data_format": ""},
    "empty_conf": {},
}


class _SubMessage:
    def __init__(self, owner, kind):
        object.__setattr__(self, "_owner", owner)
        object.__setattr__(self, "_kind", kind)
        object.__setattr__(self, "_values", dict(_FIELDS[kind]))

    def __getattr__(self, name):
        values = object.__getattribute__(self, "_values")
        if name in values:
            return values[name]
        raise AttributeError(f"{self._kind} has no field '{name}'")

    def __setattr__(self, name, value):
        if name not in self._values:
            raise AttributeError(f"{self._kind} has no field '{name}'")
        self._values[name] = value
        self._owner._set_type(self._kind)

    def SetInParent(self):  # noqa: N802 - protobuf's name (for the field-less empty_conf)
        self._owner._set_type(self._kind)


class InitializerConf(_init.InitializerConf):
    def __init__(self):
        super().__init__("InitializerConf", self._fill_by_type)
        self._subs, self._type = {}, None

    def __getattr__(self, name):
        if name in _FIELDS:
            subs = self.__dict__["_subs"]
            if name not in subs:
                subs[name] = _SubMessage(self, name)
            return subs[name]
        raise AttributeError(f"InitializerConf has no field '{name}'")

    def _set_type(self, kind):
        for other in list(self._subs):  # a oneof: setting one clears the others
            if other != kind:
                del self._subs[other]
        self._type = kind
        self.conf = {kind: dict(self._subs[kind]._values) if kind in self._subs else {}}

    def WhichOneof(self, group):  # noqa: N802 - protobuf's name
        if group != "type":
            raise ValueError(f"InitializerConf has no oneof '{group}'")
        return self._type

    def HasField(self, name):  # noqa: N802
        return self._type == name

    def _fill_by_type(self, t):
        if self._type is None:
            raise ValueError("InitializerConf: no initializer set (set e.g. constant_conf.value)")
        v = self._subs[self._type]._values if self._type in self._subs else {}
        kind = self._type
        if kind in ("constant_conf", "constant_int_conf"):
            t.fill_(v["value"])
        elif kind == "random_uniform_conf":
            t.uniform_(v["min"], v["max"])
        elif kind == "random_uniform_int_conf":
            from ... import randint
            t.copy_(randint(int(v["min"]), int(v["max"]), tuple(t.shape), dtype=t.dtype))
        elif kind == "random_normal_conf":
            t.normal_(v["mean"], v["std"])
        elif kind == "truncated_normal_conf":
            _init._truncated(t, v["mean"], v["std"])
        elif kind in ("xavier_conf", "msra_conf"):  # uniform with variance 1 / n, normal with 2 / n
            scale, dist = (1.0, "random_uniform") if kind == "xavier_conf" else (2.0, "random_normal")
            _init._scaled_fill(scale, _MODES[v["variance_norm"]], dist, v["data_format"])(t)
        elif kind == "variance_scaling_conf":
            _init._scaled_fill(v["scale"], _MODES[v["variance_norm"]], _DISTS[v["distribution"]], v["data_format"])(t)
        # empty_conf: the values as allocated
