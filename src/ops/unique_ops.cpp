// unique and unique_consecutive, over all elements or over slices along a dim. The flat case
// sorts keys by radix (src/kernels/sort.cpp); slices are ordered lexicographically.
#include <cstring>

#include "kernels/sort.h"
#include "ops/index_util.h"
#include "ops/manual_ops.h"
#include "decl/contiguous.h"
#include "decl/empty.h"
#include "decl/unique.h"
#include "decl/unique_consecutive.h"

namespace oneflow {

namespace {

Tensor EmptyIndex(const Tensor& like) { return Empty(DimVector{0}, DType::kInt64, like.device()); }

// input with dim d moved to the front, contiguous, seen as [size(d), rest].
Tensor SlicesFirst(const Tensor& input, int d) {
  DimVector s, st;
  s.push_back(input.sizes()[d]);
  st.push_back(input.strides()[d]);
  for (int k = 0; k < input.dim(); ++k) {
    if (k == d) continue;
    s.push_back(input.sizes()[k]);
    st.push_back(input.strides()[k]);
  }
  Tensor c = Contiguous(MakeView(input, s, st, input.offset()));
  const int64_t n = s[0], m = n ? c.numel() / n : 0;
  return MakeView(c, DimVector{n, m}, DimVector{m, 1}, c.offset());
}

std::tuple<Tensor, Tensor, Tensor> UniqueDim(const Tensor& input, int64_t dim, bool consecutive, bool want_inverse,
                                             bool want_counts) {
  const int d = WrapDim(dim, input.dim());
  OF_CHECK(input.dim() > 0) << "a 0-d tensor has no dim to take slices along";
  Tensor rows = SlicesFirst(input, d);
  const int64_t n = rows.sizes()[0], m = rows.sizes()[1];
  std::vector<int64_t> order;
  if (consecutive) {
    order.resize(n);
    for (int64_t i = 0; i < n; ++i) order[i] = i;
  } else {
    order = SortRowsLex(rows);
  }
  std::vector<int64_t> reps, counts;  // first row of each group, group sizes
  std::vector<int64_t> inverse(n);
  for (int64_t i = 0; i < n; ++i) {
    if (i == 0 || !RowsEqual(rows, order[i - 1], order[i])) {
      reps.push_back(order[i]);
      counts.push_back(0);
    }
    ++counts.back();
    inverse[order[i]] = reps.size() - 1;
  }
  const int64_t g = reps.size();
  // The representative slices, [g, rest...], then dim moved back into place.
  DimVector front;
  front.push_back(g);
  for (int k = 0; k < input.dim(); ++k)
    if (k != d) front.push_back(input.sizes()[k]);
  Tensor picked = Empty(front, input.dtype(), input.device());
  const int64_t bytes = m * input.element_size();
  for (int64_t i = 0; i < g; ++i)
    std::memcpy(picked.raw_data() + i * bytes, rows.raw_data() + reps[i] * bytes, bytes);
  DimVector s, st;
  const DimVector pst = ContiguousStrides(front);
  for (int k = 0, j = 1; k < input.dim(); ++k) {
    if (k == d) {
      s.push_back(g);
      st.push_back(pst[0]);
    } else {
      s.push_back(front[j]);
      st.push_back(pst[j]);
      ++j;
    }
  }
  Tensor values = picked;
  if (d != 0) {
    values = Empty(s, input.dtype(), input.device());
    CopyInto(values, MakeView(picked, s, st, 0));
  }
  Tensor inv = EmptyIndex(input), cnt = EmptyIndex(input);
  if (want_inverse) {
    inv = Empty(DimVector{n}, DType::kInt64, input.device());
    std::copy(inverse.begin(), inverse.end(), inv.data<int64_t>());
  }
  if (want_counts) {
    cnt = Empty(DimVector{g}, DType::kInt64, input.device());
    std::copy(counts.begin(), counts.end(), cnt.data<int64_t>());
  }
  return {values, inv, cnt};
}

std::tuple<Tensor, Tensor, Tensor> UniqueImpl(const Tensor& input, std::optional<int64_t> dim, bool consecutive,
                                              bool want_inverse, bool want_counts) {
  CheckHasData(input);  // the output size depends on the values
  if (input.device().type == DeviceType::kCUDA) {
    // Data-dependent sizes: computed on a host copy (a sync, as PyTorch's CUDA unique has), the
    // results moved back.
    auto [v, inv, cnt] = UniqueImpl(OnHost(input), dim, consecutive, want_inverse, want_counts);
    const Device& d = input.device();
    return {MovedTo(v, d), MovedTo(inv, d), MovedTo(cnt, d)};
  }
  if (dim) return UniqueDim(input, *dim, consecutive, want_inverse, want_counts);
  UniqueResult r = UniqueFlat(Contiguous(input), consecutive, want_inverse, want_counts);
  return {r.values, want_inverse ? r.inverse : EmptyIndex(input), want_counts ? r.counts : EmptyIndex(input)};
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> Unique(const Tensor& input, bool sorted, bool return_inverse, bool return_counts,
                                          std::optional<int64_t> dim) {
  OpScope scope("unique");
  (void)sorted;  // always sorted: one valid order for sorted=False
  return UniqueImpl(input, dim, false, return_inverse, return_counts);
}

std::tuple<Tensor, Tensor, Tensor> UniqueConsecutive(const Tensor& input, bool return_inverse, bool return_counts,
                                                     std::optional<int64_t> dim) {
  OpScope scope("unique_consecutive");
  return UniqueImpl(input, dim, true, return_inverse, return_counts);
}

}  // namespace oneflow
