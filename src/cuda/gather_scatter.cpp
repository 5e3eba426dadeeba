// CUDA kernels of the gathers and scatters along a dim (kernels/gather_scatter.h): cuda/index.h's
// kernels, which take int64 indices known to be in range, so each checks its indices first by
// their min / max on the device (ops/index_util.h, one sync).
#include "cuda/index.h"
#include "decl/empty.h"
#include "kernels/gather_scatter.h"
#include "ops/index_util.h"

namespace oneflow::cuda {

namespace {

// The index as contiguous int64, and its first value outside [0, size) if any.
std::pair<Tensor, std::optional<int64_t>> Checked(const Tensor& index, int64_t size) {
  Tensor idx = Contiguous(CastTo(index, DType::kInt64));
  return {idx, FindOutOfRange(idx, 0, size)};
}

std::optional<int64_t> GatherCuda(const Tensor& out, const Tensor& input, int dim, const Tensor& index) {
  auto [idx, bad] = Checked(index, SizeAt(input, dim));
  if (!bad) cuda::GatherDim(out, input, dim, idx);
  return bad;
}

std::optional<int64_t> IndexSelectCuda(const Tensor& out, const Tensor& x, const Tensor& index, int64_t outer,
                                       int64_t size, int64_t inner) {
  auto [idx, bad] = Checked(index, size);
  if (!bad) cuda::IndexRows(out, x, idx, outer, size, inner);
  return bad;
}

std::optional<int64_t> ScatterCuda(const Tensor& self, int dim, const Tensor& index, const Tensor& src, ScatterOp op) {
  auto [idx, bad] = Checked(index, SizeAt(self, dim));
  if (bad) return bad;  // nothing written
  // A value (a broadcast host scalar) is materialised on the device first.
  const Tensor s = src.device().type == DeviceType::kCUDA ? src : MovedTo(Contiguous(src), self.device());
  if (op == ScatterOp::kAssign || op == ScatterOp::kAdd) cuda::ScatterDim(self, dim, idx, s, op == ScatterOp::kAdd);
  else cuda::ScatterDimReduce(self, dim, idx, s, static_cast<int>(op));  // ScatterOp's order
  return std::nullopt;
}

}  // namespace

// Note [Kernel registry]: called once by cuda::RegisterKernels (cuda/registry.cpp).
void RegisterGatherScatterKernels() {
  kernels::RegisterKernel<kernels::GatherDimKernel>(DeviceType::kCUDA, &GatherCuda);
  kernels::RegisterKernel<kernels::IndexSelectRowsKernel>(DeviceType::kCUDA, &IndexSelectCuda);
  kernels::RegisterKernel<kernels::ScatterDimKernel>(DeviceType::kCUDA, &ScatterCuda);
}

}  // namespace oneflow::cuda
