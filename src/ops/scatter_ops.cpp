// Scatters along a dim: scatter (src tensor or value, reduce add/multiply), scatter_add,
// scatter_reduce (sum/prod/mean/amax/amin, include_self), and their in-place forms.
// Note [Scatter order]: for each position of the other dims, the index is walked along `dim` in
// increasing order, as PyTorch's CPU kernel does, so floating-point accumulations round in the
// same order. Rows of different other-dim positions never write the same element, so they are
// split over threads; a 1-d scatter is one row (serial, like PyTorch: splitting its targets over
// threads would make every thread read the whole index for a small gain).
#include <cmath>
#include <limits>
#include <string>

#include "kernels/gather_scatter.h"
#include "ops/index_util.h"
#include "ops/manual_ops.h"
#include "ops/pointwise.h"
#include "decl/add.h"
#include "decl/cast.h"
#include "decl/contiguous.h"
#include "decl/div.h"
#include "decl/empty.h"
#include "decl/floor_divide.h"
#include "decl/gt.h"
#include "decl/scatter.h"
#include "decl/scatter_add.h"
#include "decl/scatter_reduce.h"
#include "decl/where.h"
#include "decl/zeros.h"

namespace oneflow {

namespace {

// Raises PyTorch's out-of-bounds error when an index is outside self's size along `dim`;
// out-of-place callers rely on this check alone (they only write their fresh output).
void RunScatter(const Tensor& self, int dim, const Tensor& index, const Tensor& src, ScatterOp op) {
  if (index.numel() == 0 || self.device().type == DeviceType::kMeta) return;
  // Complex: sums and products (scatter_add, reduce='add' / 'multiply', scatter_reduce's sum /
  // prod / mean); there is no order for amax / amin, as in PyTorch.
  OF_CHECK(!IsComplex(self.dtype()) || op == ScatterOp::kAssign || op == ScatterOp::kAdd || op == ScatterOp::kMul)
      << "reduce amax / amin is not supported for complex tensors, got " << DTypeName(self.dtype());
  if (auto v = ScatterDim(self, dim, index, src, op))
    OF_THROW(kRuntime) << "index " << *v << " is out of bounds for dimension " << dim << " with size "
                       << SizeAt(self, dim);
}

// PyTorch's scatter checks, all before anything is written. src is undefined for a value.
int CheckScatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, const char* op) {
  const int d = WrapDim(dim, self.dim());
  OF_CHECK(IsIndexDType(index.dtype(), true)) << "Expected dtype int32/int64 for index";
  OF_CHECK(!src.defined() || src.dtype() == self.dtype()) << "Expected self.dtype to be equal to src.dtype";
  const int nd = std::max(self.dim(), 1);
  OF_CHECK(std::max(index.dim(), 1) == nd) << "Index tensor must have the same number of dimensions as self tensor";
  OF_CHECK(!src.defined() || std::max(src.dim(), 1) == nd) << "Index tensor must have the same number of dimensions as src tensor";
  if (index.numel() == 0) return d;
  bool ok = true;
  for (int k = 0; k < nd; ++k) {
    if (k != d && SizeAt(index, k) > SizeAt(self, k)) ok = false;
    if (src.defined() && SizeAt(index, k) > SizeAt(src, k)) ok = false;
  }
  if (!ok) {
    if (src.defined())
      OF_THROW(kRuntime) << "Expected index " << ShapeStr(index.sizes()) << " to be no larger than self "
                         << ShapeStr(self.sizes()) << " apart from dimension " << d
                         << " and to be no larger size than src " << ShapeStr(src.sizes());
    OF_THROW(kRuntime) << "Expected index " << ShapeStr(index.sizes()) << " to be no larger than self "
                       << ShapeStr(self.sizes()) << " apart from dimension " << d;
  }
  CheckSameDevice(self, index);
  if (src.defined()) CheckSameDevice(self, src);
  return d;
}

// The index as contiguous int64 (values checked by the kernel: out-of-place ops).
Tensor IndexInt64(const Tensor& index) { return Contiguous(CastTo(index, DType::kInt64)); }

// The same with every value checked against self's size along `d` first (in-place ops: nothing
// may be written before the error).
Tensor CheckedIndex(const Tensor& self, int d, const Tensor& index) {
  Tensor idx = Contiguous(CastTo(index, DType::kInt64));
  if (idx.numel() == 0 || self.device().type == DeviceType::kMeta) return idx;
  const int64_t size = SizeAt(self, d);
  if (auto bad = FindOutOfRange(idx, 0, size))
    OF_THROW(kRuntime) << "index " << *bad << " is out of bounds for dimension " << d << " with size " << size;
  return idx;
}

// A scalar as a src view of the index's shape (stride 0 everywhere).
Tensor BroadcastValue(const Scalar& v, DType dtype, const Tensor& index) {
  Tensor t = ScalarToTensor(v, dtype);
  return MakeView(t, index.sizes(), DimVector(index.dim(), 0), t.offset());
}

Tensor CloneForOutput(const Tensor& input) {
  Tensor out = Empty(input.sizes(), input.dtype(), input.device());
  if (input.device().type != DeviceType::kMeta) CopyInto(out, input);
  return out;
}

// scatter: src tensor, or a value (a Python number passed as src, or value=).
struct ScatterArgs {
  Tensor src;  // undefined for a value
  Scalar value;
  std::optional<ScatterOp> reduce;
};

ScatterArgs ParseScatter(const Tensor& self, const Tensor& src, const std::optional<Scalar>& value,
                         const std::optional<std::string>& reduce, const char* op) {
  ScatterArgs a;
  OF_CHECK_TYPE(!(src.defined() && value)) << op << "() got both src and value";
  OF_CHECK_TYPE(src.defined() || value) << op << "() missing 1 required argument: 'src' or 'value'";
  if (value) {
    a.value = *value;
  } else if (src.is_wrapped_number()) {
    if (src.device().type != DeviceType::kMeta) a.value = ItemOf(src);
  } else {
    a.src = src;
  }
  if (!a.src.defined() && self.device().type != DeviceType::kMeta) CheckFillRange(a.value, self.dtype());
  if (reduce) {
    OF_CHECK(*reduce == "add" || *reduce == "multiply") << "reduce argument must be either add or multiply.";
    a.reduce = *reduce == "add" ? ScatterOp::kAdd : ScatterOp::kMul;
  }
  return a;
}

void ScatterInto(const Tensor& self, int d, const Tensor& idx, const ScatterArgs& a) {
  Tensor src = a.src.defined() ? a.src : BroadcastValue(a.value, self.dtype(), idx);
  RunScatter(self, d, idx, src, a.reduce.value_or(ScatterOp::kAssign));
}

}  // namespace

