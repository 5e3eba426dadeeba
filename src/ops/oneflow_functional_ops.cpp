// OneFlow's functional API where PyTorch has no counterpart (`backward: composite` in
// src/ops/table/oneflow_functional.yaml): upstream's names and signatures, composed of
// differentiable table ops, so their gradients (and higher-order ones) are those ops'.
#include "autograd/formulas.h"
#include "core/shape.h"
#include "decl/arg_sort.h"
#include "decl/argsort.h"
#include "decl/batch_gather.h"
#include "decl/bias_add.h"
#include "decl/cast.h"
#include "decl/clamp_min.h"
#include "decl/depend.h"
#include "decl/depend_all.h"
#include "decl/expand.h"
#include "decl/gather.h"
#include "decl/gather_axis.h"
#include "decl/index_select.h"
#include "decl/layer_norm.h"
#include "decl/layer_norm_affine.h"
#include "decl/linalg_vector_norm.h"
#include "decl/log.h"
#include "decl/log_softmax.h"
#include "decl/matmul.h"
#include "decl/matmul_transposed.h"
#include "decl/mean.h"
#include "decl/narrow.h"
#include "decl/normalize.h"
#include "decl/quick_gelu.h"
#include "decl/reduce_sum_like.h"
#include "decl/relu.h"
#include "decl/reshape.h"
#include "decl/reshape_like.h"
#include "decl/rms_layer_norm.h"
#include "decl/rsqrt.h"
#include "decl/sigmoid.h"
#include "decl/softmax_cross_entropy.h"
#include "decl/sparse_cross_entropy.h"
#include "decl/sparse_softmax_cross_entropy.h"
#include "decl/split_like.h"
#include "decl/square_relu.h"
#include "decl/squeeze.h"
#include "decl/sum.h"
#include "decl/transpose.h"
#include "decl/unsqueeze.h"

