// Bindings of ops whose Python signatures are overloaded (`Any` in the op table) and the indexing
// primitives; everything else is generated from the op table.
#include "api/arg_names.h"
#include "api/convert.h"
#include "ops/manual_ops.h"
#include "autograd/functional.h"
#include "graph/lazy.h"
#include "graph/serialize.h"
#include "decl/cast.h"
#include "decl/index_put.h"
#include "decl/maximum.h"
#include "decl/minimum.h"

namespace oneflow {

namespace {

// max(x) | max(x, dim, keepdim=False) | max(x, other)
// The boxed form's `Any` argument (ops/boxed.cpp: max/min's dim-or-other).
Value AnyValue(nb::handle h) {
  if (h.is_none()) return Value();
  if (IsTensor(h)) return ToTensor(h);
  return ToInt(h);
}

template <bool kMax>
nb::object Extreme(nb::handle input, nb::handle dim, bool keepdim) {
  const Tensor& x = ToTensor(input);
  // keepdim belongs to the (dim, keepdim) form: neither PyTorch nor upstream OneFlow has a
  // max(x, other, keepdim), so keepdim=True beside a tensor `other` is refused, not dropped. A
  // False is not told from one left out (the default; the global dispatcher also passes it to
  // every form's local call) and changes nothing.
  if (IsTensor(dim) && keepdim)
    OF_THROW(kType) << (kMax ? "max" : "min") << "(): keepdim is not taken with a tensor `other` (the form ("
                    << "input, other) has no keepdim)";
  if (auto* tr = lazy::Active()) [[unlikely]] {
    auto outs = lazy::RecordOp(tr, kMax ? "max" : "min", {x, AnyValue(dim), keepdim});
    if (outs.size() == 1) return Wrap(outs[0]);
    return WrapNamed(kMax ? "max" : "min", {"values", "indices"}, outs);
  }
  if (dim.is_none()) return Wrap(kMax ? functional::MaxAll(x) : functional::MinAll(x));
  if (IsTensor(dim)) return Wrap(kMax ? functional::Maximum(x, ToTensor(dim)) : functional::Minimum(x, ToTensor(dim)));
  const int64_t d = ToInt(dim);
  // (values, indices) as oneflow.return_types.max / .min, like torch.return_types.
  return WrapNamed(kMax ? "max" : "min", {"values", "indices"},
                   kMax ? functional::MaxDim(x, d, keepdim) : functional::MinDim(x, d, keepdim));
}

nb::object Split(nb::handle input, nb::handle split, nb::handle dim_h) {
  const Tensor& x = ToTensor(input);
  BindingScope scope_("split");  // names the op in ToInt's TypeError
  const int64_t dim = ToInt(dim_h);  // an int: nanobind's int64_t read True as dim 1
  if (auto* tr = lazy::Active()) [[unlikely]] {
    Value sizes = PyLong_Check(split.ptr()) ? Value(ToInt(split)) : Value(ToIntList(split));
    return WrapList(lazy::RecordOp(tr, "split", {x, sizes, dim}));
  }
  if (PyLong_Check(split.ptr())) return WrapList(functional::SplitBySize(x, ToInt(split), dim));
  return WrapList(functional::SplitWithSizes(x, ToInt64Vector(split), dim));
}

std::vector<Tensor> OptionalTensors(nb::handle seq) {
  std::vector<Tensor> v;
  for (nb::handle h : nb::borrow<nb::sequence>(seq)) v.push_back(h.is_none() ? Tensor() : ToTensor(h));
  return v;
}

// Graph nodes of the indexing primitives and copies (no table op of their own).
std::vector<Tensor> SliceNode(const std::vector<Value>& a) {
  return {functional::SliceView(TensorValue(a[0]), ValueAs<int64_t>(a[1]), ValueAs<int64_t>(a[2]),
                                ValueAs<int64_t>(a[3]), ValueAs<int64_t>(a[4]))};
}
std::vector<Tensor> SelectNode(const std::vector<Value>& a) {
  return {functional::SelectView(TensorValue(a[0]), ValueAs<int64_t>(a[1]), ValueAs<int64_t>(a[2]))};
}
std::vector<Tensor> IndexNode(const std::vector<Value>& a) {
  return {functional::IndexGather(TensorValue(a[0]), ValueAs<std::vector<Tensor>>(a[1]))};
}
void IndexPut(Tensor& self, const std::vector<Tensor>& idx, Tensor values) {
  OpScope scope("setitem");
  // Assignment converts the values (index_put_ itself wants matching dtypes, as PyTorch).
  if (values.dtype() != self.dtype() && !values.is_wrapped_number()) values = functional::Cast(values, self.dtype());
  functional::IndexPut_(self, idx, values, false);
}
std::vector<Tensor> IndexPutNode(const std::vector<Value>& a) {
  Tensor self = TensorValue(a[0]);
  IndexPut(self, ValueAs<std::vector<Tensor>>(a[1]), TensorValue(a[2]));
  return {self};
}
std::vector<Tensor> CopyNode(const std::vector<Value>& a) {
  Tensor self = TensorValue(a[0]);
  functional::CopyFrom_(self, TensorValue(a[1]));
  return {self};
}

// copy_ / fill_ / zero_: records the copy while a graph traces.
nb::object CopyInto(nb::handle self, const Tensor& src) {
  if (auto* tr = lazy::Active()) [[unlikely]] {
    tr->Record("copy_", &CopyNode, {ToTensor(self), src});
    return nb::borrow(self);
  }
  functional::CopyFrom_(ToTensor(self), src);
  return nb::borrow(self);
}

}  // namespace

void BindManualOps(nb::module_& m, nb::class_<PyTensor>& cls) {
  // (a saved graph program finds these nodes' calls by name: src/graph/serialize.h)
  lazy::RegisterNodeFn("slice", &SliceNode);
  lazy::RegisterNodeFn("select", &SelectNode);
  lazy::RegisterNodeFn("index", &IndexNode);
  lazy::RegisterNodeFn("setitem", &IndexPutNode);
  lazy::RegisterNodeFn("copy_", &CopyNode);
  // (flow.max / flow.min take out=: Note [out= arguments])
  // A global argument goes to the Python dispatcher by Note [Kind test], as in the generated bindings
  // (no conversion met it, no exception thrown); the Tensor methods below are routed there by the
  // global tensor's class already.
  m.def("max", [](nb::handle x, nb::handle dim, bool keepdim, nb::handle out) -> nb::object {
    if (AnyKind({x, dim})) [[unlikely]]
      return GlobalCall("max", false, {"input", "dim", "keepdim", "out"}, {x, dim, nb::bool_(keepdim), out});
    return out.is_none() ? Extreme<true>(x, dim, keepdim) : WithOut("max", Extreme<true>(x, dim, keepdim), out);
  }, "input"_a, "dim"_a = nb::none(), "keepdim"_a = false, nb::kw_only(), "out"_a = nb::none());
  m.def("min", [](nb::handle x, nb::handle dim, bool keepdim, nb::handle out) -> nb::object {
    if (AnyKind({x, dim})) [[unlikely]]
      return GlobalCall("min", false, {"input", "dim", "keepdim", "out"}, {x, dim, nb::bool_(keepdim), out});
    return out.is_none() ? Extreme<false>(x, dim, keepdim) : WithOut("min", Extreme<false>(x, dim, keepdim), out);
  }, "input"_a, "dim"_a = nb::none(), "keepdim"_a = false, nb::kw_only(), "out"_a = nb::none());
  m.def("_with_out", [](const char* op, nb::object result, nb::handle out) { return WithOut(op, result, out); },
        "Note [out= arguments]: result copied into out (Python-level functions' out=).");
  cls.def("max", &Extreme<true>, "dim"_a = nb::none(), "keepdim"_a = false);
  cls.def("min", &Extreme<false>, "dim"_a = nb::none(), "keepdim"_a = false);
  m.def("split", [](nb::handle x, nb::handle split, nb::handle dim) -> nb::object {
    if (AnyKind({x})) [[unlikely]]
      return GlobalCall("split", false, {"input", "split_size_or_sections", "dim"}, {x, split, dim});
    return Split(x, split, dim);
  }, "input"_a, "split_size_or_sections"_a, "dim"_a = 0);
  cls.def("split", &Split, "split_size_or_sections"_a, "dim"_a = 0);
  // Indexing primitives (python/oneflow/_indexing.py drives them).
  m.def("_slice", [](nb::handle x, int64_t dim, int64_t start, int64_t stop, int64_t step) {
    if (auto* tr = lazy::Active()) [[unlikely]]
      return Wrap(tr->Record("slice", &SliceNode, {ToTensor(x), dim, start, stop, step})[0]);
    return Wrap(functional::SliceView(ToTensor(x), dim, start, stop, step));
  });
  m.def("_select", [](nb::handle x, int64_t dim, int64_t index) {
    if (auto* tr = lazy::Active()) [[unlikely]]
      return Wrap(tr->Record("select", &SelectNode, {ToTensor(x), dim, index})[0]);
    return Wrap(functional::SelectView(ToTensor(x), dim, index));
  });
  m.def("_index", [](nb::handle x, nb::handle idx) {
    if (auto* tr = lazy::Active()) [[unlikely]]
      return Wrap(tr->Record("index", &IndexNode, {ToTensor(x), OptionalTensors(idx)})[0]);
    return Wrap(functional::IndexGather(ToTensor(x), OptionalTensors(idx)));
  });
  m.def("_index_put", [](nb::handle x, nb::handle idx, nb::handle v) {
    if (auto* tr = lazy::Active()) [[unlikely]] {
      tr->Record("setitem", &IndexPutNode, {ToTensor(x), OptionalTensors(idx), ToTensorLike(v)});
      return;
    }
    IndexPut(ToTensorMut(x), OptionalTensors(idx), ToTensorLike(v));
  });
  // flow.Tensor(...) is parsed in Python (_tensor.py: _tensor_init returns the new tensor).
  cls.def("__init__", [](PyTensor* self, nb::args args, nb::kwargs kwargs) {
    nb::module_ py = nb::module_::import_("oneflow._tensor");
    nb::object t = py.attr("_tensor_init")(*args, **kwargs);
    PyTensor* p = new (self) PyTensor(ToTensor(t));
    nb::handle me = nb::find(self);
    p->owner_ = me.ptr();
    if (!p->impl()->pyobj_ || p->impl()->pyobj_ == t.ptr()) p->impl()->pyobj_ = me.ptr();
  });
  cls.def(
      "copy_",
      [](nb::handle self, nb::handle src, nb::handle non_blocking) {
        // PyTorch's `non_blocking` (a prefetcher's `x.copy_(batch, non_blocking=True)`) is checked
        // and has nothing to change: a copy here has finished when copy_ returns.
        {
          BindingScope scope("copy_");
          ArgFrame frame;
          BindingArg(2, "non_blocking");  // PyTorch's numbering (a method's count after self)
          ToBool(non_blocking);
        }
        // OneFlow's copy_ also takes a numpy array (upstream's tests and scripts fill parameters
        // from arrays); its values are converted, then cast and broadcast like a tensor source.
        if (!IsTensor(src) && nb::hasattr(src, "__array_interface__")) {
          nb::object t = nb::module_::import_("oneflow._tensor").attr("as_tensor")(src);
          return CopyInto(self, ToTensor(t));
        }
        return CopyInto(self, ToTensorLike(src));
      },
      nb::arg("src").none(), nb::arg("non_blocking").none() = false);
  cls.def("fill_", [](nb::handle self, nb::handle v) {
    OpScope scope("fill_");
    OF_CHECK(!IsTensor(v) || ToTensor(v).dim() == 0)
        << "fill_ only supports 0-dimension value tensor but got tensor with " << ToTensor(v).dim()
        << " dimensions.";
    // A complex number into a real tensor (PyTorch: RuntimeError); a complex 0-d tensor is a
    // copy, which PyTorch allows (its imaginary part dropped with a warning).
    const DType dt = ToTensor(self).dtype();
    OF_CHECK(IsTensor(v) || !ToScalar(v).is_complex() || IsComplex(dt))
        << "value cannot be converted to type " << DTypeName(dt) << " without overflow";
    return CopyInto(self, ToTensorLike(v));
  });
  cls.def("zero_", [](nb::handle self) { return CopyInto(self, WrappedNumber(Scalar(0))); });
}

}  // namespace oneflow
