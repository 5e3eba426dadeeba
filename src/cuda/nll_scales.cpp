// CUDA kernel of the nll_loss / cross_entropy gradient scales (kernels/nll.h) by table ops on the
// device: the incoming gradient is never read on the host; the mask of kept positions comes from
// the host targets (one small upload).
#include <algorithm>

#include "decl/div.h"
#include "decl/empty.h"
#include "decl/reshape.h"
#include "decl/where.h"
#include "kernels/nll.h"
#include "ops/copy.h"

namespace oneflow::cuda {

namespace {

void GradScalesCuda(const Tensor& g, const Tensor& t, int64_t ignore_index, bool per_position, double divisor,
                    const Tensor& s) {
  const int64_t positions = s.numel();
  Tensor v = Reshape(g, DimVector{per_position ? positions : 1});
  if (divisor != 1.0) v = Div(v, ScalarToTensor(Scalar(divisor), DType::kFloat64), std::nullopt);
  Tensor keep = Empty(DimVector{positions}, DType::kBool);
  bool* kp = keep.data<bool>();
  if (t.defined()) {
    const int64_t* tp = t.data<int64_t>();
    for (int64_t i = 0; i < positions; ++i) kp[i] = tp[i] != ignore_index;
  } else {
    std::fill(kp, kp + positions, true);
  }
  CopyInto(s, Where(MovedTo(keep, s.device()), v, ScalarToTensor(Scalar(0.0), DType::kFloat64)));
}

}  // namespace

// Note [Kernel registry]: called once by cuda::RegisterKernels (cuda/registry.cpp).
void RegisterNllScalesKernels() {
  kernels::RegisterKernel<kernels::NllGradScalesKernel>(DeviceType::kCUDA, &GradScalesCuda);
}

}  // namespace oneflow::cuda
