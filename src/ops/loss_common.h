// Shared pieces of the loss family's entries (src/ops/loss_*.cpp): the reduction argument and the
// argument checks PyTorch's losses make.
#pragma once
#include <string>

#include "core/tensor.h"

namespace oneflow {

enum class Reduction { kNone, kMean, kSum };

// 'none' | 'mean' | 'sum' (ValueError otherwise, as nn.functional); kl_div also takes 'batchmean'.
Reduction ParseReduction(const std::string& reduction);
// The elementwise loss reduced: itself, its mean, or its sum (0-d).
Tensor ApplyReduction(const Tensor& elem, Reduction r);
// Losses are defined for floating inputs only.
void CheckFloatingLossInput(const Tensor& t, const char* what);
// PyTorch refuses a grad-requiring weight where a loss has no derivative for it.
void CheckNoGradFor(const Tensor& t, const char* arg);
// An integer class-index tensor (any integer dtype: OneFlow's examples pass int32).
void CheckClassIndexTarget(const Tensor& target);

}  // namespace oneflow

namespace oneflow {

// cross_entropy's gradient with respect to the logits is s * (A * softmax - B) per position; this
// is A (divided by the mean's denominator, 0 at ignored positions) for a class-index target, of
// the target's shape. Its double backward needs it (src/autograd/formulas/loss.cpp).
Tensor CrossEntropyClassFactor(const Tensor& target, const Tensor& weight, const DimVector& input_sizes,
                               int64_t ignore_index, const std::string& reduction,
                               double label_smoothing, DType dtype);
// combined_margin_loss: true at each row's label column (labels outside [0, C) mark nothing).
Tensor LabelColumnMask(const Tensor& label, const DimVector& x_sizes);

}  // namespace oneflow
