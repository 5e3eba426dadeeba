// Sorting and order statistics: sort, argsort, msort, topk, kthvalue, median, nanmedian, mode.
// Kernels: src/kernels/sort.cpp (Note [Sort keys]).
#include <cmath>

#include "kernels/sort.h"
#include "ops/index_util.h"
#include "ops/manual_ops.h"
#include "decl/argsort.h"
#include "decl/empty.h"
#include "decl/kthvalue.h"
#include "decl/median.h"
#include "decl/mode.h"
#include "decl/msort.h"
#include "decl/nanmedian.h"
#include "decl/reshape.h"
#include "decl/sort.h"
#include "decl/topk.h"

namespace oneflow {

namespace {

// `sizes` with dim `d` replaced by `n` (a 0-d tensor stays 0-d).
DimVector WithDim(const DimVector& sizes, int d, int64_t n) {
  DimVector s = sizes;
  if (!s.empty()) s[d] = n;
  return s;
}

std::tuple<Tensor, Tensor> SortImpl(const Tensor& input, int64_t dim, bool descending, bool want_values) {
  const int d = WrapDim(dim, input.dim());
  Tensor values = want_values ? Empty(input.sizes(), input.dtype(), input.device()) : Tensor();
  Tensor indices = Empty(input.sizes(), DType::kInt64, input.device());
  if (input.device().type == DeviceType::kMeta) return {values, indices};
  SortKernel(input, d, descending, values, indices);
  return {values, indices};
}

// kthvalue / median / nanmedian / mode along one dim: PyTorch's checks, keepdim-shaped kernel
// outputs, then the reduced dim squeezed away unless keepdim.
std::tuple<Tensor, Tensor> SelectAlong(const Tensor& input, int64_t dim, bool keepdim, SelectKind kind, int64_t k,
                                       const char* op) {
  const int d = WrapDim(dim, input.dim());
  OF_CHECK_INDEX(SizeAt(input, d) > 0) << "Expected reduction dim " << d << " to have non-zero size. [OneFlow: "
                                       << "IndexError: Expected reduction dim " << d << " to have non-zero size.]";  // Note [Upstream's words] (src/autograd/meta.cpp)
  const DimVector keep = WithDim(input.sizes(), d, 1);
  DimVector out = keep;
  if (!keepdim && input.dim() > 0) out.erase(d);
  Tensor values = Empty(out, input.dtype(), input.device());
  Tensor indices = Empty(out, DType::kInt64, input.device());
  // The kernel writes through keepdim-shaped aliases of the (same-sized) outputs.
  if (input.device().type != DeviceType::kMeta)
    SelectKernel(input, d, kind, k, MakeView(values, keep, ContiguousStrides(keep), 0),
                 MakeView(indices, keep, ContiguousStrides(keep), 0));
  return {values, indices};
}

void CheckNotBool(const Tensor& input, const char* op) {
  OF_CHECK(input.dtype() != DType::kBool) << "\"" << op << "\" not implemented for 'Bool'";
}

// median() / nanmedian() over every element: a 0-d value and the flat index of it.
std::tuple<Tensor, Tensor> MedianAll(const Tensor& input, SelectKind kind, const char* op) {
  CheckNotBool(input, op);
  if (input.numel() == 0) {
    OF_CHECK(IsFloating(input.dtype())) << "the median of an empty integer tensor is undefined";
    Tensor v = Empty(DimVector{}, input.dtype(), input.device());
    Tensor i = Empty(DimVector{}, DType::kInt64, input.device());
    if (input.device().type != DeviceType::kMeta) {
      FillWith(v, Scalar(NAN));
      FillWith(i, Scalar(int64_t(0)));
    }
    return {v, i};
  }
  Tensor flat = Reshape(input, DimVector{-1});
  return SelectAlong(flat, 0, false, kind, 0, op);
}

}  // namespace

std::tuple<Tensor, Tensor> Sort(const Tensor& input, int64_t dim, bool descending, bool stable) {
  OpScope scope("sort");
  (void)stable;  // the kernels are always stable
  return SortImpl(input, dim, descending, true);
}

Tensor Argsort(const Tensor& input, int64_t dim, bool descending, bool stable) {
  OpScope scope("argsort");
  (void)stable;
  return std::get<1>(SortImpl(input, dim, descending, false));
}

Tensor Msort(const Tensor& input) {
  OpScope scope("msort");
  return std::get<0>(SortImpl(input, 0, false, true));
}

std::tuple<Tensor, Tensor> Topk(const Tensor& input, int64_t k, std::optional<int64_t> dim, bool largest, bool sorted) {
  OpScope scope("topk");
  (void)sorted;  // always sorted: one valid order for sorted=False
  const int d = WrapDim(dim.value_or(-1), input.dim());
  OF_CHECK(k >= 0 && k <= SizeAt(input, d)) << "selected index k out of range";
  CheckNotBool(input, "topk");
  DimVector shape = WithDim(input.sizes(), d, k);
  Tensor values = Empty(shape, input.dtype(), input.device());
  Tensor indices = Empty(shape, DType::kInt64, input.device());
  if (input.device().type != DeviceType::kMeta) TopkKernel(input, d, k, largest, values, indices);
  return {values, indices};
}

std::tuple<Tensor, Tensor> Kthvalue(const Tensor& input, int64_t k, int64_t dim, bool keepdim) {
  OpScope scope("kthvalue");
  const int d = WrapDim(dim, input.dim());
  CheckNotBool(input, "kthvalue_cpu");
  const int64_t n = SizeAt(input, d);
  OF_CHECK_INDEX(n > 0) << "Expected reduction dim " << d << " to have non-zero size.";
  OF_CHECK(k >= 1 && k <= n) << "selected number k out of range for dimension " << d;
  return SelectAlong(input, d, keepdim, SelectKind::kKth, k - 1, "kthvalue");
}

std::tuple<Tensor, Tensor> Median(const Tensor& input, std::optional<int64_t> dim, bool keepdim) {
  OpScope scope("median");
  if (!dim) return MedianAll(input, SelectKind::kMedian, "median");
  CheckNotBool(input, "median_cpu");
  return SelectAlong(input, *dim, keepdim, SelectKind::kMedian, 0, "median");
}

std::tuple<Tensor, Tensor> Nanmedian(const Tensor& input, std::optional<int64_t> dim, bool keepdim) {
  OpScope scope("nanmedian");
  if (!dim) return MedianAll(input, SelectKind::kNanMedian, "nanmedian");
  CheckNotBool(input, "nanmedian_cpu");
  return SelectAlong(input, *dim, keepdim, SelectKind::kNanMedian, 0, "nanmedian");
}

std::tuple<Tensor, Tensor> Mode(const Tensor& input, int64_t dim, bool keepdim) {
  OpScope scope("mode");
  return SelectAlong(input, dim, keepdim, SelectKind::kMode, 0, "mode");
}

}  // namespace oneflow
