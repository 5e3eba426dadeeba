// The reductions of the collectives, numbered as oneflow.distributed.ReduceOp (AVG is SUM there,
// then a division).
#pragma once

namespace oneflow::dist {

enum class ReduceOp { kSum, kProduct, kMin, kMax, kBand, kBor, kBxor };

}  // namespace oneflow::dist
