// Shapes and strides live inline (no heap allocation per tensor); at most kMaxDims dims.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "core/error.h"

namespace oneflow {

constexpr int kMaxDims = 16;

class DimVector {
 public:
  DimVector() = default;
  explicit DimVector(int n, int64_t v = 0) { resize(n, v); }
  DimVector(std::initializer_list<int64_t> l) { for (int64_t v : l) push_back(v); }
  explicit DimVector(const std::vector<int64_t>& v) { for (int64_t x : v) push_back(x); }
  DimVector(const int64_t* b, const int64_t* e) { for (; b != e; ++b) push_back(*b); }

  int size() const { return n_; }
  bool empty() const { return n_ == 0; }
  int64_t& operator[](int i) { return d_[i]; }
  int64_t operator[](int i) const { return d_[i]; }
  int64_t* data() { return d_; }
  const int64_t* data() const { return d_; }
  const int64_t* begin() const { return d_; }
  const int64_t* end() const { return d_ + n_; }
  int64_t* begin() { return d_; }
  int64_t* end() { return d_ + n_; }
  int64_t back() const { return d_[n_ - 1]; }
  void push_back(int64_t v) {
    OF_CHECK(n_ < kMaxDims) << "tensors may have at most " << kMaxDims << " dimensions";
    d_[n_++] = v;
  }
  void resize(int n, int64_t v = 0) {
    OF_CHECK(n >= 0 && n <= kMaxDims) << "tensors may have at most " << kMaxDims << " dimensions";
    for (int i = n_; i < n; ++i) d_[i] = v;
    n_ = n;
  }
  void insert(int pos, int64_t v) {
    push_back(0);
    for (int i = n_ - 1; i > pos; --i) d_[i] = d_[i - 1];
    d_[pos] = v;
  }
  void erase(int pos) {
    for (int i = pos; i + 1 < n_; ++i) d_[i] = d_[i + 1];
    --n_;
  }
  bool operator==(const DimVector& o) const {
    if (n_ != o.n_) return false;
    for (int i = 0; i < n_; ++i) if (d_[i] != o.d_[i]) return false;
    return true;
  }
  bool operator!=(const DimVector& o) const { return !(*this == o); }
  std::vector<int64_t> vec() const { return std::vector<int64_t>(d_, d_ + n_); }

 private:
  int64_t d_[kMaxDims];
  int n_ = 0;
};

int64_t NumelOf(const DimVector& shape);
DimVector ContiguousStrides(const DimVector& shape);
std::string ShapeStr(const DimVector& shape);  // "[2, 3]", as in PyTorch's messages
// Wraps a possibly negative dim into [0, ndim); IndexError with PyTorch's wording when out of range.
int WrapDim(int64_t dim, int ndim);
// Broadcasts two shapes (numpy rules); RuntimeError naming the mismatching dim.
DimVector BroadcastShapes(const DimVector& a, const DimVector& b);

}  // namespace oneflow