// `src` is None (an undefined tensor inside, from the boxed form) when `value` is given.
Tensor Scatter(const Tensor& input, int64_t dim, const Tensor& index, std::optional<Tensor> src,
               std::optional<Scalar> value, std::optional<std::string> reduce) {
  OpScope scope("scatter");
  ScatterArgs a = ParseScatter(input, src.value_or(Tensor()), value, reduce, "scatter");
  const int d = CheckScatter(input, dim, index, a.src, "scatter");
  Tensor idx = IndexInt64(index);
  Tensor out = CloneForOutput(input);
  ScatterInto(out, d, idx, a);
  return out;
}

Tensor& Scatter_(Tensor& input, int64_t dim, const Tensor& index, std::optional<Tensor> src,
                 std::optional<Scalar> value, std::optional<std::string> reduce) {
  OpScope scope("scatter_");
  ScatterArgs a = ParseScatter(input, src.value_or(Tensor()), value, reduce, "scatter_");
  const int d = CheckScatter(input, dim, index, a.src, "scatter_");
  Tensor idx = CheckedIndex(input, d, index);
  a.src = Unaliased(a.src, input);
  ScatterInto(input, d, idx, a);
  input.BumpVersion();
  return input;
}

Tensor ScatterAdd(const Tensor& input, int64_t dim, const Tensor& index, const Tensor& src) {
  OpScope scope("scatter_add");
  const int d = CheckScatter(input, dim, index, src, "scatter_add");
  Tensor idx = IndexInt64(index);
  Tensor out = CloneForOutput(input);
  RunScatter(out, d, idx, src, ScatterOp::kAdd);
  return out;
}

Tensor& ScatterAdd_(Tensor& input, int64_t dim, const Tensor& index, const Tensor& src) {
  OpScope scope("scatter_add_");
  const int d = CheckScatter(input, dim, index, src, "scatter_add_");
  Tensor idx = CheckedIndex(input, d, index);
  RunScatter(input, d, idx, Unaliased(src, input), ScatterOp::kAdd);
  input.BumpVersion();
  return input;
}

