#include "autograd/formulas/normalization.h"

#include <algorithm>

#include "autograd/formulas.h"
#include "autograd/grad_mode.h"
#include "decl/batch_norm_backward.h"
#include "decl/group_norm_backward.h"
#include "decl/layer_norm_backward.h"
#include "decl/mean.h"
#include "decl/reshape.h"
#include "decl/rsqrt.h"
#include "decl/sum.h"

namespace oneflow::functional {

namespace {

std::vector<Tensor> Unpacked(const std::tuple<Tensor, Tensor, Tensor>& t) {
  return {std::get<0>(t), std::get<1>(t), std::get<2>(t)};
}

Tensor MeanOver(const Tensor& t, const DimVector& dims) { return functional::Mean(t, dims, true, std::nullopt); }
Tensor SumOver(const Tensor& t, const DimVector& dims) { return functional::Sum(t, dims, false, std::nullopt); }

// The normalised input xhat = (x - mean) * rstd over `dims` (differentiable in x), training-mode
// statistics recomputed; with eval statistics given, the constants instead.
struct Normalised {
  Tensor xhat, rstd;
};
Normalised Normalise(const Tensor& x, const DimVector& dims, double eps) {
  Tensor mu = MeanOver(x, dims);
  Tensor xc = x - mu;
  Tensor rstd = functional::Rsqrt(MeanOver(xc * xc, dims) + eps);
  return {xc * rstd, rstd};
}

// Input gradient of y = xhat * w' for a normalisation over `dims` with g = grad * w':
// rstd * (g - mean(g) - xhat * mean(g * xhat)).
Tensor NormInputGrad(const Tensor& g, const Normalised& n, const DimVector& dims) {
  return n.rstd * (g - MeanOver(g, dims) - n.xhat * MeanOver(g * n.xhat, dims));
}

DimVector AllBut(int rank, const DimVector& keep) {
  DimVector out;
  for (int d = 0; d < rank; ++d)
    if (std::find(keep.begin(), keep.end(), d) == keep.end()) out.push_back(d);
  return out;
}

}  // namespace

std::vector<Tensor> BatchNormGrads(const Tensor& grad, const Tensor& input, const Tensor& weight,
                                   const Tensor& save_mean, const Tensor& save_invstd, bool training, double eps,
                                   const std::array<bool, 3>& m) {
  if (!GradMode::is_enabled())
    return Unpacked(functional::BatchNormBackward(grad, input, weight, save_mean, save_invstd, training, m[0], m[1],
                                                  m[2]));
  const DimVector dims = AllBut(input.dim(), DimVector{1});
  DimVector bshape(input.dim(), 1);
  bshape[1] = input.sizes()[1];
  Normalised n;
  if (training) {
    n = Normalise(input, dims, eps);
  } else {
    n.rstd = functional::Reshape(save_invstd, bshape);
    n.xhat = (input - functional::Reshape(save_mean, bshape)) * n.rstd;
  }
  const Tensor w = weight.defined() ? functional::Reshape(weight, bshape) : Tensor();
  std::vector<Tensor> r(3);
  if (m[0]) {
    const Tensor g = w.defined() ? grad * w : grad;
    r[0] = training ? NormInputGrad(g, n, dims) : g * n.rstd;
  }
  if (m[1]) r[1] = SumOver(grad * n.xhat, dims);
  if (m[2]) r[2] = SumOver(grad, dims);
  return r;
}

std::vector<Tensor> LayerNormGrads(const Tensor& grad, const Tensor& input, const DimVector& normalized_shape,
                                   const Tensor& weight, const Tensor& mean, const Tensor& rstd, double eps,
                                   const std::array<bool, 3>& m) {
  if (!GradMode::is_enabled())
    return Unpacked(functional::LayerNormBackward(grad, input, normalized_shape, mean, rstd, weight, m[0], m[1], m[2]));
  const int k = normalized_shape.size(), lead = input.dim() - k;
  DimVector inner, outer;
  for (int d = 0; d < input.dim(); ++d) (d < lead ? outer : inner).push_back(d);
  const Normalised n = Normalise(input, inner, eps);
  std::vector<Tensor> r(3);
  if (m[0]) r[0] = NormInputGrad(weight.defined() ? grad * weight : grad, n, inner);
  if (m[1]) r[1] = outer.empty() ? grad * n.xhat : SumOver(grad * n.xhat, outer);
  if (m[2]) r[2] = outer.empty() ? grad : SumOver(grad, outer);
  return r;
}

std::vector<Tensor> GroupNormGrads(const Tensor& grad, const Tensor& input, int64_t num_groups,
                                   const Tensor& weight, const Tensor& mean, const Tensor& rstd, double eps,
                                   const std::array<bool, 3>& m) {
  if (!GradMode::is_enabled())
    return Unpacked(functional::GroupNormBackward(grad, input, num_groups, mean, rstd, weight, m[0], m[1], m[2]));
  const int64_t n = input.sizes()[0];
  int64_t per_group = input.sizes()[1] / num_groups;  // channels, then spatial elements, per group
  for (int d = 2; d < input.dim(); ++d) per_group *= input.sizes()[d];
  const DimVector grouped{n, num_groups, per_group}, group_dims{2};
  const Normalised g3 = Normalise(functional::Reshape(input, grouped), group_dims, eps);
  const Tensor xhat = functional::Reshape(g3.xhat, input.sizes());
  DimVector bshape(input.dim(), 1);
  bshape[1] = input.sizes()[1];
  const DimVector dims = AllBut(input.dim(), DimVector{1});
  std::vector<Tensor> r(3);
  if (m[0]) {
    const Tensor g = weight.defined() ? grad * functional::Reshape(weight, bshape) : grad;
    r[0] = functional::Reshape(NormInputGrad(functional::Reshape(g, grouped), g3, group_dims), input.sizes());
  }
  if (m[1]) r[1] = SumOver(grad * xhat, dims);
  if (m[2]) r[2] = SumOver(grad, dims);
  return r;
}

}  // namespace oneflow::functional
