// Normalisation entries (src/ops/table/normalization.yaml): PyTorch's checks, then the fused kernels of
// kernels/normalization.h. float16/bfloat16 inputs compute in float32 (parameters may then be float32,
// PyTorch's "mixed dtype" rule) and their statistics outputs stay float32.
#include <cmath>

#include "kernels/normalization.h"
#include "ops/copy.h"
#include "decl/add.h"
#include "decl/batch_norm.h"
#include "decl/batch_norm_backward.h"
#include "decl/contiguous.h"
#include "decl/empty.h"
#include "decl/group_norm.h"
#include "decl/group_norm_backward.h"
#include "decl/layer_norm.h"
#include "decl/layer_norm_backward.h"
#include "decl/mul.h"
#include "decl/rsqrt.h"

namespace oneflow {

namespace {

DType ComputeDType(DType dt) {
  return dt == DType::kFloat16 || dt == DType::kBFloat16 ? DType::kFloat32 : dt;
}

Tensor Prepared(const Tensor& t, DType cd) {
  if (!t.defined()) return t;
  return Contiguous(CastTo(t, cd));
}

void CheckFloat(const Tensor& input, const char* kernel) {
  OF_CHECK(IsFloating(input.dtype())) << "\"" << kernel << "\" not implemented for '" << DTypeName(input.dtype())
                                      << "'";
}

// A parameter (weight, bias, running statistic) has the input's dtype, or float32 for a half input.
void CheckParam(const Tensor& p, const Tensor& input) {
  if (!p.defined()) return;
  CheckSameDevice(p, input);
  const DType cd = ComputeDType(input.dtype());
  OF_CHECK(p.dtype() == input.dtype() || p.dtype() == cd)
      << "mixed dtype (CPU): expect parameter to have scalar type of " << DTypeName(cd);
}

// out (of `like`'s dtype and shape) from a kernel writing a contiguous compute-dtype tensor.
template <typename F>
Tensor Computed(const Tensor& like, DType cd, F&& run) {
  Tensor out = Empty(like.sizes(), like.dtype(), like.device());
  if (like.device().type == DeviceType::kMeta || out.numel() == 0) return out;
  Tensor work = cd == like.dtype() ? out : Empty(like.sizes(), cd, like.device());
  run(work);
  if (!work.is_same(out)) CopyInto(out, work);
  return out;
}

// One of a backward's outputs: the gradient of `like` in its dtype, or undefined when unwanted.
Tensor GradFor(const Tensor& like, bool wanted, DType cd) {
  if (!wanted || !like.defined()) return Tensor();
  return Empty(like.sizes(), cd, like.device());
}
// A gradient in the dtype of the tensor it is for (the compute dtype when that is unknown).
Tensor Finished(const Tensor& grad, const Tensor& like) {
  if (!grad.defined() || !like.defined() || grad.dtype() == like.dtype()) return grad;
  return CastTo(grad, like.dtype());
}

// running = (1 - momentum) * running + momentum * batch, in place (a buffer, no autograd). On
// the CPU in double; CUDA buffers on the device in their own dtype (as PyTorch's CUDA kernel, a
// few ulps from the CPU's rounding), with no host round trip.
void UpdateRunning(const Tensor& running, const Tensor& batch, double momentum) {
  if (!running.defined()) return;
  if (running.device().type == DeviceType::kCUDA) {
    const DType dt = running.dtype();
    CopyInto(running, Add(Mul(running, ScalarToTensor(Scalar(1 - momentum), dt)), CastTo(batch, dt), Scalar(momentum)));
    running.BumpVersion();
    return;
  }
  Tensor r = Contiguous(CastTo(OnHost(running), batch.dtype()));
  const Tensor b = OnHost(batch);
  Tensor upd = Empty(r.sizes(), batch.dtype());
  DispatchFloat(batch.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      const T* rp = r.data<T>();
      const T* bp = b.data<T>();
      T* up = upd.data<T>();
      for (int64_t i = 0; i < r.numel(); ++i) up[i] = static_cast<T>((1 - momentum) * rp[i] + momentum * bp[i]);
    }
  });
  CopyInto(running, upd);
  running.BumpVersion();
}

