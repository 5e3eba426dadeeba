// The boxed-call machinery (see boxed.h); the per-op entries are generated (boxed_<family>.cpp).
#include "ops/boxed.h"

#include "autograd/functional.h"
#include "core/error.h"
#include "decl/add.h"
#include "decl/empty.h"
#include "decl/maximum.h"
#include "decl/minimum.h"

namespace oneflow {

void RegisterGeneratedBoxed(BoxedRegistry& r);  // generated boxed_all.cpp

void BoxedRegistry::Add(OpSchema s) { ops_.push_back(std::move(s)); }

const OpSchema* BoxedRegistry::Find(std::string_view name) const {
  for (const OpSchema& s : ops_)
    if (s.name == name) return &s;
  return nullptr;
}

const BoxedRegistry& Boxed() {
  static const BoxedRegistry* r = [] {
    auto* reg = new BoxedRegistry();
    RegisterGeneratedBoxed(*reg);
    RegisterManualBoxed(*reg);
    return reg;
  }();
  return *r;
}

namespace {

const char* ValueKind(const Value& v) {
  static const char* names[] = {"None", "Tensor", "Tensor[]", "bool", "int", "float", "Scalar",
                                "int[]", "float[]", "DType", "Device", "str", "Generator"};
  return names[v.index()];
}

[[noreturn]] void BadValue(const Value& v, const char* want) {
  OF_THROW(kType) << "boxed call: expected " << want << ", got " << ValueKind(v);
  __builtin_unreachable();
}

std::vector<Value> BindArgs(const OpSchema& s, const std::vector<Tensor>& inputs,
                            const std::vector<std::pair<std::string, Value>>& attrs) {
  std::vector<Value> args(s.params.size());
  std::vector<bool> set(s.params.size(), false);
  size_t next = 0;
  int lists = 0;
  for (const ParamSchema& p : s.params) lists += p.type == "Tensor[]";
  for (size_t k = 0; k < s.params.size(); ++k) {
    const ParamSchema& p = s.params[k];
    if (!p.is_tensor()) continue;
    if (p.type == "Tensor[]" && lists > 1) {  // Note [Several tensor lists] in boxed.h
      std::vector<Tensor> list;
      while (next < inputs.size() && inputs[next].defined()) list.push_back(inputs[next++]);
      next = std::min(next + 1, inputs.size());
      args[k] = std::move(list);
      set[k] = true;
    } else if (p.type == "Tensor[]") {
      // The list takes the inputs left after the tensor parameters that follow it
      // (index_put(input, indices, values): the last input is values).
      size_t after = 0;
      for (size_t j = k + 1; j < s.params.size(); ++j) after += s.params[j].is_tensor();
      const size_t begin = std::min(next, inputs.size());
      const size_t end = std::max(begin, inputs.size() >= after ? inputs.size() - after : 0);
      args[k] = std::vector<Tensor>(inputs.begin() + begin, inputs.begin() + end);
      next = end;
      set[k] = true;
    } else if (next < inputs.size()) {
      if (inputs[next].defined()) args[k] = inputs[next];
      set[k] = inputs[next].defined() || p.optional;
      ++next;
    }
  }
  OF_CHECK(next >= inputs.size()) << "boxed call: " << s.name << " takes fewer tensor inputs than the "
                                  << inputs.size() << " given";
  for (const auto& [name, v] : attrs) {
    size_t k = 0;
    while (k < s.params.size() && s.params[k].name != name) ++k;
    OF_CHECK_TYPE(k < s.params.size()) << "boxed call: " << s.name << " has no argument '" << name << "'";
    args[k] = v;
    set[k] = true;
  }
  for (size_t k = 0; k < s.params.size(); ++k) {
    if (set[k]) continue;
    const ParamSchema& p = s.params[k];
    OF_CHECK_TYPE(p.has_default || p.optional)
        << "boxed call: " << s.name << " is missing its argument '" << p.name << "'";
    if (p.has_default) args[k] = p.default_value;
  }
  return args;
}

const OpSchema& FindOrThrow(std::string_view name) {
  const OpSchema* s = Boxed().Find(name);
  OF_CHECK_VALUE(s) << "no op named '" << std::string(name) << "'";
  return *s;
}

}  // namespace

const OpSchema& BoxedSchema(std::string_view name) { return FindOrThrow(name); }

std::vector<Value> BoxedArgs(const OpSchema& s, const std::vector<Tensor>& inputs,
                             const std::vector<std::pair<std::string, Value>>& attrs) {
  return BindArgs(s, inputs, attrs);
}

std::vector<Tensor> CallBoxed(std::string_view name, const std::vector<Tensor>& inputs,
                              const std::vector<std::pair<std::string, Value>>& attrs) {
  const OpSchema& s = FindOrThrow(name);
  return s.call(BindArgs(s, inputs, attrs));
}

Tensor ToMeta(const Tensor& t) {
  if (!t.defined() || t.device().type == DeviceType::kMeta) return t;
  int64_t extent = 1;
  for (int i = 0; i < t.dim(); ++i) extent += (t.sizes()[i] - 1) * t.strides()[i];
  if (t.numel() == 0) extent = 0;
  Tensor base = Empty(DimVector{extent}, t.dtype(), Device{DeviceType::kMeta, -1});
  Tensor m = MakeView(base, t.sizes(), t.strides(), 0);
  m.impl()->view_base_.Reset();
  m.impl()->is_wrapped_number_ = t.is_wrapped_number();
  return m;
}

std::vector<Tensor> InferBoxed(std::string_view name, const std::vector<Tensor>& inputs,
                               const std::vector<std::pair<std::string, Value>>& attrs) {
  std::vector<Tensor> metas;
  metas.reserve(inputs.size());
  // Python numbers (wrapped 0-d tensors) keep their value: it can decide a shape
  // (repeat_interleave(x, 3)) and costs nothing to carry.
  for (const Tensor& t : inputs) metas.push_back(t.defined() && t.is_wrapped_number() ? t : ToMeta(t));
  const OpSchema& s = FindOrThrow(name);
  std::vector<Value> args = BindArgs(s, metas, attrs);
  for (size_t k = 0; k < args.size(); ++k) {
    Value& v = args[k];
    if (auto* t = std::get_if<Tensor>(&v); t && !(t->defined() && t->is_wrapped_number())) *t = ToMeta(*t);
    if (auto* ts = std::get_if<std::vector<Tensor>>(&v))
      for (Tensor& t : *ts) t = ToMeta(t);
    // Factories make their output on the device they are given: make it meta.
    if (s.params[k].type == "Device") v = Device{DeviceType::kMeta, -1};
  }
  return s.call(args);
}

Tensor TensorValue(const Value& v) {
  if (std::holds_alternative<std::monostate>(v)) return Tensor();
  if (auto* t = std::get_if<Tensor>(&v)) return *t;
  // Python numbers given for a TensorLike argument.
  if (auto* s = std::get_if<Scalar>(&v)) return WrappedNumber(*s);
  if (auto* i = std::get_if<int64_t>(&v)) return WrappedNumber(Scalar(*i));
  if (auto* d = std::get_if<double>(&v)) return WrappedNumber(Scalar(*d));
  if (auto* b = std::get_if<bool>(&v)) return WrappedNumber(Scalar(*b));
  BadValue(v, "Tensor");
}

template <> Tensor ValueAs<Tensor>(const Value& v) { return TensorValue(v); }
template <> std::vector<Tensor> ValueAs<std::vector<Tensor>>(const Value& v) {
  if (auto* t = std::get_if<std::vector<Tensor>>(&v)) return *t;
  BadValue(v, "Tensor[]");
}
template <> bool ValueAs<bool>(const Value& v) {
  if (auto* b = std::get_if<bool>(&v)) return *b;
  BadValue(v, "bool");
}
template <> int64_t ValueAs<int64_t>(const Value& v) {
  if (auto* i = std::get_if<int64_t>(&v)) return *i;
  if (auto* b = std::get_if<bool>(&v)) return *b;
  if (auto* s = std::get_if<Scalar>(&v); s && !s->is_float()) return s->ToInt();
  BadValue(v, "int");
}
template <> double ValueAs<double>(const Value& v) {
  if (auto* d = std::get_if<double>(&v)) return *d;
  if (auto* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
  if (auto* s = std::get_if<Scalar>(&v)) return s->ToDouble();
  BadValue(v, "float");
}
template <> Scalar ValueAs<Scalar>(const Value& v) {
  if (auto* s = std::get_if<Scalar>(&v)) return *s;
  if (auto* i = std::get_if<int64_t>(&v)) return Scalar(*i);
  if (auto* d = std::get_if<double>(&v)) return Scalar(*d);
  if (auto* b = std::get_if<bool>(&v)) return Scalar(*b);
  BadValue(v, "Scalar");
}
template <> DimVector ValueAs<DimVector>(const Value& v) {
  if (auto* d = std::get_if<DimVector>(&v)) return *d;
  if (auto* i = std::get_if<int64_t>(&v)) return DimVector{*i};
  BadValue(v, "int[]");
}
template <> std::vector<double> ValueAs<std::vector<double>>(const Value& v) {
  if (auto* d = std::get_if<std::vector<double>>(&v)) return *d;
  if (auto* d = std::get_if<DimVector>(&v)) return std::vector<double>(d->begin(), d->end());
  if (auto* d = std::get_if<double>(&v)) return {*d};
  BadValue(v, "float[]");
}
template <> DType ValueAs<DType>(const Value& v) {
  if (auto* d = std::get_if<DType>(&v)) return *d;
  BadValue(v, "DType");
}
template <> Device ValueAs<Device>(const Value& v) {
  if (auto* d = std::get_if<Device>(&v)) return *d;
  BadValue(v, "Device");
}
template <> GeneratorPtr ValueAs<GeneratorPtr>(const Value& v) {
  if (std::holds_alternative<std::monostate>(v)) return GeneratorPtr();
  if (auto* g = std::get_if<GeneratorPtr>(&v)) return *g;
  BadValue(v, "Generator");
}
template <> std::string ValueAs<std::string>(const Value& v) {
  if (auto* s = std::get_if<std::string>(&v)) return *s;
  BadValue(v, "str");
}

// max/min/split have overloaded Python signatures (`Any` in the table); their boxed forms take
// the overload's arguments by name.
void RegisterManualBoxed(BoxedRegistry& r) {
  auto param = [](const char* name, const char* type, bool optional, Value dflt, bool has_default) {
    return ParamSchema{name, type, optional, false, false, has_default, std::move(dflt)};
  };
  for (bool is_max : {true, false}) {
    OpSchema s{is_max ? "max" : "min",
               // dim: an int (reduce along it) or a tensor (max(x, other) = maximum).
               {param("input", "Tensor", false, {}, false), param("dim", "Any", true, {}, true),
                param("keepdim", "bool", false, false, true)},
               {"values", "indices"},
               nullptr};
    s.call = is_max ? +[](const std::vector<Value>& a) -> std::vector<Tensor> {
      if (std::holds_alternative<std::monostate>(a[1])) return {functional::MaxAll(TensorValue(a[0]))};
      if (std::holds_alternative<Tensor>(a[1])) return {functional::Maximum(TensorValue(a[0]), TensorValue(a[1]))};
      return BoxOutputs(functional::MaxDim(TensorValue(a[0]), ValueAs<int64_t>(a[1]), ValueAs<bool>(a[2])));
    } : +[](const std::vector<Value>& a) -> std::vector<Tensor> {
      if (std::holds_alternative<std::monostate>(a[1])) return {functional::MinAll(TensorValue(a[0]))};
      if (std::holds_alternative<Tensor>(a[1])) return {functional::Minimum(TensorValue(a[0]), TensorValue(a[1]))};
      return BoxOutputs(functional::MinDim(TensorValue(a[0]), ValueAs<int64_t>(a[1]), ValueAs<bool>(a[2])));
    };
    r.Add(std::move(s));
  }
  r.Add(OpSchema{"split",
                 {param("input", "Tensor", false, {}, false), param("split_size_or_sections", "int[]", false, {}, false),
                  param("dim", "int", false, int64_t(0), true)},
                 {"*"},
                 +[](const std::vector<Value>& a) -> std::vector<Tensor> {
                   const Tensor x = TensorValue(a[0]);
                   const int64_t dim = ValueAs<int64_t>(a[2]);
                   if (auto* i = std::get_if<int64_t>(&a[1])) return functional::SplitBySize(x, *i, dim);
                   const DimVector s = ValueAs<DimVector>(a[1]);
                   return functional::SplitWithSizes(x, std::vector<int64_t>(s.begin(), s.end()), dim);
                 }});
}

}  // namespace oneflow
