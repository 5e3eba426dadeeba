// fused_matmul_bias (src/ops/table/fused.yaml): alpha * x @ weight^T + bias + beta * add. The
// bias rows (plus beta * add) are written into the output once, then the GEMM accumulates into
// it (its beta = 1, kernels/gemm.h): the bias add costs no pass of its own over the product, as
// the composition's separate add does.
#include "core/parallel.h"
#include "kernels/gemm.h"
#include "ops/copy.h"
#include "decl/contiguous.h"
#include "decl/empty.h"
#include "decl/fused_matmul_bias.h"
#include "decl/reshape.h"
#include "decl/transpose.h"

namespace oneflow {

Tensor FusedMatmulBias(const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& _add_to_output,
                       double alpha, double beta) {
  OpScope scope("fused_matmul_bias");
  OF_CHECK(x.device().type == DeviceType::kCPU || x.device().type == DeviceType::kMeta)
      << "is implemented for CPU tensors only, got a tensor on " << x.device().str();
  OF_CHECK(IsFloating(x.dtype())) << "expected a floating point input, got " << DTypeName(x.dtype());
  OF_CHECK(x.dim() >= 1) << "expected an input with at least 1 dimension, got a 0-d tensor";
  OF_CHECK(weight.dim() == 2) << "expected a 2-D weight, got shape " << ShapeStr(weight.sizes());
  OF_CHECK(bias.dim() == 1) << "expected a 1-D bias, got shape " << ShapeStr(bias.sizes());
  const int64_t k = x.sizes()[x.dim() - 1], n = weight.sizes()[0];
  OF_CHECK(weight.sizes()[1] == k) << "the weight's second dim (" << weight.sizes()[1]
                                   << ") must equal the input's last dim (" << k << ")";
  OF_CHECK(bias.sizes()[0] == n) << "the bias's size (" << bias.sizes()[0] << ") must equal the weight's first dim ("
                                 << n << ")";
  for (const Tensor* t : {&weight, &bias}) {
    OF_CHECK(t->dtype() == x.dtype()) << "expected weight and bias of the input's dtype " << DTypeName(x.dtype())
                                      << ", got " << DTypeName(t->dtype());
    CheckSameDevice(x, *t);
  }
  DimVector out_sizes(x.sizes().data(), x.sizes().data() + x.dim() - 1);
  out_sizes.push_back(n);
  const bool add = _add_to_output.defined() && beta != 0.0;
  if (_add_to_output.defined()) {
    OF_CHECK(_add_to_output.sizes() == out_sizes) << "expected _add_to_output of the output's shape "
                                                  << ShapeStr(out_sizes) << ", got " << ShapeStr(_add_to_output.sizes());
    CheckSameDevice(x, _add_to_output);
  }
  Tensor out = Empty(out_sizes, x.dtype(), x.device());
  if (x.device().type == DeviceType::kMeta || out.numel() == 0) return out;
  const int64_t m = out.numel() / n;
  const Tensor bc = Contiguous(bias);
  const Tensor ac = add ? Contiguous(CastTo(_add_to_output, x.dtype())) : Tensor();
  DispatchFloat(x.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    using M = OpMath<T>;
    const T* b = bc.data<T>();
    const T* a = add ? ac.data<T>() : nullptr;
    T* o = out.data<T>();
    const M be = static_cast<M>(beta);
    ParallelFor(0, m, std::max<int64_t>(1, kGrainSize / n), [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        T* __restrict row = o + r * n;
        if (a) {
          const T* __restrict ar = a + r * n;
          for (int64_t j = 0; j < n; ++j) row[j] = static_cast<T>(static_cast<M>(b[j]) + be * static_cast<M>(ar[j]));
        } else {
          for (int64_t j = 0; j < n; ++j) row[j] = b[j];
        }
      }
    });
  });
  if (k == 0) return out;  // an empty product: the bias terms alone
  const Tensor x2 = Reshape(Contiguous(x), DimVector{m, k});
  Gemm(x2, Transpose(weight, 0, 1), Reshape(out, DimVector{m, n}), Scalar(alpha), Scalar(1.0));
  return out;
}

}  // namespace oneflow