// Batch norm views its input as [n, c, s].
struct NCS {
  int64_t n, c, s;
};
NCS ViewNCS(const Tensor& x) {
  NCS v{x.sizes()[0], x.sizes()[1], 1};
  for (int d = 2; d < x.dim(); ++d) v.s *= x.sizes()[d];
  return v;
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> BatchNorm(const Tensor& input, const Tensor& running_mean,
                                             const Tensor& running_var, const Tensor& weight, const Tensor& bias,
                                             bool training, double momentum, double eps) {
  OpScope scope("batch_norm");
  CheckFloat(input, "batch_norm");
  OF_CHECK(input.dim() >= 2) << "Expected at least 2 dims for input tensor (N, C, ...), but got input of size "
                             << ShapeStr(input.sizes());
  const int64_t c = input.sizes()[1];
  for (auto [t, name] : {std::pair{running_mean, "running_mean"}, {running_var, "running_var"}, {weight, "weight"},
                         {bias, "bias"}}) {
    if (!t.defined()) continue;
    OF_CHECK(t.numel() == c) << name << " should contain " << c << " elements not " << t.numel();
    CheckParam(t, input);
  }
  if (!training) {
    OF_CHECK(running_mean.defined()) << "running_mean must be defined in evaluation mode";
    OF_CHECK(running_var.defined()) << "running_var must be defined in evaluation mode";
  }
  const DType cd = ComputeDType(input.dtype());
  Tensor mean = Empty(DimVector{c}, cd, input.device()), invstd = Empty(DimVector{c}, cd, input.device());
  if (input.device().type == DeviceType::kMeta) return {Empty(input.sizes(), input.dtype(), input.device()), mean, invstd};
  const Tensor x = Prepared(input, cd);
  const NCS v = ViewNCS(x);
  if (training) {
    Tensor var = running_var.defined() ? Empty(DimVector{c}, cd, input.device()) : Tensor();
    BatchNormStats(x, v.n, v.c, v.s, eps, mean, invstd, var);
    if (v.n * v.s > 0) {  // PyTorch leaves the running statistics alone for an empty batch
      UpdateRunning(running_mean, mean, momentum);
      UpdateRunning(running_var, var, momentum);
    }
  } else {
    CopyInto(mean, running_mean);
    if (input.device().type == DeviceType::kCUDA) {
      CopyInto(invstd, Rsqrt(Add(Prepared(running_var, cd), ScalarToTensor(Scalar(eps), cd), Scalar(1))));
    } else {
      const Tensor rv = OnHost(Prepared(running_var, cd));  // c values: computed on the host
      const Tensor is = Empty(DimVector{c}, cd);
      DispatchFloat(cd, [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>)
          for (int64_t i = 0; i < c; ++i) is.data<T>()[i] = static_cast<T>(1.0 / std::sqrt(rv.data<T>()[i] + eps));
      });
      CopyInto(invstd, is);
    }
  }
  Tensor out = Computed(input, cd, [&](const Tensor& y) {
    BatchNormApply(x, v.n, v.c, v.s, mean, invstd, Prepared(weight, cd), Prepared(bias, cd), y);
  });
  return {out, mean, invstd};
}

std::tuple<Tensor, Tensor, Tensor> BatchNormBackward(const Tensor& grad_output, const Tensor& input,
                                                     const Tensor& weight, const Tensor& save_mean,
                                                     const Tensor& save_invstd, bool training, bool input_grad,
                                                     bool weight_grad, bool bias_grad) {
  OpScope scope("batch_norm_backward");
  CheckFloat(input, "batch_norm_backward");
  OF_CHECK(input.dim() >= 2 && grad_output.sizes() == input.sizes())
      << "grad_output of size " << ShapeStr(grad_output.sizes()) << " does not match input "
      << ShapeStr(input.sizes());
  const DType cd = ComputeDType(input.dtype());
  const int64_t c = input.sizes()[1];
  OF_CHECK(save_mean.numel() == c && save_invstd.numel() == c)
      << "save_mean and save_invstd should contain " << c << " elements";
  CheckParam(weight, input);
  Tensor dx = GradFor(input, input_grad, cd), dw = GradFor(weight, weight_grad, cd);
  Tensor db = bias_grad ? Empty(DimVector{c}, cd, input.device()) : Tensor();
  if (input.device().type != DeviceType::kMeta) {
    const Tensor x = Prepared(input, cd);
    const NCS v = ViewNCS(x);
    BatchNormBackward(Prepared(grad_output, cd), x, v.n, v.c, v.s, Prepared(save_mean, cd),
                      Prepared(save_invstd, cd), Prepared(weight, cd), training, dx, dw, db);
  }
  return {Finished(dx, input), Finished(dw, weight), Finished(db, weight)};
}

