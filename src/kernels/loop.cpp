#include "kernels/loop.h"

namespace oneflow {

LoopPlan MakePlan(const DimVector& shape, const Tensor* const* ops, int nops, bool any_device) {
  LoopPlan p;
  p.nops = nops;
  const int nd = shape.size();
  // Broadcast each operand's strides onto `shape` (in bytes).
  int64_t st[kMaxOperands][kMaxDims];
  for (int k = 0; k < nops; ++k) {
    const Tensor& t = *ops[k];
    const int off = nd - t.dim();
    OF_ASSERT(off >= 0) << "operand has more dims than the loop";
    const int64_t es = t.element_size();
    for (int d = 0; d < nd; ++d) {
      const int td = d - off;
      st[k][d] = (td < 0 || t.sizes()[td] == 1) ? 0 : t.strides()[td] * es;
    }
    p.base[k] = any_device ? t.raw_ptr() : t.raw_data();
  }
  // Drop size-1 dims, then merge dim d into d+1 when every operand is contiguous across them.
  int n = 0;
  for (int d = 0; d < nd; ++d) {
    if (shape[d] == 1) continue;
    bool merge = n > 0;
    for (int k = 0; merge && k < nops; ++k)
      merge = p.strides[k][n - 1] == st[k][d] * shape[d];  // also 0 == 0 for broadcast runs
    if (merge) {
      p.sizes[n - 1] *= shape[d];
      for (int k = 0; k < nops; ++k) p.strides[k][n - 1] = st[k][d];
    } else {
      p.sizes[n] = shape[d];
      for (int k = 0; k < nops; ++k) p.strides[k][n] = st[k][d];
      ++n;
    }
  }
  p.ndim = n;
  p.numel = NumelOf(shape);
  if (n == 0 && p.numel == 1) p.ndim = 0;
  return p;
}

}  // namespace oneflow
