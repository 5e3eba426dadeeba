#include "autograd/formulas.h"
#include "decl/embedding.h"
#include "decl/ne.h"
#include "decl/unsqueeze.h"

namespace oneflow::functional {

Tensor EmbeddingDoubleBackward(const Tensor& gg, const Tensor& indices, int64_t padding_idx) {
  Tensor rows = functional::Embedding(gg, indices, -1, false, false);
  if (padding_idx < 0) return rows;
  return Masked(rows, functional::Unsqueeze(functional::Ne(indices, WrappedNumber(Scalar(padding_idx))), -1));
}

}  // namespace oneflow::functional
