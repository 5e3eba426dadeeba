#include "ops/reduce_util.h"

#include "ops/copy.h"
#include "decl/contiguous.h"
#include "decl/permute.h"

namespace oneflow {

ReduceDims MakeReduceDims(const Tensor& in, const std::optional<DimVector>& dim, bool keepdim) {
  ReduceDims r;
  const int nd = in.dim();
  if (!dim || dim->empty()) {
    for (int d = 0; d < nd; ++d) r.mask[d] = true;
  } else {
    for (int64_t d : *dim) {
      const int w = WrapDim(d, nd);
      if (nd == 0) continue;
      OF_CHECK(!r.mask[w]) << "dim " << w << " appears multiple times in the list of dims";
      r.mask[w] = true;
    }
  }
  for (int d = 0; d < nd; ++d) {
    const int64_t s = in.sizes()[d];
    if (r.mask[d]) {
      r.inner *= s;
      if (keepdim) r.out_shape.push_back(1);
    } else {
      r.outer *= s;
      r.out_shape.push_back(s);
    }
  }
  return r;
}

Tensor ReducedLast(const Tensor& in, const ReduceDims& r) {
  DimVector perm;
  bool identity = true;
  for (int d = 0; d < in.dim(); ++d)
    if (!r.mask[d]) perm.push_back(d);
  for (int d = 0; d < in.dim(); ++d)
    if (r.mask[d]) perm.push_back(d);
  for (int d = 0; d < perm.size(); ++d) identity &= perm[d] == d;
  return Contiguous(identity ? in : Permute(in, perm));
}

}  // namespace oneflow
