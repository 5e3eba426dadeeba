// Data movement without conversion: dst and src have one dtype and one shape, any strides
// (negative ones included: flip hands the copy a reversed view). Dispatches on the element size
// only (1/2/4/8/16 bytes), so one instantiation serves every dtype of that width, and the inner
// loops are plain indexed loops the compiler vectorises, forwards or reversed.
#pragma once
#include "core/tensor.h"

namespace oneflow {

void MoveInto(const Tensor& dst, const Tensor& src);

struct LoopPlan;
// A same-dtype host copy whose plan transposes (the destination unit-stride along the innermost
// dim, the source along the one before it: t().contiguous(), permutes) copied in cache-sized
// square tiles; false, with nothing copied, for any other plan.
bool TransposeCopy(const LoopPlan& plan, int64_t element_size);

// A same-dtype host copy of any plan (the source may broadcast: stride 0): tiled when it
// transposes (TransposeCopy), else row by row as memcpy, a fill (a broadcast source element:
// `x[:, None].expand(...).contiguous()`), a reversed or a strided gather.
void SameWidthCopy(const LoopPlan& plan, int64_t element_size);

// One complex128 element's bytes (U(0) is zero, as for the integer widths).
struct Bytes16 {
  uint64_t lo, hi;
  Bytes16() = default;
  constexpr Bytes16(int v) : lo(static_cast<uint64_t>(v)), hi(0) {}  // NOLINT
};

// Calls f(Tag<U>{}) with U the unsigned integer type as wide as one element of `t`.
template <typename F>
decltype(auto) DispatchWidth(int64_t element_size, F&& f) {
  switch (element_size) {
    case 1: return f(Tag<uint8_t>{});
    case 2: return f(Tag<uint16_t>{});
    case 4: return f(Tag<uint32_t>{});
    case 16: return f(Tag<Bytes16>{});
    default: return f(Tag<uint64_t>{});
  }
}

}  // namespace oneflow
