#include "core/shape.h"

#include "core/checked.h"

#include <sstream>

namespace oneflow {

int64_t NumelOf(const DimVector& shape) {
  int64_t n = 1;
  for (int64_t s : shape) n = CheckedMul(n, s, "the number of elements");
  return n;
}

DimVector ContiguousStrides(const DimVector& shape) {
  DimVector st(shape.size());
  int64_t acc = 1;
  for (int i = shape.size() - 1; i >= 0; --i) {
    st[i] = acc;
    acc *= shape[i] > 1 ? shape[i] : 1;
  }
  return st;
}

std::string ShapeStr(const DimVector& shape) {
  std::ostringstream ss;
  ss << "[";
  for (int i = 0; i < shape.size(); ++i) ss << (i ? ", " : "") << shape[i];
  ss << "]";
  return ss.str();
}

int WrapDim(int64_t dim, int ndim) {
  int64_t n = ndim > 0 ? ndim : 1;  // a 0-d tensor accepts dim 0 and -1, like PyTorch
  OF_CHECK_INDEX(dim >= -n && dim < n) << "Dimension out of range (expected to be in range of ["
                                       << -n << ", " << n - 1 << "], but got " << dim << ")";
  return static_cast<int>(dim < 0 ? dim + n : dim);
}

DimVector BroadcastShapes(const DimVector& a, const DimVector& b) {
  int n = a.size() > b.size() ? a.size() : b.size();
  DimVector out(n);
  for (int i = 0; i < n; ++i) {
    int ia = a.size() - n + i, ib = b.size() - n + i;
    int64_t sa = ia >= 0 ? a[ia] : 1, sb = ib >= 0 ? b[ib] : 1;
    OF_CHECK(sa == sb || sa == 1 || sb == 1)
        << "The size of tensor a (" << sa << ") must match the size of tensor b (" << sb
        << ") at non-singleton dimension " << i;
    out[i] = sa == 1 ? sb : sa;
  }
  return out;
}

}  // namespace oneflow
