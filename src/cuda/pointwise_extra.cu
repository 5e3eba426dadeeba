// CUDA slots (Note [CUDA pointwise kernels]) of the pointwise bodies that hand-written entries
// call through a template parameter, which the generator's scan of src/ops/*.cpp can't see:
// the pair losses of loss_pointwise_ops.cpp (PairLoss<F>).
#include "cuda/pointwise.cuh"
#include "kernels/functors/loss.h"

namespace oneflow::cuda {

void RegisterPointwiseExtra() {
  RegisterPointwise<MseLossFunctor, ResultKind::kSame, DTypeSet::kFloat, 2>();
  RegisterPointwise<L1LossFunctor, ResultKind::kSame, DTypeSet::kFloat, 2>();
  RegisterPointwise<SmoothL1LossFunctor, ResultKind::kSame, DTypeSet::kFloat, 2>();
  RegisterPointwise<HuberLossFunctor, ResultKind::kSame, DTypeSet::kFloat, 2>();
  RegisterPointwise<SoftMarginLossFunctor, ResultKind::kSame, DTypeSet::kFloat, 2>();
}

}  // namespace oneflow::cuda
