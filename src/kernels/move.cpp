#include "kernels/move.h"

#include <cstring>

#include "core/parallel.h"
#include "kernels/loop.h"
#include "ops/copy.h"

namespace oneflow {

namespace {

// A transposing copy: the destination unit-stride along the innermost plan dim, the source along
// the one before it (t().contiguous(), NCHW <-> NHWC permutes). Element by element either side
// walks across cache lines, so the copy goes in strips of kTile destination rows (kTile elements
// = one 64-byte source line), tile by tile along the strip: a tile's source columns are read as
// contiguous runs into a small buffer and its destination rows written as contiguous runs, both
// fixed-length loops that vectorise; the outer offsets are found once per strip (per tile they
// cost more divisions than the tile had elements). Returns false (the plain loops then run) for
// any other layout.
template <typename U>
bool TiledTranspose(const LoopPlan& p) {
  constexpr int64_t es = sizeof(U), kTile = es >= 8 ? 8 : 64 / es;
  const int nd = p.ndim;
  if (nd < 2) return false;
  const int64_t *so = p.strides[0], *sa = p.strides[1];
  const int64_t rows = p.sizes[nd - 2], cols = p.sizes[nd - 1];
  if (so[nd - 1] != es || sa[nd - 2] != es || sa[nd - 1] == es || rows < 8 || cols < 8) return false;
  const int64_t outer = p.numel / (rows * cols), strips = (rows + kTile - 1) / kTile;
  const int64_t ro = so[nd - 2], ca = sa[nd - 1];
  ParallelFor(0, outer * strips, std::max<int64_t>(1, kGrainSize / (kTile * cols)), [&](int64_t b, int64_t e) {
    U tile[kTile][kTile];  // [column][row]
    for (int64_t t = b; t < e; ++t) {
      int64_t o = t / strips, off_o = 0, off_a = 0;
      for (int d = nd - 3; d >= 0; --d) {  // the outer dims' offsets
        const int64_t idx = o % p.sizes[d];
        o /= p.sizes[d];
        off_o += idx * so[d];
        off_a += idx * sa[d];
      }
      const int64_t i0 = (t % strips) * kTile, ni = std::min(kTile, rows - i0);
      char* po = p.base[0] + off_o + i0 * ro;
      const char* pa = p.base[1] + off_a + i0 * es;
      int64_t j0 = 0;
      if (ni == kTile) {
        for (; j0 + kTile <= cols; j0 += kTile) {
          for (int64_t j = 0; j < kTile; ++j) {
            const U* src = reinterpret_cast<const U*>(pa + (j0 + j) * ca);
            for (int64_t i = 0; i < kTile; ++i) tile[j][i] = src[i];
          }
          for (int64_t i = 0; i < kTile; ++i) {
            U* dst = reinterpret_cast<U*>(po + i * ro) + j0;
            for (int64_t j = 0; j < kTile; ++j) dst[j] = tile[j][i];
          }
        }
      }
      for (int64_t i = 0; i < ni; ++i) {  // a partial strip, or the columns after the last tile
        U* dst = reinterpret_cast<U*>(po + i * ro);
        const char* src = pa + i * es;
        for (int64_t j = j0; j < cols; ++j) dst[j] = *reinterpret_cast<const U*>(src + j * ca);
      }
    }
  });
  return true;
}

}  // namespace

bool TransposeCopy(const LoopPlan& plan, int64_t element_size) {
  return DispatchWidth(element_size, [&](auto tag) {
    return TiledTranspose<typename std::decay_t<decltype(tag)>::type>(plan);
  });
}

void SameWidthCopy(const LoopPlan& plan, int64_t element_size) {
  if (TransposeCopy(plan, element_size)) return;
  DispatchWidth(element_size, [&](auto tag) {
    using U = typename std::decay_t<decltype(tag)>::type;
    constexpr int64_t es = sizeof(U);
    RunLoop(plan, [](char** p, const int64_t* s, int64_t n) {
      U* o = reinterpret_cast<U*>(p[0]);
      const U* a = reinterpret_cast<const U*>(p[1]);
      if (s[0] == es && s[1] == es) {
        std::memcpy(o, a, n * es);
      } else if (s[0] == es && s[1] == 0) {
        const U v = *a;
        for (int64_t i = 0; i < n; ++i) o[i] = v;
      } else if (s[0] == es && s[1] == -es) {
        for (int64_t i = 0; i < n; ++i) o[i] = a[-i];
      } else if (s[0] == es) {
        const int64_t sa = s[1] / es;
        for (int64_t i = 0; i < n; ++i) o[i] = a[i * sa];
      } else {
        for (int64_t i = 0; i < n; ++i)
          *reinterpret_cast<U*>(p[0] + i * s[0]) = *reinterpret_cast<const U*>(p[1] + i * s[1]);
      }
    });
  });
}

void MoveInto(const Tensor& dst, const Tensor& src) {
  OF_ASSERT(dst.dtype() == src.dtype() && dst.sizes() == src.sizes()) << "MoveInto needs equal dtype and shape";
  if (dst.numel() == 0 || dst.device().type == DeviceType::kMeta) return;
  // CUDA tensors: the copy engine's device path (any strides, negative ones included).
  if (dst.device().type == DeviceType::kCUDA || src.device().type == DeviceType::kCUDA) return CopyInto(dst, src);
  const Tensor* ops[2] = {&dst, &src};
  SameWidthCopy(MakePlan(dst.sizes(), ops, 2), dst.element_size());
}

}  // namespace oneflow
