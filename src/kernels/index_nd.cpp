// CPU kernels of the n-d index ops' slice loops (kernels/index_nd.h).
#include "kernels/index_nd.h"

#include <algorithm>
#include <type_traits>

#include "core/dtype.h"
#include "core/parallel.h"
#include "ops/index_util.h"

namespace oneflow {

namespace {

void GatherRowsCpu(const Tensor& src, const Tensor& out, const std::vector<int64_t>& offsets, int64_t slice) {
  const int64_t rows = static_cast<int64_t>(offsets.size());
  DispatchBySize(src.element_size(), [&](auto tag) {
    using U = typename std::decay_t<decltype(tag)>::type;
    const U* s = src.data<U>();
    U* o = out.data<U>();
    ParallelFor(0, rows, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, slice)), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) std::copy(s + offsets[r], s + offsets[r] + slice, o + r * slice);
    });
  });
}

// Threads split the slice elements, each walks the rows in order: repeated rows add up
// deterministically.
void AddRowsCpu(const Tensor& out, const Tensor& updates, const std::vector<int64_t>& offsets, int64_t slice) {
  const int64_t rows = static_cast<int64_t>(offsets.size());
  DispatchAllAndComplex(out.dtype(), [&](auto tag) {  // (complex: gather_nd's gradient)
    using T = typename std::decay_t<decltype(tag)>::type;
    using M = OpMath<T>;
    T* o = out.data<T>();
    const T* up = updates.data<T>();
    ParallelFor(0, slice, std::max<int64_t>(1, kGrainSize / rows), [&](int64_t b, int64_t e) {
      for (int64_t r = 0; r < rows; ++r) {
        T* dst = o + offsets[r];
        const T* src = up + r * slice;
        for (int64_t i = b; i < e; ++i) {
          if constexpr (std::is_same_v<T, bool>) dst[i] = dst[i] || src[i];
          else dst[i] = static_cast<T>(static_cast<M>(dst[i]) + static_cast<M>(src[i]));
        }
      }
    });
  });
}

void ZeroRowsCpu(const Tensor& out, const std::vector<int64_t>& offsets, int64_t slice) {
  DispatchBySize(out.element_size(), [&](auto tag) {
    using U = typename std::decay_t<decltype(tag)>::type;
    U* o = out.data<U>();
    for (int64_t off : offsets) std::fill(o + off, o + off + slice, U(0));
  });
}

// The CPU kernels in the registry (Note [Kernel registry]); the entries below reach them.
const bool kRegistered = [] {
  kernels::RegisterKernel<kernels::NdGatherRowsKernel>(DeviceType::kCPU, &GatherRowsCpu);
  kernels::RegisterKernel<kernels::NdAddRowsKernel>(DeviceType::kCPU, &AddRowsCpu);
  kernels::RegisterKernel<kernels::NdZeroRowsKernel>(DeviceType::kCPU, &ZeroRowsCpu);
  return true;
}();

}  // namespace

void NdGatherRows(const Tensor& src, const Tensor& out, const std::vector<int64_t>& offsets, int64_t slice) {
  if (offsets.empty() || slice == 0) return;
  kernels::CallKernel<kernels::NdGatherRowsKernel>(out.device(), src, out, offsets, slice);
}

void NdAddRows(const Tensor& out, const Tensor& updates, const std::vector<int64_t>& offsets, int64_t slice) {
  if (offsets.empty() || slice == 0) return;
  kernels::CallKernel<kernels::NdAddRowsKernel>(out.device(), out, updates, offsets, slice);
}

void NdZeroRows(const Tensor& out, const std::vector<int64_t>& offsets, int64_t slice) {
  if (offsets.empty() || slice == 0) return;
  kernels::CallKernel<kernels::NdZeroRowsKernel>(out.device(), out, offsets, slice);
}

}  // namespace oneflow
