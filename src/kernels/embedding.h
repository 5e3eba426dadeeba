// embedding's row kernels and one_hot's scatter (ops/embedding_ops.cpp checks shapes and index
// ranges first, on the indices' device): CPU in kernels/embedding.cpp, CUDA in cuda/embedding.cpp
// over the index kernels of cuda/index.h (Note [Kernel registry]).
#pragma once
#include <cstdint>

#include "core/scalar.h"
#include "core/tensor.h"
#include "kernels/registry.h"

namespace oneflow {

// out [n, dim] = rows idx[0..n) of w [rows, dim]; w and out contiguous, idx contiguous int64 in
// range, on out's device.
void EmbeddingRows(const Tensor& out, const Tensor& w, const Tensor& idx);
// out [rows, dim] (contiguous) = the row sums of g [n, dim] (contiguous) by idx, rows equal to
// `pad` (-1: none) left zero; scale_grad_by_freq: each contribution over its row's count.
void EmbeddingRowsGrad(const Tensor& out, const Tensor& g, const Tensor& idx, int64_t pad, bool scale_grad_by_freq);
// out [..., C] (contiguous, filled with the off value) gets on_value at each class of `classes`
// (contiguous int64 in [0, C), out's shape without its last dim).
void OneHotScatter(const Tensor& out, const Tensor& classes, const Scalar& on_value);

namespace kernels {
struct EmbeddingRowsKernel {
  static constexpr const char* kName = "embedding_rows";
  using Fn = void (*)(const Tensor& out, const Tensor& w, const Tensor& idx);
  using Writes = KernelWrites<0>;
};
struct EmbeddingRowsGradKernel {
  static constexpr const char* kName = "embedding_rows_grad";
  using Fn = void (*)(const Tensor& out, const Tensor& g, const Tensor& idx, int64_t pad, bool scale_grad_by_freq);
  using Writes = KernelWrites<0>;
};
struct OneHotScatterKernel {
  static constexpr const char* kName = "one_hot_scatter";
  using Fn = void (*)(const Tensor& out, const Tensor& classes, const Scalar& on_value);
  using Writes = KernelWrites<0>;
};
}  // namespace kernels

}  // namespace oneflow
