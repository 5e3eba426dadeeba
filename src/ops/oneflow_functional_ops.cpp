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
#include "decl/softmax_cross_entropy_grad.h"
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
// The checks of upstream's sparse_cross_entropy and sparse_softmax_cross_entropy: label has the
// prediction's shape without its last dim, and integers.
void CheckSparseLabel(const Tensor& prediction, const Tensor& label) {
  OF_CHECK(prediction.dim() >= 2) << "The dimension of prediction must be greater than or equal to 2, but found "
                                  << prediction.dim();
  OF_CHECK(label.dim() == prediction.dim() - 1)
      << "The dimension of label is expected to be less than that of prediction by 1, but found "
      << label.dim() << " and " << prediction.dim();
  for (int i = 0; i < label.dim(); ++i)
    OF_CHECK(prediction.size(i) == label.size(i))
        << "The size of prediction (" << prediction.size(i) << ") must match the size of label (" << label.size(i)
        << ") at dimension " << i;
  OF_CHECK_TYPE(!IsFloating(label.dtype()) && label.dtype() != DType::kBool && !IsComplex(label.dtype()))
      << "The dtype of label must be integer, but found " << DTypeName(label.dtype());
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
  // Note [Legacy ops' checks]: OneFlow-only ops (no PyTorch counterpart to take wording or
  // exception types from) check what upstream OneFlow's shape inference checks, in its words and
  // exception types (shape problems RuntimeError, dtype ones TypeError), with the op named first.
  OF_CHECK(logits.dim() >= 2) << "The dimension of prediction must be greater than or equal to 2, but found "
                              << logits.dim();
  OF_CHECK(label.sizes() == logits.sizes()) << "The size of label " << ShapeStr(label.sizes())
                                            << " must match the size of prediction " << ShapeStr(logits.sizes());
  OF_CHECK_TYPE(label.dtype() == logits.dtype())
      << "label and prediction are expected to have the same dtype, but found " << DTypeName(label.dtype())
      << " and " << DTypeName(logits.dtype());
  Tensor lp = functional::LogSoftmax(logits, -1, std::nullopt);
  return -functional::Sum(label * lp, DimVector{-1}, false, std::nullopt);
}

Tensor SoftmaxCrossEntropyGrad(const Tensor& dy, const Tensor& label, const Tensor& prob) {
  OpScope scope("softmax_cross_entropy_grad");
  // Note [Legacy ops' checks]
  OF_CHECK(prob.dim() >= 2) << "The dimension of prob must be greater than or equal to 2, but found " << prob.dim();
  OF_CHECK(dy.dim() == prob.dim() - 1) << "The dimension of dy is expected to be less than that of prob by 1, but found "
                                       << dy.dim() << " and " << prob.dim();
  for (int i = 0; i < dy.dim(); ++i)
    OF_CHECK(i < label.dim() && dy.size(i) == label.size(i))
        << "The size of dy (" << dy.size(i) << ") must match the size of label ("
        << (i < label.dim() ? label.size(i) : 0) << ") at dimension " << i;
  OF_CHECK(label.sizes() == prob.sizes()) << "The size of label " << ShapeStr(label.sizes())
                                          << " must match the size of prob " << ShapeStr(prob.sizes());
  OF_CHECK_TYPE(label.dtype() == prob.dtype()) << "label and prob are expected to have the same dtype, but found "
                                               << DTypeName(label.dtype()) << " and " << DTypeName(prob.dtype());
  OF_CHECK_TYPE(dy.dtype() == prob.dtype()) << "dy and prob are expected to have the same dtype, but found "
                                            << DTypeName(dy.dtype()) << " and " << DTypeName(prob.dtype());
  return (prob - label) * functional::Unsqueeze(dy, -1);
}

Tensor SparseSoftmaxCrossEntropy(const Tensor& logits, const Tensor& label) {
  OpScope scope("sparse_softmax_cross_entropy");
  CheckSparseLabel(logits, label);  // Note [Legacy ops' checks]
  Tensor lp = functional::LogSoftmax(logits, -1, std::nullopt);
  Tensor idx = functional::Unsqueeze(functional::Cast(label, DType::kInt64), -1);
  return -functional::Squeeze(functional::Gather(lp, -1, idx, false), DimVector{-1});
}

