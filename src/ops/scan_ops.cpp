// Scans along one dim: cumsum, cumprod, logcumsumexp (and their reverse forms used by the
// backward formulas), cummax / cummin, and cummaxmin_backward.
// The loops in kernels/scan.h.
#include <cmath>
#include <complex>
#include <limits>
#include <vector>

#include "core/parallel.h"
#include "kernels/scan.h"
#include "ops/copy.h"
#include "ops/pointwise.h"
#include "ops/index_util.h"
#include "decl/contiguous.h"
#include "decl/cummax.h"
#include "decl/cummaxmin_backward.h"
#include "decl/cummin.h"
#include "decl/cumprod.h"
#include "decl/cumsum.h"
#include "decl/empty.h"
#include "decl/logcumsumexp.h"
#include "decl/reverse_cumsum.h"
#include "decl/reverse_logcumsumexp.h"

namespace oneflow {

namespace {

struct Geom {
  int64_t outer = 1, n = 1, inner = 1;
};

Geom GeomOf(const DimVector& sizes, int d) {
  Geom g;
  for (int i = 0; i < sizes.size(); ++i) {
    if (i < d) g.outer *= sizes[i];
    else if (i == d) g.n = sizes[i];
    else g.inner *= sizes[i];
  }
  return g;
}

enum class Kind { kSum, kProd, kLogSumExp };  // 0, 1, 2 as ScanLines' kind

// dtype rule of cumsum / cumprod: an explicit dtype, else integers (and bool) become int64.
DType ScanDType(DType in, const std::optional<DType>& dtype, Kind kind) {
  if (dtype) return *dtype;
  if (kind == Kind::kLogSumExp) return in;
  return IsFloating(in) || IsComplex(in) ? in : DType::kInt64;
}

Tensor RunScan(const Tensor& input, int64_t dim, const std::optional<DType>& dtype, Kind kind, bool reverse) {
  // Complex: no device kernel yet; the no-kernel error sends a CUDA tensor through the host
  // fallback (Note [Host fallback]), which runs the CPU loop below on a copy.
  if (IsComplex(input.dtype()) && input.device().type == DeviceType::kCUDA)
    OF_THROW_NO_KERNEL(input.device().index) << "complex scans have no CUDA kernel";
  const int d = WrapDim(dim, input.dim());
  const DType dt = ScanDType(input.dtype(), dtype, kind);
  if (kind == Kind::kLogSumExp) {
    OF_CHECK(IsFloating(dt) || IsComplex(dt)) << "expected a floating point or complex tensor, got " << DTypeName(dt);
  }
  Tensor out = Empty(input.sizes(), dt, input.device());
  if (out.device().type == DeviceType::kMeta || out.numel() == 0) return out;
  const Tensor x = Contiguous(CastTo(input, dt));
  const Geom g = GeomOf(input.sizes(), d);
  ScanLines(x, out, g.outer, g.n, g.inner, static_cast<int>(kind), reverse);  // Kind's order
  return out;
}

// In place the result keeps self's dtype: an explicit other dtype is refused, and so is a bool
// self with anything to scan (its sums are not bools), as PyTorch does.
void CheckScanInplace(const Tensor& self, int64_t dim, const std::optional<DType>& dtype) {
  WrapDim(dim, self.dim());
  OF_CHECK(!dtype || *dtype == self.dtype())
      << "Bad in-place call: input tensor dtype " << DTypeName(self.dtype()) << " and output tensor dtype "
      << DTypeName(*dtype) << " should match";
  OF_CHECK(self.dtype() != DType::kBool || self.dim() == 0 || self.numel() == 0)
      << "not implemented for 'Bool' tensors in place";
}

Tensor& ScanInplace(Tensor& self, const Tensor& result) {
  CheckInplaceResult(self, result.dtype(), self.sizes());
  CopyInto(self, result);
  self.BumpVersion();
  return self;
}

}  // namespace

Tensor Cumsum(const Tensor& input, int64_t dim, std::optional<DType> dtype) {
  OpScope scope("cumsum");
  return RunScan(input, dim, dtype, Kind::kSum, false);
}

Tensor& Cumsum_(Tensor& input, int64_t dim, std::optional<DType> dtype) {
  OpScope scope("cumsum_");
  CheckScanInplace(input, dim, dtype);
  return ScanInplace(input, RunScan(input, dim, dtype ? dtype : std::optional<DType>(input.dtype()), Kind::kSum, false));
}

Tensor Cumprod(const Tensor& input, int64_t dim, std::optional<DType> dtype) {
  OpScope scope("cumprod");
  return RunScan(input, dim, dtype, Kind::kProd, false);
}

Tensor& Cumprod_(Tensor& input, int64_t dim, std::optional<DType> dtype) {
  OpScope scope("cumprod_");
  CheckScanInplace(input, dim, dtype);
  return ScanInplace(input, RunScan(input, dim, dtype ? dtype : std::optional<DType>(input.dtype()), Kind::kProd, false));
}

Tensor Logcumsumexp(const Tensor& input, int64_t dim) {
  OpScope scope("logcumsumexp");
  return RunScan(input, dim, std::nullopt, Kind::kLogSumExp, false);
}

Tensor ReverseCumsum(const Tensor& input, int64_t dim) {
  OpScope scope("reverse_cumsum");
  return RunScan(input, dim, std::nullopt, Kind::kSum, true);
}

Tensor ReverseLogcumsumexp(const Tensor& input, int64_t dim) {
  OpScope scope("reverse_logcumsumexp");
  return RunScan(input, dim, std::nullopt, Kind::kLogSumExp, true);
}

// ---- cummax / cummin ----

namespace {

template <bool kMax>
std::tuple<Tensor, Tensor> CumExtreme(const Tensor& input, int64_t dim) {
  const int d = WrapDim(dim, input.dim());
  Tensor values = Empty(input.sizes(), input.dtype(), input.device());
  Tensor indices = Empty(input.sizes(), DType::kInt64, input.device());
  if (values.device().type == DeviceType::kMeta || values.numel() == 0) return {values, indices};
  const Tensor x = Contiguous(input);
  const Geom g = GeomOf(input.sizes(), d);
  CumExtremeLines(x, values, indices, g.outer, g.n, g.inner, kMax);
  return {values, indices};
}

}  // namespace

std::tuple<Tensor, Tensor> Cummax(const Tensor& input, int64_t dim) {
  OpScope scope("cummax");
  return CumExtreme<true>(input, dim);
}

std::tuple<Tensor, Tensor> Cummin(const Tensor& input, int64_t dim) {
  OpScope scope("cummin");
  return CumExtreme<false>(input, dim);
}

// zeros_like(grad).scatter_add(dim, indices, grad): each position gets the gradients of the
// outputs whose running extreme it was.
Tensor CummaxminBackward(const Tensor& grad, const Tensor& indices, int64_t dim) {
  OpScope scope("cummaxmin_backward");
  OF_CHECK(grad.sizes() == indices.sizes()) << "grad and indices must have the same shape, got "
                                            << ShapeStr(grad.sizes()) << " and " << ShapeStr(indices.sizes());
  OF_CHECK(indices.dtype() == DType::kInt64) << "indices must be int64, got " << DTypeName(indices.dtype());
  const int d = WrapDim(dim, grad.dim());
  Tensor out = Empty(grad.sizes(), grad.dtype(), grad.device());
  if (out.device().type == DeviceType::kMeta || out.numel() == 0) return out;
  const Tensor g = Contiguous(grad), idx = Contiguous(indices);
  const Geom geo = GeomOf(grad.sizes(), d);
  if (auto bad = FindOutOfRange(idx, 0, geo.n))
    OF_THROW(kRuntime) << "index " << *bad << " is out of bounds for dim " << d << " with size " << geo.n;
  CumExtremeBackwardLines(g, idx, out, geo.outer, geo.n, geo.inner);
  return out;
}

}  // namespace oneflow