namespace {

// layer_norm's split of the input into [rows, cols]: cols = prod(normalized_shape).
int64_t LayerNormCols(const Tensor& input, const DimVector& normalized_shape) {
  const int k = normalized_shape.size();
  OF_CHECK(k >= 1) << "Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one "
                      "element, but got normalized_shape = " << ShapeStr(normalized_shape);
  bool ok = input.dim() >= k;
  for (int d = 0; ok && d < k; ++d) ok = input.sizes()[input.dim() - k + d] == normalized_shape[d];
  if (!ok) {
    // Note [Upstream's words] (src/autograd/meta.cpp): upstream prints the Python tuple and oneflow.Size.
    std::string tuple;
    for (int64_t s : normalized_shape) tuple += (tuple.empty() ? "" : " ") + std::to_string(s) + ",";
    if (k > 1) tuple.pop_back();
    OF_THROW(kRuntime) << "Given normalized_shape=" << ShapeStr(normalized_shape) << ", expected input with shape [*, "
                       << ShapeStr(normalized_shape).substr(1) << ", but got input of size" << ShapeStr(input.sizes())
                       << " [OneFlow: Given normalized_shape=(" << tuple << "), expected input with shape [*, " << tuple
                       << "], but got input of size oneflow.Size(" << ShapeStr(input.sizes()) << ")]";
  }
  int64_t cols = 1;
  for (int64_t s : normalized_shape) cols *= s;
  return cols;
}

void CheckAffineShape(const Tensor& p, const DimVector& normalized_shape, const char* name) {
  if (!p.defined()) return;
  OF_CHECK(p.sizes() == normalized_shape) << "Expected " << name << " to be of same shape as normalized_shape, but "
                                          << "got " << name << " of shape " << ShapeStr(p.sizes())
                                          << " and normalized_shape = " << ShapeStr(normalized_shape);
}

// The statistics' shape: the input's leading dims, then ones (PyTorch's mean/rstd layout).
DimVector StatShape(const Tensor& input, int k) {
  DimVector s(input.sizes().begin(), input.sizes().end() - k);
  for (int d = 0; d < k; ++d) s.push_back(1);
  return s;
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> LayerNorm(const Tensor& input, const DimVector& normalized_shape,
                                             const Tensor& weight, const Tensor& bias, double eps) {
  OpScope scope("layer_norm");
  const int64_t cols = LayerNormCols(input, normalized_shape);
  CheckAffineShape(weight, normalized_shape, "weight");
  CheckAffineShape(bias, normalized_shape, "bias");
  CheckFloat(input, "LayerNormKernelImpl");
  CheckParam(weight, input);
  CheckParam(bias, input);
  const DType cd = ComputeDType(input.dtype());
  const DimVector ss = StatShape(input, normalized_shape.size());
  Tensor mean = Empty(ss, cd, input.device()), rstd = Empty(ss, cd, input.device());
  const int64_t rows = cols == 0 ? 0 : input.numel() / cols;
  Tensor out = Computed(input, cd, [&](const Tensor& y) {
    LayerNormForward(Prepared(input, cd), rows, cols, eps, Prepared(weight, cd), Prepared(bias, cd), y, mean, rstd);
  });
  return {out, mean, rstd};
}

std::tuple<Tensor, Tensor, Tensor> LayerNormBackward(const Tensor& grad_output, const Tensor& input,
                                                     const DimVector& normalized_shape, const Tensor& mean,
                                                     const Tensor& rstd, const Tensor& weight, bool input_grad,
                                                     bool weight_grad, bool bias_grad) {
  OpScope scope("layer_norm_backward");
  const int64_t cols = LayerNormCols(input, normalized_shape);
  CheckFloat(input, "layer_norm_backward");
  OF_CHECK(grad_output.sizes() == input.sizes()) << "grad_output of size " << ShapeStr(grad_output.sizes())
                                                 << " does not match input " << ShapeStr(input.sizes());
  CheckAffineShape(weight, normalized_shape, "weight");
  const DType cd = ComputeDType(input.dtype());
  const int64_t rows = cols == 0 ? 0 : input.numel() / cols;
  OF_CHECK(mean.numel() == rows && rstd.numel() == rows) << "mean and rstd should contain " << rows << " elements";
  Tensor dx = GradFor(input, input_grad, cd);
  Tensor dw = GradFor(weight, weight_grad, cd);
  Tensor db = bias_grad ? Empty(normalized_shape, cd, input.device()) : Tensor();
  if (input.device().type != DeviceType::kMeta)
    LayerNormBackward(Prepared(grad_output, cd), Prepared(input, cd), rows, cols, Prepared(mean, cd),
                      Prepared(rstd, cd), Prepared(weight, cd), dx, dw, db);
  return {Finished(dx, input), Finished(dw, weight), Finished(db, weight)};
}

namespace {

void CheckGroupNorm(const Tensor& input, int64_t num_groups, const Tensor& weight, const Tensor& bias) {
  OF_CHECK(input.dim() >= 2) << "Expected at least 2 dimensions for input tensor but received " << input.dim();
  const int64_t c = input.sizes()[1];
  OF_CHECK_VALUE(num_groups > 0) << "num_groups must be positive, got " << num_groups;
  OF_CHECK(c % num_groups == 0) << "Expected number of channels in input to be divisible by num_groups, but got "
                                   "input of shape " << ShapeStr(input.sizes()) << " and num_groups="
                                << num_groups;
  for (auto [p, name] : {std::pair{weight, "weight"}, {bias, "bias"}}) {
    if (!p.defined()) continue;
    OF_CHECK(p.dim() == 1 && p.numel() == c)
        << "Expected " << name << " to be a vector of size equal to the number of channels in input, but got "
        << name << " of shape " << ShapeStr(p.sizes()) << " and input of shape " << ShapeStr(input.sizes());
    CheckParam(p, input);
  }
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> GroupNorm(const Tensor& input, int64_t num_groups, const Tensor& weight,
                                             const Tensor& bias, double eps) {
  OpScope scope("group_norm");
  CheckGroupNorm(input, num_groups, weight, bias);
  CheckFloat(input, "group_norm");
  const DType cd = ComputeDType(input.dtype());
  const NCS v = ViewNCS(input);
  Tensor mean = Empty(DimVector{v.n, num_groups}, cd, input.device());
  Tensor rstd = Empty(DimVector{v.n, num_groups}, cd, input.device());
  Tensor out = Computed(input, cd, [&](const Tensor& y) {
    GroupNormForward(Prepared(input, cd), v.n, v.c, v.s, num_groups, eps, Prepared(weight, cd), Prepared(bias, cd),
                     y, mean, rstd);
  });
  return {out, mean, rstd};
}

std::tuple<Tensor, Tensor, Tensor> GroupNormBackward(const Tensor& grad_output, const Tensor& input,
                                                     int64_t num_groups, const Tensor& mean, const Tensor& rstd,
                                                     const Tensor& weight, bool input_grad, bool weight_grad,
                                                     bool bias_grad) {
  OpScope scope("group_norm_backward");
  CheckGroupNorm(input, num_groups, weight, Tensor());
  CheckFloat(input, "group_norm_backward");
  OF_CHECK(grad_output.sizes() == input.sizes()) << "grad_output of size " << ShapeStr(grad_output.sizes())
                                                 << " does not match input " << ShapeStr(input.sizes());
  const NCS v = ViewNCS(input);
  OF_CHECK(mean.numel() == v.n * num_groups && rstd.numel() == v.n * num_groups)
      << "mean and rstd should contain " << v.n * num_groups << " elements";
  const DType cd = ComputeDType(input.dtype());
  Tensor dx = GradFor(input, input_grad, cd), dw = GradFor(weight, weight_grad, cd);
  Tensor db = bias_grad ? Empty(DimVector{v.c}, cd, input.device()) : Tensor();
  if (input.device().type != DeviceType::kMeta)
    GroupNormBackward(Prepared(grad_output, cd), Prepared(input, cd), v.n, v.c, v.s, num_groups, Prepared(mean, cd),
                      Prepared(rstd, cd), Prepared(weight, cd), dx, dw, db);
  return {Finished(dx, input), Finished(dw, weight), Finished(db, weight)};
}

}  // namespace oneflow
