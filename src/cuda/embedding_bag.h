// embedding_bag's CUDA kernels (cuda/embedding_bag.cu, registered there for kernels/embedding_bag.h,
// which uploads the host bags of ops/embedding_bag_ops.cpp as these tables once per call).
#pragma once
#include "core/tensor.h"

namespace oneflow::cuda {

// Device tables of one call: int64 idx [n] (the flat indices), start [count + 1] (bag b covers
// idx[start[b] .. start[b + 1])), bag_of [n] (-1 past the last bag); float64 scale [n] (per-sample
// weights, 1 without), inv [count] (1 / bag size for 'mean', else 1; 0 for an empty mean bag),
// gscale [n] (the gradient factor of each entry: weight / frequency / bag size). The forward
// gets idx, start, scale and inv; the gradients idx, start, bag_of and gscale.
struct BagTables {
  Tensor idx, start, bag_of, scale, inv, gscale;
  int64_t pad = -1, count = 0, dim = 0;
};

// out [count, dim] in w's dtype; w contiguous.
void EmbeddingBagForward(const Tensor& w, const BagTables& b, bool max, const Tensor& out);
// acc (float64 [rows, dim], zeroed) += the weight gradient of g (float64 [count, dim], contiguous).
void EmbeddingBagBackward(const Tensor& g, const Tensor& w, const BagTables& b, bool max, const Tensor& acc);
// out (float64 [n]) = the per-sample-weight gradient; g and w float64, contiguous.
void EmbeddingBagSampleGrad(const Tensor& g, const Tensor& w, const BagTables& b, const Tensor& out);

}  // namespace oneflow::cuda
