// The reduce half of the engine. The input is split into kept ("outer") and reduced ("inner")
// dims, each coalesced. Three loops cover the cases that matter:
//  - inner contiguous (row reductions, full reductions): a flat loop per output, split across
//    threads for a single output;
//  - innermost kept dim contiguous (sum(dim=0), reductions over a middle dim): accumulate whole
//    input lines into a block of outputs;
//  - anything else: strided walk.
#pragma once
#include <vector>

#include "core/hd.h"
#include "core/parallel.h"
#include "core/tensor.h"

namespace oneflow {

struct ReduceGeom {
  int no = 0, ni = 0;  // coalesced outer / inner dims
  int64_t osize[kMaxDims], ostride_in[kMaxDims], ostride_out[kMaxDims];
  int64_t isize[kMaxDims], istride[kMaxDims];
  int64_t outer = 1, inner = 1;
};
// `in` and `out` (out viewed with keepdim shape) share ndim; mask[d] marks reduced dims.
ReduceGeom MakeReduceGeom(const Tensor& in, const Tensor& out_keepdim, const bool* mask);

// Note [CUDA reductions]: Reduce<R> (ops/reduce_ops.cpp) hands a CUDA input to the runner in
// CudaReduceSlot<R<bool>>::run (the key names the reducer; the runner dispatches the dtypes),
// filled by src/cuda/reduce.cu when the CUDA module loads; the kernel calls the same reducers
// (kernels/reducers.h) as RunReduce. An empty slot is a NotImplementedError naming the op.
template <typename Key>
struct CudaReduceSlot {
  static inline void (*run)(const Tensor& in, const Tensor& out_keepdim, const ReduceGeom& g) = nullptr;
};

// (OF_HD: the CUDA reduce kernel walks the same geometry.)
OF_INLINE_HD int64_t Unravel(int64_t idx, int n, const int64_t* sizes, const int64_t* strides) {
  int64_t off = 0;
  for (int d = n - 1; d >= 0; --d) {
    off += (idx % sizes[d]) * strides[d];
    idx /= sizes[d];
  }
  return off;
}

// R: reducer with Acc Init(), Acc Step(Acc, M x, int64 i), Acc Combine(Acc, Acc),
// O Finish(Acc, int64 count). T: input type, O: output type.
template <typename T, typename O, typename R>
void RunReduce(const Tensor& in, const Tensor& out, const ReduceGeom& g, const R& r) {
  using M = OpMath<T>;
  using Acc = decltype(r.Init());
  const T* ip = in.data<T>();
  O* op = out.data<O>();
  const int64_t count = g.inner;
  auto reduce_range = [&](int64_t base, int64_t b, int64_t e) {
    Acc acc = r.Init();
    if (g.ni == 1 && g.istride[0] == 1) {
      const T* p = ip + base;
      if constexpr (requires { r.StepContig(acc, p, b, e); }) {
        acc = r.StepContig(acc, p, b, e);  // lane-parallel (vectorised) accumulation
      } else {
        for (int64_t i = b; i < e; ++i) acc = r.Step(acc, static_cast<M>(p[i]), i);
      }
    } else {
      for (int64_t i = b; i < e; ++i)
        acc = r.Step(acc, static_cast<M>(ip[base + Unravel(i, g.ni, g.isize, g.istride)]), i);
    }
    return acc;
  };
  if (g.outer == 1) {
    // One output: split the reduced range over threads, combine partials in order.
    const int nt = GetNumThreads();
    std::vector<Acc> parts(nt, r.Init());
    std::vector<char> used(nt, 0);
    ParallelFor(0, count, kGrainSize, [&](int64_t b, int64_t e) {
      int t = omp_in_parallel() ? omp_get_thread_num() : 0;
      parts[t] = reduce_range(0, b, e);
      used[t] = 1;
    });
    Acc acc = r.Init();
    for (int t = 0; t < nt; ++t) if (used[t]) acc = r.Combine(acc, parts[t]);
    *op = static_cast<O>(r.Finish(acc, count));
    return;
  }
  if (g.outer == 0) return;  // no outputs (a zero-size kept dim)
  const bool lines = !(g.ni == 1 && g.istride[0] == 1) && g.no >= 1 && g.ostride_in[g.no - 1] == 1;
  if (lines && g.inner > 0) {
    // The innermost kept dim is contiguous in the input (sum(dim=0), a reduction over a middle
    // dim): a block of outputs along that dim is a block of accumulators, and every reduced
    // index adds one contiguous input line to it (read once, in order, vectorised). Tasks are
    // (position in the other kept dims) x (block of the innermost one).
    // Blocks of at most kLine accumulators; shorter (down to 64) when there would be fewer
    // blocks than threads (sum(dim=0) of one matrix is a single line of outputs).
    constexpr int64_t kLine = 1024;
    const int64_t len = g.osize[g.no - 1], rest = g.outer / len, nt = GetNumThreads();
    int64_t blk = kLine;
    if (rest * ((len + kLine - 1) / kLine) < nt) blk = std::max<int64_t>(64, ((len + nt - 1) / nt + 15) / 16 * 16);
    const int64_t nblk = (len + blk - 1) / blk, ostep = g.ostride_out[g.no - 1];
    const int64_t work = std::min(len, blk) * g.inner;
    ParallelFor(0, rest * nblk, std::max<int64_t>(1, kGrainSize / work), [&](int64_t b, int64_t e) {
      Acc acc[kLine];
      for (int64_t t = b; t < e; ++t) {
        const int64_t o = t / nblk, j0 = (t % nblk) * blk, n = std::min(blk, len - j0);
        const T* base = ip + Unravel(o, g.no - 1, g.osize, g.ostride_in) + j0;
        O* dst = op + Unravel(o, g.no - 1, g.osize, g.ostride_out) + j0 * ostep;
        for (int64_t j = 0; j < n; ++j) acc[j] = r.Init();
        for (int64_t i = 0; i < g.inner; ++i) {
          const T* line = base + Unravel(i, g.ni, g.isize, g.istride);
          for (int64_t j = 0; j < n; ++j) acc[j] = r.Step(acc[j], static_cast<M>(line[j]), i);
        }
        for (int64_t j = 0; j < n; ++j) dst[j * ostep] = static_cast<O>(r.Finish(acc[j], count));
      }
    });
    return;
  }
  ParallelFor(0, g.outer, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, g.inner)),
              [&](int64_t b, int64_t e) {
                for (int64_t o = b; o < e; ++o) {
                  int64_t ib = Unravel(o, g.no, g.osize, g.ostride_in);
                  int64_t ob = Unravel(o, g.no, g.osize, g.ostride_out);
                  op[ob] = static_cast<O>(r.Finish(reduce_range(ib, 0, count), count));
                }
              });
}

}  // namespace oneflow