namespace {

enum class Reduce { kSum, kProd, kMean, kAmax, kAmin };

Reduce ParseReduce(const std::string& r, DType dtype) {
  if (r == "sum") return Reduce::kSum;
  if (r == "prod") return Reduce::kProd;
  if (r == "mean") {
    OF_CHECK(dtype != DType::kBool) << "reduce='mean' is not implemented for 'Bool'";
    return Reduce::kMean;
  }
  if (r == "amax" || r == "max") return Reduce::kAmax;  // PyTorch also takes max/min
  if (r == "min") return Reduce::kAmin;
  OF_CHECK(r == "amin") << "reduce argument must be either sum, prod, mean, amax or amin, got " << r;
  return Reduce::kAmin;
}

// The reduction's identity in `dtype` (what include_self=False starts the scattered slots from).
Scalar Identity(Reduce r, DType dtype) {
  switch (r) {
    case Reduce::kProd: return Scalar(int64_t(1));
    case Reduce::kAmax:
    case Reduce::kAmin: {
      const bool mx = r == Reduce::kAmax;
      if (dtype == DType::kBool) return Scalar(!mx);
      if (IsFloating(dtype)) return Scalar(mx ? -INFINITY : INFINITY);
      return DispatchAll(dtype, [&](auto tag) -> Scalar {
        using T = typename std::decay_t<decltype(tag)>::type;
        if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
          return Scalar(static_cast<int64_t>(mx ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max()));
        return Scalar(int64_t(0));
      });
    }
    default: return Scalar(int64_t(0));
  }
}

// mean: self = self / count at scattered slots, count = scattered values (+1 with include_self);
// integers divide with floor, as PyTorch.
void DivideByCount(const Tensor& self, int d, const Tensor& idx, bool include_self) {
  Tensor count = ::oneflow::Zeros(self.sizes(), DType::kInt64, self.device(), false);
  Tensor one = ScalarToTensor(Scalar(int64_t(1)), DType::kInt64);
  RunScatter(count, d, idx, MakeView(one, idx.sizes(), DimVector(idx.dim(), 0), one.offset()), ScatterOp::kAdd);
  const int64_t extra = include_self ? 1 : 0;
  if (self.device().type == DeviceType::kCUDA) {  // the same division by table ops on the device
    if (self.dtype() == DType::kBool) return;       // a mean of bools stays "any" (the sum's OR)
    const Tensor n = Add(count, ScalarToTensor(Scalar(extra), DType::kInt64), Scalar(1));
    const Tensor q = IsFloating(self.dtype())
                         ? Div(self, Cast(n, self.dtype()), std::nullopt)
                         : Cast(FloorDivide(Cast(self, DType::kInt64), n), self.dtype());
    CopyInto(self, Where(Gt(count, ScalarToTensor(Scalar(int64_t(0)), DType::kInt64)), q, self));
    return;
  }
  Tensor sc = self.is_contiguous() ? self : Contiguous(self);
  DispatchAllAndComplex(self.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    using M = OpMath<T>;
    T* s = sc.data<T>();
    const int64_t* c = count.data<int64_t>();
    ParallelFor(0, sc.numel(), kGrainSize, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        if (c[i] == 0) continue;
        const int64_t n = c[i] + extra;
        if constexpr (std::is_same_v<T, bool>) {
          continue;  // a mean of bools stays "any" (the sum's OR)
        } else if constexpr (std::is_integral_v<T>) {
          const int64_t v = static_cast<int64_t>(s[i]);
          int64_t q = v / n;
          if ((v % n != 0) && ((v < 0) != (n < 0))) --q;
          s[i] = static_cast<T>(q);
        } else {
          s[i] = static_cast<T>(static_cast<M>(s[i]) / static_cast<M>(n));
        }
      }
    });
  });
  if (!sc.is_same(self)) CopyInto(self, sc);
}

void ScatterReduceInto(const Tensor& self, int d, const Tensor& idx, const Tensor& src, Reduce r,
                       bool include_self) {
  if (idx.numel() == 0 || self.device().type == DeviceType::kMeta) return;
  if (!include_self) {
    Tensor init = BroadcastValue(Identity(r, self.dtype()), self.dtype(), idx);
    RunScatter(self, d, idx, init, ScatterOp::kAssign);
  }
  switch (r) {
    case Reduce::kSum:
    case Reduce::kMean: RunScatter(self, d, idx, src, ScatterOp::kAdd); break;
    case Reduce::kProd: RunScatter(self, d, idx, src, ScatterOp::kMul); break;
    case Reduce::kAmax: RunScatter(self, d, idx, src, ScatterOp::kMax); break;
    case Reduce::kAmin: RunScatter(self, d, idx, src, ScatterOp::kMin); break;
  }
  if (r == Reduce::kMean) DivideByCount(self, d, idx, include_self);
}

}  // namespace

Tensor ScatterReduce(const Tensor& input, int64_t dim, const Tensor& index, const Tensor& src,
                     const std::string& reduce, bool include_self) {
  OpScope scope("scatter_reduce");
  const Reduce r = ParseReduce(reduce, input.dtype());
  const int d = CheckScatter(input, dim, index, src, "scatter_reduce");
  Tensor idx = IndexInt64(index);
  Tensor out = CloneForOutput(input);
  ScatterReduceInto(out, d, idx, src, r, include_self);
  return out;
}

Tensor& ScatterReduce_(Tensor& input, int64_t dim, const Tensor& index, const Tensor& src,
                       const std::string& reduce, bool include_self) {
  OpScope scope("scatter_reduce_");
  const Reduce r = ParseReduce(reduce, input.dtype());
  const int d = CheckScatter(input, dim, index, src, "scatter_reduce_");
  Tensor idx = CheckedIndex(input, d, index);
  ScatterReduceInto(input, d, idx, Unaliased(src, input), r, include_self);
  input.BumpVersion();
  return input;
}

}  // namespace oneflow
