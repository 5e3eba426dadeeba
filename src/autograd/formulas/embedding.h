// Backward helpers of the embedding family (src/ops/table/embedding.yaml).
#pragma once
#include "autograd/functional.h"

namespace oneflow::functional {

// embedding_backward is a scatter-add, linear in its gradient: its transpose gathers the rows of
// gg at the indices (zero at padding_idx). Like PyTorch, scale_grad_by_freq is not applied again.
Tensor EmbeddingDoubleBackward(const Tensor& gg, const Tensor& indices, int64_t padding_idx);

}  // namespace oneflow::functional
