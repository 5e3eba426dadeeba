// Backward helpers of the loss family (src/ops/table/loss.yaml), written with table ops so that
// they are differentiable again. Gradients of elementwise losses have the broadcast shape of
// their operands; the engine sums them down to each input's shape.
#pragma once
#include <string>

#include "autograd/functional.h"

namespace oneflow::functional {

// The incoming gradient of a reduced loss spread over the elementwise loss of shape `sizes`.
Tensor LossReductionGrad(const Tensor& grad, const DimVector& sizes, const std::string& reduction);

Tensor MseLossGrad(const Tensor& grad, const Tensor& x, const Tensor& y, const std::string& reduction);
Tensor L1LossGrad(const Tensor& grad, const Tensor& x, const Tensor& y, const std::string& reduction);
Tensor SmoothL1LossGrad(const Tensor& grad, const Tensor& x, const Tensor& y, const std::string& reduction,
                        double beta);
Tensor HuberLossGrad(const Tensor& grad, const Tensor& x, const Tensor& y, const std::string& reduction,
                     double delta);
Tensor SoftMarginLossGrad(const Tensor& grad, const Tensor& x, const Tensor& y, const std::string& reduction);
Tensor BinaryCrossEntropyGrad(const Tensor& grad, const Tensor& x, const Tensor& y, const Tensor& weight,
                              const std::string& reduction);
Tensor BinaryCrossEntropyTargetGrad(const Tensor& grad, const Tensor& x, const Tensor& y, const Tensor& weight,
                                    const std::string& reduction);
Tensor BceWithLogitsGrad(const Tensor& grad, const Tensor& x, const Tensor& y, const Tensor& weight,
                         const Tensor& pos_weight, const std::string& reduction);
Tensor BceWithLogitsTargetGrad(const Tensor& grad, const Tensor& x, const Tensor& y, const Tensor& weight,
                               const Tensor& pos_weight, const std::string& reduction);
Tensor KlDivGrad(const Tensor& grad, const Tensor& x, const Tensor& t, const std::string& reduction,
                 bool log_target);
Tensor KlDivTargetGrad(const Tensor& grad, const Tensor& x, const Tensor& t, const std::string& reduction,
                       bool log_target);
// which: 0 = input1, 1 = input2, 2 = target.
Tensor MarginRankingGrad(const Tensor& grad, const Tensor& x1, const Tensor& x2, const Tensor& y, double margin,
                         const std::string& reduction, int which);

// nll_loss_backward is linear in its grad_output; its transpose is nll_loss itself.
Tensor NllLossDoubleBackward(const Tensor& gg, const Tensor& target, const Tensor& weight, int64_t ignore_index,
                             const std::string& reduction);
// cross_entropy with respect to probability targets.
Tensor CrossEntropyTargetGrad(const Tensor& grad, const Tensor& x, const Tensor& target, const Tensor& weight,
                              const std::string& reduction, double label_smoothing);
// cross_entropy_backward's gradients: with respect to its grad_output, its input (the softmax
// Jacobian), and probability targets.
Tensor CrossEntropyDoubleBackwardGrad(const Tensor& gg, const Tensor& g, const Tensor& x, const Tensor& target,
                                      const Tensor& weight, int64_t ignore_index, const std::string& reduction,
                                      double label_smoothing);
Tensor CrossEntropyDoubleBackwardInput(const Tensor& gg, const Tensor& g, const Tensor& x, const Tensor& target,
                                       const Tensor& weight, int64_t ignore_index, const std::string& reduction,
                                       double label_smoothing);
Tensor CrossEntropyDoubleBackwardTarget(const Tensor& gg, const Tensor& g, const Tensor& x, const Tensor& target,
                                        const Tensor& weight, const std::string& reduction,
                                        double label_smoothing);

Tensor PairwiseDistanceGrad(const Tensor& grad, const Tensor& x1, const Tensor& x2, double p, double eps,
                            bool keepdim, const Tensor& result);
// d cos(a, b) / d a (call with the operands swapped for b).
Tensor CosineSimilarityGrad(const Tensor& grad, const Tensor& a, const Tensor& b, int64_t dim, double eps);
Tensor CombinedMarginLossGrad(const Tensor& grad, const Tensor& x, const Tensor& label, double m1, double m2,
                              double m3);

// Weight gradients of cross_entropy / cross_entropy_backward with probability targets (the only
// case where the weight may require grad).
Tensor CrossEntropyWeightGrad(const Tensor& grad, const Tensor& x, const Tensor& target,
                              const std::string& reduction, double label_smoothing);
Tensor CrossEntropyDoubleBackwardWeight(const Tensor& gg, const Tensor& g, const Tensor& x,
                                        const Tensor& target, const std::string& reduction,
                                        double label_smoothing);
}  // namespace oneflow::functional
