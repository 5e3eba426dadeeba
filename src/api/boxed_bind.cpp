// Python access to the boxed form of the ops (src/ops/boxed.h): schemas, boxed calls and meta
// inference alone. Used by the tests now and by the graph tracer and BuiltinOp later.
#include "api/bind_registry.h"
#include "api/convert.h"
#include "graph/lazy.h"
#include "ops/boxed.h"

namespace oneflow {

namespace {

// A Python value for a parameter of the given table type.
Value ToValue(nb::handle h, const ParamSchema& p) {
  if (h.is_none()) return Value();
  const std::string& t = p.type;
  if (t == "Tensor") return ToTensor(h);
  if (t == "TensorLike") return ToTensorLike(h);
  if (t == "Tensor[]") return ToTensorList(h);
  if (t == "int") return ToInt(h);
  if (t == "float") return ToDouble(h);
  if (t == "bool") return ToBool(h);
  if (t == "Scalar") return ToScalar(h);
  if (t == "int[]") {
    // split's sizes-or-size: keep a plain int an int.
    if (PyLong_Check(h.ptr())) return static_cast<int64_t>(ToInt(h));
    return ToIntList(h);
  }
  if (t == "float[]") return ToDoubleList(h);
  if (t == "DType") return ToDType(h);
  if (t == "Device") return ToDevice(h);
  if (t == "str") return ToString(h);
  if (t == "Generator") return ToGenerator(h);
  if (t == "Any") {  // hand-written overloads (max's dim-or-other)
    if (IsTensor(h)) return ToTensor(h);
    if (PyLong_Check(h.ptr())) return static_cast<int64_t>(ToInt(h));
    if (PyFloat_Check(h.ptr())) return ToDouble(h);
  }
  OF_THROW(kType) << "boxed call: unsupported parameter type " << t;
}

nb::object ValueToPy(const Value& v) {
  return std::visit([](const auto& x) -> nb::object {
    using T = std::decay_t<decltype(x)>;
    if constexpr (std::is_same_v<T, std::monostate>) return nb::none();
    else if constexpr (std::is_same_v<T, Tensor>) return Wrap(x);
    else if constexpr (std::is_same_v<T, std::vector<Tensor>>) return WrapList(x);
    else if constexpr (std::is_same_v<T, Scalar>) {
      if (x.is_float()) return nb::float_(x.ToDouble());
      if (x.is_bool()) return nb::bool_(x.ToInt() != 0);
      return nb::int_(x.ToInt());
    } else if constexpr (std::is_same_v<T, DimVector>) {
      nb::list l;
      for (int64_t d : x) l.append(d);
      return nb::tuple(l);
    } else if constexpr (std::is_same_v<T, DType>) return DTypeObject(x);
    else if constexpr (std::is_same_v<T, Device>) return nb::str(x.str().c_str());
    else if constexpr (std::is_same_v<T, GeneratorPtr>) return WrapGenerator(x);
    else return nb::cast(x);
  }, v);
}

std::vector<std::pair<std::string, Value>> ToAttrs(const OpSchema& s, nb::handle attrs) {
  std::vector<std::pair<std::string, Value>> out;
  if (attrs.is_none()) return out;
  for (auto item : nb::borrow<nb::dict>(attrs)) {
    std::string name = nb::cast<std::string>(item.first);
    const ParamSchema* p = nullptr;
    for (const ParamSchema& q : s.params)
      if (q.name == name) p = &q;
    OF_CHECK_TYPE(p) << "boxed call: " << s.name << " has no argument '" << name << "'";
    out.emplace_back(name, ToValue(item.second, *p));
  }
  return out;
}

const OpSchema& Schema(const std::string& name) {
  const OpSchema* s = Boxed().Find(name);
  OF_CHECK_VALUE(s) << "no op named '" << name << "'";
  return *s;
}

std::vector<Tensor> Inputs(nb::handle inputs) {
  std::vector<Tensor> v;
  for (nb::handle h : nb::borrow<nb::sequence>(inputs)) v.push_back(h.is_none() ? Tensor() : ToTensorLike(h));
  return v;
}

}  // namespace

void BindBoxed(nb::module_& m) {
  m.def("_op_names", [] {
    nb::list l;
    for (const OpSchema& s : Boxed().all()) l.append(nb::str(s.name.c_str()));
    return l;
  });
  // (params: [(name, type, optional, kw_only, varargs, has_default, default)], outputs: [names])
  m.def("_op_schema", [](const std::string& name) {
    const OpSchema& s = Schema(name);
    nb::list params, outs;
    for (const ParamSchema& p : s.params)
      params.append(nb::make_tuple(p.name, p.type, p.optional, p.kw_only, p.varargs, p.has_default,
                                   p.has_default ? ValueToPy(p.default_value) : nb::none()));
    for (const std::string& o : s.outputs) outs.append(nb::str(o.c_str()));
    return nb::make_tuple(params, outs);
  });
  m.def("_call_boxed", [](const std::string& name, nb::handle inputs, nb::handle attrs) {
    const OpSchema& s = Schema(name);
    if (auto* tr = lazy::Active()) [[unlikely]]  // BuiltinOp inside a graph or job: a node
      return WrapList(tr->Record(s.name.c_str(), s.call, BoxedArgs(s, Inputs(inputs), ToAttrs(s, attrs)), &s));
    return WrapList(CallBoxed(name, Inputs(inputs), ToAttrs(s, attrs)));
  }, "name"_a, "inputs"_a, "attrs"_a = nb::none());
  m.def("_infer_boxed", [](const std::string& name, nb::handle inputs, nb::handle attrs) {
    return WrapList(InferBoxed(name, Inputs(inputs), ToAttrs(Schema(name), attrs)));
  }, "name"_a, "inputs"_a, "attrs"_a = nb::none());
}
OF_BIND(20, BindBoxed);

}  // namespace oneflow
