// Random tensors for dropout and rrelu, drawn with the counter-based generator (core/philox.h)
// under a key taken once per call from the given generator (null: the device's default). Not table ops: the composite
// entries (src/autograd/composite/) multiply inputs by them.
#pragma once
#include "core/generator.h"
#include "core/tensor.h"

namespace oneflow {

// Elements are `keep_value` with probability 1 - p, else 0 (dropout's scaled Bernoulli noise).
Tensor BernoulliNoise(const DimVector& sizes, DType dtype, const Device& device, double p,
                      double keep_value, const GeneratorPtr& generator = GeneratorPtr());
// rrelu's training slopes: 1 where input >= 0, uniform in [lower, upper) elsewhere.
Tensor RreluNoise(const Tensor& input, double lower, double upper);

}  // namespace oneflow
