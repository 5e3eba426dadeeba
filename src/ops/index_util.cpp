// Helpers shared by the selection / scatter / sort ops (see index_util.h).
#include "ops/index_util.h"

#include <cmath>
#include <limits>

#include "ops/copy.h"
#include "decl/amax.h"
#include "decl/amin.h"
#include "decl/stack.h"

namespace oneflow {

namespace {
template <typename I>
std::optional<int64_t> FindOutOfRangeT(const I* p, int64_t n, int64_t lo, int64_t hi) {
  constexpr int64_t kBlock = 4096;
  const int64_t blocks = (n + kBlock - 1) / kBlock;
  int64_t bad_block = blocks;
  // Per block: a branch-free min/max (vectorised); the first block out of range is searched.
  ParallelFor(0, blocks, 16, [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k) {
      const int64_t s = k * kBlock, t = std::min(n, s + kBlock);
      I mn = p[s], mx = p[s];
      for (int64_t i = s; i < t; ++i) {
        mn = p[i] < mn ? p[i] : mn;
        mx = p[i] > mx ? p[i] : mx;
      }
      if (mn < lo || mx >= hi) {
#pragma omp critical(of_find_out_of_range)
        bad_block = std::min(bad_block, k);
        return;
      }
    }
  });
  if (bad_block == blocks) return std::nullopt;
  for (int64_t i = bad_block * kBlock; i < n; ++i)
    if (p[i] < lo || p[i] >= hi) return static_cast<int64_t>(p[i]);
  return std::nullopt;
}
}  // namespace

std::pair<int64_t, int64_t> IndexExtremes(const Tensor& idx) {
  OF_ASSERT(idx.numel() > 0 && idx.is_contiguous()) << "IndexExtremes needs a non-empty contiguous index";
  if (idx.device().type == DeviceType::kCUDA) {  // reduced on the device, two numbers back (one sync)
    const Tensor ends = OnHost(Stack({Amin(idx, std::nullopt, false), Amax(idx, std::nullopt, false)}, 0));
    const Tensor e64 = CastTo(ends, DType::kInt64);
    return {e64.data<int64_t>()[0], e64.data<int64_t>()[1]};
  }
  return DispatchIndex(idx.dtype(), [&](auto tag) {
    using I = typename std::decay_t<decltype(tag)>::type;
    const I* p = idx.data<I>();
    I mn = p[0], mx = p[0];
    for (int64_t i = 1; i < idx.numel(); ++i) {
      mn = p[i] < mn ? p[i] : mn;
      mx = p[i] > mx ? p[i] : mx;
    }
    return std::pair<int64_t, int64_t>{static_cast<int64_t>(mn), static_cast<int64_t>(mx)};
  });
}

std::optional<int64_t> FindOutOfRange(const Tensor& idx, int64_t lo, int64_t hi) {
  OF_ASSERT(idx.is_contiguous()) << "index must be contiguous";
  if (idx.numel() == 0) return std::nullopt;
  if (idx.device().type == DeviceType::kCUDA) {
    // The extremes on the device (a host copy of the whole index made max pooling's backward 25x
    // slower than the kernels it guards: hundreds of MB of indices). Only an index out of range
    // comes to the host, to name the first bad value.
    const auto [mn, mx] = IndexExtremes(idx);
    if (mn >= lo && mx < hi) return std::nullopt;
  }
  const Tensor h = OnHost(idx);  // the error path of CUDA indices: the first bad value, on the host
  return DispatchIndex(h.dtype(), [&](auto tag) {
    using I = typename std::decay_t<decltype(tag)>::type;
    return FindOutOfRangeT<I>(h.data<I>(), h.numel(), lo, hi);
  });
}

void CheckFillRange(const Scalar& v, DType dtype) {
  // A complex number fits a real type only with no imaginary part (PyTorch's checked conversion;
  // the real part was kept).
  OF_CHECK(!v.is_complex() || IsComplex(dtype) || v.ToComplex().imag() == 0)
      << "value cannot be converted to type " << DTypeName(dtype) << " without overflow";
  if (v.is_bool() || dtype == DType::kBool || dtype == DType::kFloat64) return;
  if (dtype == DType::kInt64 && !v.is_float()) return;
  // PyTorch's checked conversion: numbers must fit the target's range (negative integers may
  // wrap into uint8); infinities and nan pass into floating types only.
  double lo = 0, hi = 0;
  switch (dtype) {
    case DType::kInt8: lo = -128; hi = 127; break;
    case DType::kUInt8: lo = -255; hi = 255; break;
    case DType::kInt16: lo = -32768; hi = 32767; break;
    case DType::kInt32: lo = -2147483648.0; hi = 2147483647.0; break;
    case DType::kInt64: lo = -9.223372036854775808e18; hi = 9.223372036854775807e18; break;
    case DType::kFloat16: lo = -65504.0; hi = 65504.0; break;
    case DType::kBFloat16: lo = -3.3895313892515355e38; hi = 3.3895313892515355e38; break;
    default: lo = -3.4028234663852886e38; hi = 3.4028234663852886e38; break;
  }
  // A float into an unsigned type may not be negative (only integers wrap).
  if (dtype == DType::kUInt8 && v.is_float()) lo = 0;
  const double x = v.ToDouble();
  const bool fits = (IsFloating(dtype) && !std::isfinite(x)) || (x >= lo && x <= hi);
  OF_CHECK(fits) << "value cannot be converted to type " << DTypeName(dtype) << " without overflow";
}

Scalar FillValue(const Tensor& value, DType dtype, const char* op) {
  OF_CHECK(value.dim() == 0) << op << " only supports a 0-dimensional value tensor, but got tensor with "
                             << value.dim() << " dimension(s).";
  if (value.device().type == DeviceType::kMeta) return Scalar(int64_t(0));  // meta inference: shapes only
  Scalar v = ItemOf(value);
  CheckFillRange(v, dtype);
  return v;
}

}  // namespace oneflow
