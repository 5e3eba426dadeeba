// Row-wise sorting and selection kernels (sort, argsort, topk, kthvalue, median, mode, unique).
// Note [Sort keys]: values are mapped to unsigned integer keys whose unsigned order is PyTorch's
// order: NaN after +inf (every NaN alike), -0.0 equal to 0.0, descending = complemented keys.
// Long rows are sorted by LSD radix passes (8-bit digits, passes whose digit is constant are
// skipped, one long row split over threads), short rows by a comparison sort of (key, position)
// pairs; both are stable, so equal values keep their order. Values are read back from the input
// through the sorted positions, so they are the input's exact bits.
#pragma once
#include <cstdint>
#include <vector>

#include "core/tensor.h"
#include "kernels/registry.h"

namespace oneflow {

// `values` / `indices` (either may be undefined) are contiguous, shaped like `in` except along
// `dim`, where they have `k` entries (k = in.size(dim) for a full sort). `in` may be strided.
void SortKernel(const Tensor& in, int dim, bool descending, const Tensor& values, const Tensor& indices);
void TopkKernel(const Tensor& in, int dim, int64_t k, bool largest, const Tensor& values, const Tensor& indices);

enum class SelectKind {
  kKth,        // the element of ascending rank k (0-based)
  kMedian,     // lower median; NaN (first NaN's position) when the row has one
  kNanMedian,  // lower median of the non-NaN elements
  kMode,       // most frequent value (smallest among ties), at its last position
};
// One element per row into keepdim-shaped `values` / `indices` (size 1 along `dim`).
void SelectKernel(const Tensor& in, int dim, SelectKind kind, int64_t k, const Tensor& values,
                  const Tensor& indices);
// Their kernel interfaces (Note [Kernel registry]): CPU in kernels/sort.cpp, CUDA in cuda/sort.cu.
namespace kernels {
struct SortKernel {
  static constexpr const char* kName = "sort";
  using Fn = void (*)(const Tensor& in, int dim, bool descending, const Tensor& values, const Tensor& indices);
  using Writes = KernelWrites<3, 4>;
};
struct TopkKernel {
  static constexpr const char* kName = "topk";
  using Fn = void (*)(const Tensor& in, int dim, int64_t k, bool largest, const Tensor& values,
                      const Tensor& indices);
  using Writes = KernelWrites<4, 5>;
};
struct SelectKernel {
  static constexpr const char* kName = "select_along";
  using Fn = void (*)(const Tensor& in, int dim, SelectKind kind, int64_t k, const Tensor& values,
                      const Tensor& indices);
  using Writes = KernelWrites<4, 5>;
};
}  // namespace kernels

// Unique values of a contiguous tensor, flattened: sorted (or, for `consecutive`, runs of equal
// neighbours in input order). Every NaN is distinct (PyTorch). inverse: the group of each input
// element; counts: the size of each group.
struct UniqueResult {
  Tensor values, inverse, counts;
};
UniqueResult UniqueFlat(const Tensor& in, bool consecutive, bool want_inverse, bool want_counts);

// Lexicographic order of the rows of a contiguous [n, m] tensor (stable), and whether two rows
// are equal (NaN != NaN), for unique(dim=...).
std::vector<int64_t> SortRowsLex(const Tensor& rows);
bool RowsEqual(const Tensor& rows, int64_t a, int64_t b);

}  // namespace oneflow
