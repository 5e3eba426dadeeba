// Kernel entries of the composite losses (src/autograd/composite/loss.cpp): the same
// compositions, run without recording a graph.
#include "autograd/functional.h"
#include "autograd/grad_mode.h"
#include "decl/cosine_embedding_loss.h"
#include "decl/gaussian_nll_loss.h"
#include "decl/hinge_embedding_loss.h"
#include "decl/multilabel_soft_margin_loss.h"
#include "decl/poisson_nll_loss.h"
#include "decl/triplet_margin_loss.h"

namespace oneflow {

Tensor HingeEmbeddingLoss(const Tensor& input, const Tensor& target, double margin, const std::string& reduction) {
  AutoGradMode no_grad(false);
  return functional::HingeEmbeddingLoss(input, target, margin, reduction);
}

Tensor CosineEmbeddingLoss(const Tensor& input1, const Tensor& input2, const Tensor& target, double margin,
                           const std::string& reduction) {
  AutoGradMode no_grad(false);
  return functional::CosineEmbeddingLoss(input1, input2, target, margin, reduction);
}

Tensor MultilabelSoftMarginLoss(const Tensor& input, const Tensor& target, const Tensor& weight,
                                const std::string& reduction) {
  AutoGradMode no_grad(false);
  return functional::MultilabelSoftMarginLoss(input, target, weight, reduction);
}

Tensor PoissonNllLoss(const Tensor& input, const Tensor& target, bool log_input, bool full, double eps,
                      const std::string& reduction) {
  AutoGradMode no_grad(false);
  return functional::PoissonNllLoss(input, target, log_input, full, eps, reduction);
}

Tensor GaussianNllLoss(const Tensor& input, const Tensor& target, const Tensor& var, bool full, double eps,
                       const std::string& reduction) {
  AutoGradMode no_grad(false);
  return functional::GaussianNllLoss(input, target, var, full, eps, reduction);
}

Tensor TripletMarginLoss(const Tensor& anchor, const Tensor& positive, const Tensor& negative, double margin,
                         double p, double eps, bool swap, const std::string& reduction) {
  AutoGradMode no_grad(false);
  return functional::TripletMarginLoss(anchor, positive, negative, margin, p, eps, swap, reduction);
}

}  // namespace oneflow
