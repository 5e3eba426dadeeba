// Bindings of ops whose Python signatures are overloaded (`Any` in the op table) and the indexing
// primitives; everything else is generated from the op table.
#include "api/convert.h"
#include "ops/manual_ops.h"
#include "autograd/functional.h"
#include "decl/cast.h"
#include "decl/index_put.h"
#include "decl/maximum.h"
#include "decl/minimum.h"

namespace oneflow {

namespace {

// max(x) | max(x, dim, keepdim=False) | max(x, other)
template <bool kMax>
nb::object Extreme(nb::handle input, nb::handle dim, bool keepdim) {
  const Tensor& x = ToTensor(input);
  if (dim.is_none()) return Wrap(kMax ? functional::MaxAll(x) : functional::MinAll(x));
  if (IsTensor(dim)) return Wrap(kMax ? functional::Maximum(x, ToTensor(dim)) : functional::Minimum(x, ToTensor(dim)));
  const int64_t d = ToInt(dim);
  // (values, indices) as oneflow.return_types.max / .min, like torch.return_types.
  return WrapNamed(kMax ? "max" : "min", {"values", "indices"},
                   kMax ? functional::MaxDim(x, d, keepdim) : functional::MinDim(x, d, keepdim));
}

nb::object Split(nb::handle input, nb::handle split, int64_t dim) {
  const Tensor& x = ToTensor(input);
  if (PyLong_Check(split.ptr())) return WrapList(functional::SplitBySize(x, ToInt(split), dim));
  return WrapList(functional::SplitWithSizes(x, ToInt64Vector(split), dim));
}

std::vector<Tensor> OptionalTensors(nb::handle seq) {
  std::vector<Tensor> v;
  for (nb::handle h : nb::borrow<nb::sequence>(seq)) v.push_back(h.is_none() ? Tensor() : ToTensor(h));
  return v;
}

}  // namespace

void BindManualOps(nb::module_& m, nb::class_<PyTensor>& cls) {
  m.def("max", &Extreme<true>, "input"_a, "dim"_a = nb::none(), "keepdim"_a = false);
  m.def("min", &Extreme<false>, "input"_a, "dim"_a = nb::none(), "keepdim"_a = false);
  cls.def("max", &Extreme<true>, "dim"_a = nb::none(), "keepdim"_a = false);
  cls.def("min", &Extreme<false>, "dim"_a = nb::none(), "keepdim"_a = false);
  m.def("split", &Split, "input"_a, "split_size_or_sections"_a, "dim"_a = 0);
  cls.def("split", &Split, "split_size_or_sections"_a, "dim"_a = 0);
  // Indexing primitives (python/oneflow/_indexing.py drives them).
  m.def("_slice", [](nb::handle x, int64_t dim, int64_t start, int64_t stop, int64_t step) {
    return Wrap(functional::SliceView(ToTensor(x), dim, start, stop, step));
  });
  m.def("_select", [](nb::handle x, int64_t dim, int64_t index) { return Wrap(functional::SelectView(ToTensor(x), dim, index)); });
  m.def("_index", [](nb::handle x, nb::handle idx) { return Wrap(functional::IndexGather(ToTensor(x), OptionalTensors(idx))); });
  m.def("_index_put", [](nb::handle x, nb::handle idx, nb::handle v) {
    OpScope scope("setitem");
    Tensor& self = ToTensorMut(x);
    Tensor values = ToTensorLike(v);
    // Assignment converts the values (index_put_ itself wants matching dtypes, as PyTorch).
    if (values.dtype() != self.dtype() && !values.is_wrapped_number()) values = functional::Cast(values, self.dtype());
    functional::IndexPut_(self, OptionalTensors(idx), values, false);
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
  cls.def("copy_", [](nb::handle self, nb::handle src) {
    functional::CopyFrom_(ToTensor(self), ToTensorLike(src));
    return nb::borrow(self);
  });
  cls.def("fill_", [](nb::handle self, nb::handle v) {
    OpScope scope("fill_");
    OF_CHECK(!IsTensor(v) || ToTensor(v).dim() == 0)
        << "fill_ only supports 0-dimension value tensor but got tensor with " << ToTensor(v).dim()
        << " dimensions.";
    functional::CopyFrom_(ToTensor(self), ToTensorLike(v));
    return nb::borrow(self);
  });
  cls.def("zero_", [](nb::handle self) {
    functional::CopyFrom_(ToTensor(self), WrappedNumber(Scalar(0)));
    return nb::borrow(self);
  });
}

}  // namespace oneflow