Tensor BatchGather(const Tensor& input, const Tensor& indices) {
  OpScope scope("batch_gather");
  // Note [Legacy ops' checks]
  OF_CHECK(input.dim() > 0) << "The dimension of the input tensor should be greater than zero, but got "
                            << input.dim();
  OF_CHECK(indices.dim() > 0) << "The dimension of the indices tensor should be greater than zero, but got "
                              << indices.dim();
  OF_CHECK(indices.dim() <= input.dim())
      << "The dimension of the input tensor should be greater than or equal to the dimension of the indices "
         "tensor, but found that the dimension of the input tensor is "
      << input.dim() << ", and the dimension of the indices tensor is " << indices.dim();
  OF_CHECK_TYPE(indices.dtype() == DType::kInt32 || indices.dtype() == DType::kInt64)
      << "The dtype of the indices tensor must be int32 or int64, but got " << DTypeName(indices.dtype());
  int axis = indices.dim() - 1;
  for (int i = 0; i < axis; ++i)
    OF_CHECK(indices.size(i) == input.size(i))
        << "The size of indices tensor must match the size of input tensor at dimension " << i << " (the batch dims "
        << "of indices " << ShapeStr(indices.sizes()) << " and input " << ShapeStr(input.sizes()) << ")";
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
  // Note [Legacy ops' checks]. A like tensor may have fewer dims than x (upstream's rule): it gives
  // the pieces' sizes over its dims, the pieces keep x's trailing dims.
  OF_CHECK_VALUE(!like.empty()) << "expected at least one like tensor";
  const int64_t like_dims = like[0].dim();
  OF_CHECK(like_dims <= x.dim()) << "The dimension of like (" << like_dims << ") should be less than or equal to input ("
                                 << x.dim() << ")";
  OF_CHECK(axis < like_dims && axis >= -like_dims)
      << "The axis (" << axis << ") should be less than the dimension of like (" << like_dims << ")";
  int a = WrapDim(axis, like_dims);
  int64_t total = 0;
  for (const Tensor& l : like) {
    OF_CHECK(l.dim() == like_dims) << "The dimension of like_i (" << l.dim()
                                   << ") must match the dimension of the first like (" << like_dims << ")";
    for (int j = 0; j < like_dims; ++j)
      OF_CHECK(j == a || x.size(j) == l.size(j)) << "The size of input (" << x.size(j)
                                                 << ") must match the size of like_i (" << l.size(j)
                                                 << ") at dimension " << j;
    total += l.size(a);
  }
  OF_CHECK(total == x.size(a)) << "In non-dynamic shape situation, the total size of like (" << total
                               << ") should be equal to the size of input (" << x.size(a) << ") at dimension " << a;
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
  // Note [Legacy ops' checks]
  OF_CHECK(bias.dim() == 1) << "Bias tensor has to be a one-dimensional vector, got shape " << ShapeStr(bias.sizes());
  OF_CHECK(bias.size(0) == x.size(a)) << "The size of tensor x " << ShapeStr(x.sizes())
                                      << " must match the size of tensor b " << ShapeStr(bias.sizes())
                                      << " at dimension " << a;
  DimVector view(x.dim(), 1);
  view[a] = bias.size(0);
  return x + functional::Reshape(bias, view);
}

Tensor ReduceSumLike(const Tensor& x, const Tensor& like, const DimVector& axis) {
  OpScope scope("reduce_sum_like");
  // Note [Legacy ops' checks]
  OF_CHECK_TYPE(x.dtype() == like.dtype()) << "Tensors x and like must have the same type, got "
                                           << DTypeName(x.dtype()) << " and " << DTypeName(like.dtype());
  OF_CHECK(axis.size() != 0 || x.sizes() == like.sizes())
      << "The shape of the x tensor must be consistent to the shape of the like tensor when axis is empty, got "
      << ShapeStr(x.sizes()) << " and " << ShapeStr(like.sizes());
  Tensor r = axis.size() == 0 ? x : functional::Sum(x, axis, false, std::nullopt);
  OF_CHECK(r.numel() == like.numel()) << "the sum of x " << ShapeStr(x.sizes()) << " over axis " << ShapeStr(axis)
                                      << " has " << r.numel() << " elements, like " << ShapeStr(like.sizes())
                                      << " has " << like.numel();
  return functional::Reshape(r, like.sizes());
}

Tensor SquareRelu(const Tensor& x) {
  OpScope scope("square_relu");
  Tensor r = functional::Relu(x);
  return r * r;
}

Tensor ReshapeLike(const Tensor& input, const Tensor& like) {
  OpScope scope("reshape_like");
  OF_CHECK(input.numel() == like.numel())  // Note [Legacy ops' checks]
      << "The element number of the in tensor must be equal to the element number of the like tensor, but got "
      << input.numel() << " and " << like.numel();
  return functional::Reshape(input, like.sizes());
}

Tensor ArgSort(const Tensor& input, const std::string& direction) {
  OpScope scope("arg_sort");
  OF_CHECK(direction == "ASCENDING" || direction == "DESCENDING")  // Note [Legacy ops' checks]
      << "expected the input direction parameter value is \"ASCENDING\" or \"DESCENDING\", but got '" << direction
      << "'";
  return functional::Cast(functional::Argsort(input, -1, direction == "DESCENDING", false), DType::kInt32);
}

Tensor SparseCrossEntropy(const Tensor& prediction, const Tensor& label, int64_t depth) {
  OpScope scope("sparse_cross_entropy");
  CheckSparseLabel(prediction, label);  // Note [Legacy ops' checks]
  OF_CHECK(prediction.size(-1) == depth) << "The size of prediction's last dimension ("
                                         << prediction.size(-1) << ") must match depth (" << depth << ")";
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
