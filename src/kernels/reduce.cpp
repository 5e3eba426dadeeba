#include "kernels/reduce.h"

namespace oneflow {

namespace {
// Drops size-1 dims and merges neighbours that are contiguous in every listed stride array.
void Coalesce(int& n, int64_t* sizes, int64_t* s1, int64_t* s2) {
  int m = 0;
  for (int d = 0; d < n; ++d) {
    if (sizes[d] == 1) continue;
    if (m > 0 && s1[m - 1] == s1[d] * sizes[d] && (!s2 || s2[m - 1] == s2[d] * sizes[d])) {
      sizes[m - 1] *= sizes[d];
      s1[m - 1] = s1[d];
      if (s2) s2[m - 1] = s2[d];
      continue;
    }
    sizes[m] = sizes[d];
    s1[m] = s1[d];
    if (s2) s2[m] = s2[d];
    ++m;
  }
  n = m;
}
}  // namespace

ReduceGeom MakeReduceGeom(const Tensor& in, const Tensor& out, const bool* mask) {
  ReduceGeom g;
  for (int d = 0; d < in.dim(); ++d) {
    const int64_t s = in.sizes()[d];
    if (mask[d]) {
      g.isize[g.ni] = s;
      g.istride[g.ni++] = in.strides()[d];
      g.inner *= s;
    } else {
      g.osize[g.no] = s;
      g.ostride_in[g.no] = in.strides()[d];
      g.ostride_out[g.no++] = out.strides()[d];
      g.outer *= s;
    }
  }
  Coalesce(g.ni, g.isize, g.istride, nullptr);
  Coalesce(g.no, g.osize, g.ostride_in, g.ostride_out);
  return g;
}

}  // namespace oneflow
