// Backward helpers of the resampling family (src/ops/table/resample.yaml).
#pragma once
#include "core/shape.h"

namespace oneflow::functional {

// The last two sizes (H, W): im2col's image size for its col2im backward.
inline DimVector SpatialSizes(const DimVector& sizes) {
  return DimVector{sizes[sizes.size() - 2], sizes[sizes.size() - 1]};
}

}  // namespace oneflow::functional
