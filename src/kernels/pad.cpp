// CPU kernels of pad (kernels/pad.h): a row of the output is a fill, a block copy and a fill
// (constant), or a gather through the last dim's map; the backward scatters (adds) the gradient
// through the same maps, one outer plane per task.
#include "kernels/pad.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "core/dtype.h"
#include "core/parallel.h"
#include "core/shape.h"

namespace oneflow {

namespace {

// Calls f(out_row_offset, in_row_offset or -1) for every output row (all dims but the last) of
// the outer plane `plane`; element offsets, contiguous layouts.
template <typename F>
void ForEachRow(const PadPlan& p, int64_t plane, const F& f) {
  const int nd = p.out.size();
  int64_t rows = 1;
  for (int d = p.first; d < nd - 1; ++d) rows *= p.out[d];
  const int64_t out_plane = NumelOf(p.out) / std::max<int64_t>(1, NumelOf(DimVector(p.out.begin(), p.out.begin() + p.first))),
                in_plane = NumelOf(DimVector(p.in.begin() + p.first, p.in.end()));
  DimVector idx(std::max(0, nd - 1 - p.first), 0);
  for (int64_t r = 0; r < rows; ++r) {
    int64_t src = plane * in_plane, dst = plane * out_plane, in_stride = p.in[nd - 1], out_stride = p.out[nd - 1];
    bool fill = false;
    for (int k = idx.size() - 1; k >= 0; --k) {
      const int d = p.first + k;
      const int64_t s = p.maps[k][idx[k]];
      if (s < 0) fill = true;
      src += s * in_stride;
      dst += idx[k] * out_stride;
      in_stride *= p.in[d];
      out_stride *= p.out[d];
    }
    f(dst, fill ? -1 : src);
    for (int k = idx.size() - 1; k >= 0; --k) {
      if (++idx[k] < p.out[p.first + k]) break;
      idx[k] = 0;
    }
  }
}

int64_t Planes(const PadPlan& p) { return NumelOf(DimVector(p.in.begin(), p.in.begin() + p.first)); }

void PadCpu(const Tensor& x, const Tensor& out, const PadPlan& p, const Scalar& fill) {
  const std::vector<int64_t>& last = p.maps.back();
  const int64_t w_out = p.out.back();
  DispatchAll(x.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    const T v = fill.To<T>();
    const T* xp = x.data<T>();
    T* op = out.data<T>();
    // For constant mode, the last dim's copied span: [lo, hi) of the output from lo - left.
    int64_t lo = 0, hi = 0;
    if (p.mode == PadMode::kConstant) {
      while (lo < w_out && last[lo] < 0) ++lo;
      hi = lo;
      while (hi < w_out && last[hi] >= 0) ++hi;
    }
    const int64_t planes = Planes(p);
    ParallelFor(0, planes, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, out.numel() / std::max<int64_t>(1, planes))),
                [&](int64_t b, int64_t e) {
      for (int64_t plane = b; plane < e; ++plane) {
        ForEachRow(p, plane, [&](int64_t dst, int64_t src) {
          T* o = op + dst;
          if (src < 0) {
            for (int64_t k = 0; k < w_out; ++k) o[k] = v;
          } else if (p.mode == PadMode::kConstant) {
            for (int64_t k = 0; k < lo; ++k) o[k] = v;
            if (hi > lo) std::memcpy(static_cast<void*>(o + lo), xp + src + last[lo], (hi - lo) * sizeof(T));
            for (int64_t k = hi; k < w_out; ++k) o[k] = v;
          } else {
            const T* s = xp + src;
            for (int64_t k = 0; k < w_out; ++k) o[k] = s[last[k]];
          }
        });
      }
    });
  });
}

void PadBackwardCpu(const Tensor& g, const Tensor& out, const PadPlan& p) {
  const std::vector<int64_t>& last = p.maps.back();
  const int64_t w_out = p.out.back();
  DispatchNumber(out.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    using M = OpMath<T>;
    const T* gp = g.data<T>();
    T* op = out.data<T>();
    const int64_t planes = Planes(p);
    const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, g.numel() / planes));
    ParallelFor(0, planes, grain, [&](int64_t b, int64_t e) {
      for (int64_t plane = b; plane < e; ++plane) {
        ForEachRow(p, plane, [&](int64_t dst, int64_t src) {
          if (src < 0) return;
          const T* gr = gp + dst;
          T* o = op + src;
          for (int64_t k = 0; k < w_out; ++k) {
            if (last[k] < 0) continue;
            o[last[k]] = static_cast<T>(static_cast<M>(o[last[k]]) + static_cast<M>(gr[k]));
          }
        });
      }
    });
  });
}

// The CPU kernels in the registry (Note [Kernel registry]); the entries below reach them.
const bool kRegistered = [] {
  kernels::RegisterKernel<kernels::PadForwardKernel>(DeviceType::kCPU, &PadCpu);
  kernels::RegisterKernel<kernels::PadBackwardKernel>(DeviceType::kCPU, &PadBackwardCpu);
  return true;
}();

}  // namespace

void PadRows(const Tensor& x, const Tensor& out, const PadPlan& p, const Scalar& fill) {
  kernels::CallKernel<kernels::PadForwardKernel>(out.device(), x, out, p, fill);
}

void PadRowsBackward(const Tensor& g, const Tensor& out, const PadPlan& p) {
  kernels::CallKernel<kernels::PadBackwardKernel>(out.device(), g, out, p);
}

}  // namespace oneflow
