// embedding_bag's kernels (ops/embedding_bag_ops.cpp checks the inputs and makes the bags on the
// host, where the indices are range-checked anyway): CPU in kernels/embedding_bag.cpp, CUDA in
// cuda/embedding_bag.cu, which uploads the tables (Note [Kernel registry]).
#pragma once
#include <cstdint>
#include <vector>

#include "core/tensor.h"
#include "kernels/registry.h"

namespace oneflow {

enum class BagMode { kSum, kMean, kMax };

// One call's bags: bag b covers idx[start[b] .. start[b + 1]) (start has count + 1 entries),
// entries equal to `pad` are skipped (and not counted by 'mean'); psw holds each entry's
// per-sample weight (1 without).
struct EmbeddingBags {
  BagMode mode = BagMode::kSum;
  int64_t rows = 0, dim = 0, count = 0;  // weight rows, embedding dim, number of bags
  int64_t pad = -1;
  std::vector<int64_t> idx, start;
  std::vector<double> psw;
};

// The entries of a bag that are not padding.
int64_t BagSize(const EmbeddingBags& b, int64_t bag);

// out [count, dim] (w's dtype) = each bag's sum / mean / max of w's rows; w contiguous. An empty
// bag gives zeros.
void EmbeddingBagForwardRows(const Tensor& w, const EmbeddingBags& b, const Tensor& out);
// acc (float64 [rows, dim]) = the weight gradient of g (float64 [count, dim], contiguous).
void EmbeddingBagWeightGrad(const Tensor& g, const Tensor& w, const EmbeddingBags& b, bool scale_grad_by_freq,
                            const Tensor& acc);
// acc (float64 [n]) = the per-sample-weight gradient (mode 'sum'); g and w float64, contiguous.
void EmbeddingBagSampleWeightGrad(const Tensor& g, const Tensor& w, const EmbeddingBags& b, const Tensor& acc);

namespace kernels {
struct EmbeddingBagForwardKernel {
  static constexpr const char* kName = "embedding_bag_forward";
  using Fn = void (*)(const Tensor& w, const EmbeddingBags& b, const Tensor& out);
  using Writes = KernelWrites<2>;
};
struct EmbeddingBagWeightGradKernel {
  static constexpr const char* kName = "embedding_bag_weight_grad";
  using Fn = void (*)(const Tensor& g, const Tensor& w, const EmbeddingBags& b, bool scale_grad_by_freq,
                      const Tensor& acc);
  using Writes = KernelWrites<4>;
};
struct EmbeddingBagSampleWeightGradKernel {
  static constexpr const char* kName = "embedding_bag_sample_weight_grad";
  using Fn = void (*)(const Tensor& g, const Tensor& w, const EmbeddingBags& b, const Tensor& acc);
  using Writes = KernelWrites<3>;
};
}  // namespace kernels

}  // namespace oneflow
