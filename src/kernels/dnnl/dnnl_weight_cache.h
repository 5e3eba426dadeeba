// What the oneDNN weight cache holds, for tests and memory accounting (Note [Weight cache] in
// dnnl_common.h; this header stays free of oneDNN's so that the bindings can include it).
#pragma once
#include <cstdint>

namespace oneflow::dnnl_glue {

struct WeightCacheStats {
  int64_t records = 0;  // (weight, layout) pairs seen, with or without a copy
  int64_t copies = 0, bytes = 0;  // the reordered copies kept
  int64_t hits = 0;  // calls served by a copy, since the start
};
WeightCacheStats GetWeightCacheStats();  // after dropping the copies of dead weights
void ClearWeightCache();
// Bytes the copies may hold (256 MiB unless set); returns the previous limit.
int64_t SetWeightCacheLimit(int64_t bytes);

}  // namespace oneflow::dnnl_glue