namespace oneflow::functional {

namespace {
DimVector DimsRange(const DimVector& v, int from, int to) {
  DimVector out;
  for (int i = from; i < to; ++i) out.push_back(v[i]);
  return out;
}
bool IsHalf(DType t) { return IsFloating(t) && ElementSize(t) < 4; }
// x / sqrt(mean(x^2 over the last k dims) + eps), computed in float32 for 16-bit x as upstream's
// kernels do; returned in the computing dtype.
Tensor RmsNormalize(const Tensor& x, int k, double eps) {
  Tensor xf = IsHalf(x.dtype()) ? functional::Cast(x, DType::kFloat32) : x;
  DimVector dims;
  for (int i = -k; i < 0; ++i) dims.push_back(i);
  Tensor ms = functional::Mean(xf * xf, dims, true, std::nullopt);
  return xf * functional::Rsqrt(ms + eps);
}
}  // namespace

Tensor GatherAxis(const Tensor& x, const Tensor& indices, int64_t axis) {
  OpScope scope("gather");
  OF_CHECK_INDEX(x.dim() > 0) << "expected an input of at least 1 dimension, got a 0-d tensor";
  int a = WrapDim(axis, x.dim());
  OF_CHECK_TYPE(!IsFloating(indices.dtype()) && indices.dtype() != DType::kBool && !IsComplex(indices.dtype()))
      << "indices must be an integer tensor, got " << DTypeName(indices.dtype());
  Tensor flat = functional::IndexSelect(x, a, functional::Reshape(indices, DimVector{-1}));
  DimVector shape = DimsRange(x.sizes(), 0, a);
  for (int64_t s : indices.sizes()) shape.push_back(s);
  for (int i = a + 1; i < x.dim(); ++i) shape.push_back(x.size(i));
  return functional::Reshape(flat, shape);
}

Tensor MatmulTransposed(const Tensor& input, const Tensor& other, bool transpose_a, bool transpose_b,
                        double alpha) {
  OpScope scope("matmul");
  OF_CHECK_VALUE(!transpose_a || input.dim() >= 2) << "transpose_a needs an input of at least 2 dimensions, got "
                                                    << input.dim();
  OF_CHECK_VALUE(!transpose_b || other.dim() >= 2) << "transpose_b needs an other of at least 2 dimensions, got "
                                                    << other.dim();
  Tensor a = transpose_a ? functional::Transpose(input, -2, -1) : input;
  Tensor b = transpose_b ? functional::Transpose(other, -2, -1) : other;
  Tensor r = functional::Matmul(a, b);
  return alpha == 1.0 ? r : r * alpha;
}

Tensor LayerNormAffine(const Tensor& x, const Tensor& gamma, const Tensor& beta, int64_t begin_norm_axis,
                       int64_t begin_params_axis, double epsilon) {
  OpScope scope("layer_norm");
  OF_CHECK_INDEX(x.dim() > 0) << "expected an input of at least 1 dimension, got a 0-d tensor";
  int bn = WrapDim(begin_norm_axis, x.dim()), bp = WrapDim(begin_params_axis, x.dim());
  DimVector normalized = DimsRange(x.sizes(), bn, x.dim()), params = DimsRange(x.sizes(), bp, x.dim());
  for (const Tensor* p : {&gamma, &beta})
    OF_CHECK_VALUE(!p->defined() || p->sizes() == params)
        << "gamma and beta must have the shape of x's dims from begin_params_axis " << bp << ", "
        << ShapeStr(params) << ", got " << ShapeStr(p->sizes());
  // Parameters over the normalized dims: the fused affine form of our layer_norm.
  if (bn == bp) return std::get<0>(functional::LayerNorm(x, normalized, gamma, beta, epsilon));
  Tensor y = std::get<0>(functional::LayerNorm(x, normalized, Tensor(), Tensor(), epsilon));
  if (gamma.defined()) y = y * gamma;
  if (beta.defined()) y = y + beta;
  return y;
}

Tensor RmsLayerNorm(const Tensor& hidden_states, const Tensor& weight, double variance_epsilon) {
  OpScope scope("rms_layer_norm");
  OF_CHECK_INDEX(hidden_states.dim() > 0) << "expected an input of at least 1 dimension, got a 0-d tensor";
  Tensor h = RmsNormalize(hidden_states, 1, variance_epsilon);
  // As T5 (and LiBai's RMSLayerNorm): a 16-bit weight takes the normalized states to its dtype.
  if (IsHalf(weight.dtype())) h = functional::Cast(h, weight.dtype());
  return weight * h;
}

Tensor QuickGelu(const Tensor& x) {
  OpScope scope("quick_gelu");
  return x * functional::Sigmoid(x * 1.702);
}

Tensor SoftmaxCrossEntropy(const Tensor& logits, const Tensor& label) {
  OpScope scope("softmax_cross_entropy");
  OF_CHECK_VALUE(logits.dim() > 0 && logits.sizes() == label.sizes())
      << "logits and label must have one shape of at least 1 dimension, got " << ShapeStr(logits.sizes())
      << " and " << ShapeStr(label.sizes());
  Tensor lp = functional::LogSoftmax(logits, -1, std::nullopt);
  return -functional::Sum(label * lp, DimVector{-1}, false, std::nullopt);
}

Tensor SparseSoftmaxCrossEntropy(const Tensor& logits, const Tensor& label) {
  OpScope scope("sparse_softmax_cross_entropy");
  OF_CHECK_VALUE(logits.dim() > 0 && label.sizes() == DimsRange(logits.sizes(), 0, logits.dim() - 1))
      << "label must have logits' shape without its last dim, got logits " << ShapeStr(logits.sizes())
      << " and label " << ShapeStr(label.sizes());
  OF_CHECK_TYPE(!IsFloating(label.dtype()) && label.dtype() != DType::kBool && !IsComplex(label.dtype()))
      << "label must be an integer tensor, got " << DTypeName(label.dtype());
  Tensor lp = functional::LogSoftmax(logits, -1, std::nullopt);
  Tensor idx = functional::Unsqueeze(functional::Cast(label, DType::kInt64), -1);
  return -functional::Squeeze(functional::Gather(lp, -1, idx, false), DimVector{-1});
}

Tensor BatchGather(const Tensor& input, const Tensor& indices) {
  OpScope scope("batch_gather");
  int axis = indices.dim() - 1;
  OF_CHECK_VALUE(indices.dim() > 0 && indices.dim() <= input.dim() &&
                 DimsRange(input.sizes(), 0, axis) == DimsRange(indices.sizes(), 0, axis))
      << "indices must be of at least 1 dimension, its leading (batch) dims those of input, got input "
      << ShapeStr(input.sizes()) << " and indices " << ShapeStr(indices.sizes());
  DimVector view = indices.sizes(), full = indices.sizes();
  for (int i = indices.dim(); i < input.dim(); ++i) {
    view.push_back(1);
    full.push_back(input.size(i));
  }
  Tensor idx = functional::Expand(functional::Reshape(functional::Cast(indices, DType::kInt64), view), full);
  return functional::Gather(input, axis, idx, false);
}

std::vector<Tensor> SplitLike(const Tensor& x, const std::vector<Tensor>& like, int64_t axis) {
  OpScope scope("split_like");
  OF_CHECK_INDEX(x.dim() > 0) << "expected an input of at least 1 dimension, got a 0-d tensor";
  int a = WrapDim(axis, x.dim());
  int64_t total = 0;
  for (const Tensor& l : like) {
    OF_CHECK_VALUE(l.dim() == x.dim()) << "every like tensor must have x's " << x.dim() << " dims, got "
                                       << l.dim();
    total += l.size(a);
  }
  OF_CHECK_VALUE(total == x.size(a)) << "the like tensors' sizes along axis " << a << " sum to " << total
                                     << ", x has " << x.size(a);
  std::vector<Tensor> out;
  int64_t start = 0;
  for (const Tensor& l : like) {
    out.push_back(functional::Narrow(x, a, start, l.size(a)));
    start += l.size(a);
  }
  return out;
}

Tensor Depend(const Tensor& input, const Tensor& depend) {
  (void)depend;  // eager ops run in program order: the dependency already holds
  return input;
}

Tensor DependAll(const Tensor& input, const std::vector<Tensor>& depends) {
  (void)depends;
  return input;
}

Tensor BiasAdd(const Tensor& x, const Tensor& bias, int64_t axis) {
  OpScope scope("bias_add");
  OF_CHECK_INDEX(x.dim() > 0) << "expected an input of at least 1 dimension, got a 0-d tensor";
  int a = WrapDim(axis, x.dim());
  OF_CHECK_VALUE(bias.dim() == 1 && bias.size(0) == x.size(a))
      << "bias must be 1-d with x's size " << x.size(a) << " along axis " << a << ", got shape "
      << ShapeStr(bias.sizes());
  DimVector view(x.dim(), 1);
  view[a] = bias.size(0);
  return x + functional::Reshape(bias, view);
}

Tensor ReduceSumLike(const Tensor& x, const Tensor& like, const DimVector& axis) {
  OpScope scope("reduce_sum_like");
  Tensor r = axis.size() == 0 ? x : functional::Sum(x, axis, false, std::nullopt);
  OF_CHECK_VALUE(r.numel() == like.numel()) << "the sum of x " << ShapeStr(x.sizes()) << " over axis "
                                            << ShapeStr(axis) << " has " << r.numel() << " elements, like "
                                            << ShapeStr(like.sizes()) << " has " << like.numel();
  return functional::Reshape(r, like.sizes());
}

Tensor SquareRelu(const Tensor& x) {
  OpScope scope("square_relu");
  Tensor r = functional::Relu(x);
  return r * r;
}

Tensor ReshapeLike(const Tensor& input, const Tensor& like) {
  OpScope scope("reshape_like");
  return functional::Reshape(input, like.sizes());
}

Tensor ArgSort(const Tensor& input, const std::string& direction) {
  OpScope scope("arg_sort");
  OF_CHECK_VALUE(direction == "ASCENDING" || direction == "DESCENDING")
      << "direction must be 'ASCENDING' or 'DESCENDING', got '" << direction << "'";
  return functional::Cast(functional::Argsort(input, -1, direction == "DESCENDING", false), DType::kInt32);
}

Tensor SparseCrossEntropy(const Tensor& prediction, const Tensor& label, int64_t depth) {
  OpScope scope("sparse_cross_entropy");
  OF_CHECK_VALUE(prediction.dim() > 0 && prediction.size(-1) == depth &&
                 label.sizes() == DimsRange(prediction.sizes(), 0, prediction.dim() - 1))
      << "prediction must have depth " << depth << " as its last dim and label its other dims, got prediction "
      << ShapeStr(prediction.sizes()) << " and label " << ShapeStr(label.sizes());
  Tensor idx = functional::Unsqueeze(functional::Cast(label, DType::kInt64), -1);
  return -functional::Squeeze(functional::Log(functional::Gather(prediction, -1, idx, false)), DimVector{-1});
}

Tensor Normalize(const Tensor& input, double p, int64_t dim, double eps, bool use_l2_norm_kernel) {
  OpScope scope("normalize");
  (void)use_l2_norm_kernel;  // upstream's choice of kernel; the values are the same
  Tensor n = functional::LinalgVectorNorm(input, Scalar(p), DimVector{dim}, true, std::nullopt);
  return input / functional::ClampMin(n, S(eps));
}

}  // namespace oneflow::functional
