// ctc_loss's recursions (ops/loss_ctc_ops.cpp checks the inputs and makes the problem; the
// reductions run there as table ops): CPU in kernels/ctc.cpp, CUDA in cuda/ctc.cu
// (Note [Kernel registry]). Both work in log space and float64.
#pragma once
#include <cstdint>
#include <vector>

#include "core/tensor.h"
#include "kernels/registry.h"

namespace oneflow {

// One checked problem. lp and targets are read by the kernels of lp's device (targets stays a
// host tensor: the checks read it; the CUDA kernels upload it).
struct CtcProblem {
  int64_t T = 0, N = 0, C = 0;
  bool batched = true;
  Tensor lp;  // [T, N, C] float64, contiguous (its [T, C] form when not batched), on the op's device
  std::vector<int64_t> in_len, tgt_len, tgt_off;  // per batch element
  Tensor targets;  // int64, contiguous, host (2-d padded or 1-d concatenated)
  int64_t blank = 0;
};

// nll (float64 [N], lp's device) = each element's negative log-likelihood; zero_infinity: an
// infinite one becomes 0.
void CtcLossNll(const CtcProblem& p, bool zero_infinity, const Tensor& nll);
// grad (float64 [T, N, C], lp's device) = the gradient with respect to the logits under
// log_softmax, element b's scaled by scale[b] (float64 [N]: incoming gradient x the reduction's
// factor); zero_infinity: 0 for an element whose loss is infinite.
void CtcLossGrad(const CtcProblem& p, const Tensor& scale, bool zero_infinity, const Tensor& grad);

namespace kernels {
struct CtcNllKernel {
  static constexpr const char* kName = "ctc_loss_alpha";
  using Fn = void (*)(const CtcProblem& p, bool zero_infinity, const Tensor& nll);
  using Writes = KernelWrites<2>;
};
struct CtcGradKernel {
  static constexpr const char* kName = "ctc_loss_grad";
  using Fn = void (*)(const CtcProblem& p, const Tensor& scale, bool zero_infinity, const Tensor& grad);
  using Writes = KernelWrites<3>;
};
}  // namespace kernels

}  // namespace oneflow
