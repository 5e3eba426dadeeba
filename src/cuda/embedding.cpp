// CUDA kernels of embedding and one_hot (kernels/embedding.h), over the index kernels of
// cuda/index.h: the lookup gathers rows, the gradient adds rows atomically (any order), one_hot
// scatters on_value along the new last dim.
#include <limits>
#include <vector>

#include "cuda/index.h"
#include "decl/contiguous.h"
#include "decl/reshape.h"
#include "kernels/embedding.h"
#include "ops/copy.h"

namespace oneflow::cuda {

namespace {

void Rows(const Tensor& out, const Tensor& w, const Tensor& idx) {
  IndexRows(out, w, idx, 1, w.sizes()[0], w.sizes()[1]);
}

void RowsGrad(const Tensor& out, const Tensor& g, const Tensor& idx, int64_t pad, bool scale_grad_by_freq) {
  const int64_t num_weights = out.sizes()[0], dim = out.sizes()[1];
  Tensor scale;  // 1 / count per occurrence, counted on the host (one copy of the indices)
  if (scale_grad_by_freq) {
    const Tensor h = OnHost(idx);
    const int64_t* ip = h.data<int64_t>();
    std::vector<int64_t> freq(num_weights, 0);
    for (int64_t i = 0; i < h.numel(); ++i) ++freq[ip[i]];
    std::vector<double> s(h.numel());
    for (int64_t i = 0; i < h.numel(); ++i) s[i] = 1.0 / static_cast<double>(freq[ip[i]]);
    scale = VectorTensor(s, out.device());
  }
  FillWith(out, Scalar(0));
  IndexRowsAdd(out, g, idx, 1, num_weights, dim, 1.0, pad < 0 ? std::numeric_limits<int64_t>::min() : pad, scale);
}

void OneHot(const Tensor& out, const Tensor& classes, const Scalar& on_value) {
  DimVector ones = classes.sizes();
  ones.push_back(1);
  const Tensor one = MovedTo(ScalarToTensor(on_value, out.dtype()), out.device());
  const Tensor on = MakeView(one, ones, DimVector(ones.size(), 0), one.offset());  // on_value at every index
  ScatterDim(out, out.dim() - 1, Reshape(classes, ones), on, false);
}

}  // namespace

// Note [Kernel registry]: called once by cuda::RegisterKernels (cuda/registry.cpp).
void RegisterEmbeddingKernels() {
  kernels::RegisterKernel<kernels::EmbeddingRowsKernel>(DeviceType::kCUDA, &Rows);
  kernels::RegisterKernel<kernels::EmbeddingRowsGradKernel>(DeviceType::kCUDA, &RowsGrad);
  kernels::RegisterKernel<kernels::OneHotScatterKernel>(DeviceType::kCUDA, &OneHot);
}

}  // namespace oneflow::cuda
