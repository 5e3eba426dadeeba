// The reduce half of the engine. The input is split into kept ("outer") and reduced ("inner")
// dims, each coalesced. Three loops cover the cases that matter:
//  - inner contiguous (row reductions, full reductions): a flat loop per output, split across
//    threads for a single output;
//  - innermost kept dim contiguous (sum(dim=0), reductions over a middle dim): accumulate whole
//    input lines into a block of outputs (a single block: the threads split the lines);
//  - anything else: a walk per output, by contiguous runs when the innermost reduced dim is
//    contiguous (mean over dims (0, 2, 3) of NCHW), else element by element.
#pragma once
#include <algorithm>
#include <memory>
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
  // Reducers whose Step ignores the index may take a reduced range as contiguous runs of the
  // innermost reduced dim when that dim is contiguous (mean over (N, H*W) of an NCHW-like
  // tensor: runs of H*W), each run a flat loop (StepContig where the reducer has one) instead of
  // an index computation per element; argmax/argmin need the flat index.
  constexpr bool kRuns = !requires { R::kUsesIndex; };
  auto contig = [&](Acc acc, const T* p, int64_t b, int64_t e) {
    if constexpr (requires { r.StepContig(acc, p, b, e); }) {
      return r.StepContig(acc, p, b, e);  // lane-parallel (vectorised) accumulation
    } else {
      for (int64_t i = b; i < e; ++i) acc = r.Step(acc, static_cast<M>(p[i]), i);
      return acc;
    }
  };
  auto reduce_range = [&](int64_t base, int64_t b, int64_t e) {
    Acc acc = r.Init();
    if (g.ni == 1 && g.istride[0] == 1) {
      acc = contig(acc, ip + base, b, e);
    } else if (kRuns && g.ni > 1 && g.istride[g.ni - 1] == 1) {
      const int64_t run = g.isize[g.ni - 1];
      for (int64_t i = b; i < e;) {
        const int64_t j0 = i % run, j1 = std::min(run, j0 + (e - i));
        acc = contig(acc, ip + base + Unravel(i / run, g.ni - 1, g.isize, g.istride), j0, j1);
        i += j1 - j0;
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
    // index adds one contiguous input line to it (read once, in order, vectorised).
    constexpr int64_t kLine = 1024;
    const int64_t len = g.osize[g.no - 1], rest = g.outer / len, nt = GetNumThreads();
    const int64_t ostep = g.ostride_out[g.no - 1];
    // Lines i .. i+3, taken together: each accumulator is loaded and stored once per four lines
    // (once per line, the accumulator traffic, not the input, bounded sum(dim=0) at 0.8x PyTorch);
    // each output still sees its lines in order, so the results are unchanged.
    struct LineQuad { const T* l[4]; };
    auto quad = [&](const T* base, int64_t i) {
      LineQuad q;
      for (int k = 0; k < 4; ++k) q.l[k] = base + Unravel(i + k, g.ni, g.isize, g.istride);
      return q;
    };
    // Adds lines [i0, i1) of the n-output block at `base` into acc[0, n).
    auto add_lines = [&](const T* base, int64_t n, int64_t i0, int64_t i1, Acc* acc) {
      if constexpr (requires { R::kLineBlock; }) {
        // Sums of float-math types: kLineBlock lines at a time in float (vector width twice
        // double's), each block's partial sums carried into the double accumulators: the
        // error is that of a kLineBlock-term float sum, as in SumR::StepContig.
        using F = OpMath<T>;
        F part[kLine];
        for (int64_t k0 = i0; k0 < i1; k0 += R::kLineBlock) {
          for (int64_t j = 0; j < n; ++j) part[j] = F(0);
          const int64_t k1 = std::min<int64_t>(i1, k0 + R::kLineBlock);
          int64_t i = k0;
          for (; i + 4 <= k1; i += 4) {
            const LineQuad q = quad(base, i);
            for (int64_t j = 0; j < n; ++j)
              part[j] = (((part[j] + static_cast<F>(q.l[0][j])) + static_cast<F>(q.l[1][j])) +
                         static_cast<F>(q.l[2][j])) + static_cast<F>(q.l[3][j]);
          }
          for (; i < k1; ++i) {
            const T* line = base + Unravel(i, g.ni, g.isize, g.istride);
            for (int64_t j = 0; j < n; ++j) part[j] += static_cast<F>(line[j]);
          }
          for (int64_t j = 0; j < n; ++j) acc[j] += static_cast<Acc>(part[j]);
        }
      } else {
        int64_t i = i0;
        for (; i + 4 <= i1; i += 4) {
          const LineQuad q = quad(base, i);
          for (int64_t j = 0; j < n; ++j)
            acc[j] = r.Step(r.Step(r.Step(r.Step(acc[j], static_cast<M>(q.l[0][j]), i), static_cast<M>(q.l[1][j]), i + 1),
                                   static_cast<M>(q.l[2][j]), i + 2),
                            static_cast<M>(q.l[3][j]), i + 3);
        }
        for (; i < i1; ++i) {
          const T* line = base + Unravel(i, g.ni, g.isize, g.istride);
          for (int64_t j = 0; j < n; ++j) acc[j] = r.Step(acc[j], static_cast<M>(line[j]), i);
        }
      }
    };
    if (rest == 1 && len <= kLine && nt > 1 && g.inner >= 4 * nt && len * g.inner > kGrainSize) {
      // One block of outputs (sum(dim=0) of one matrix): the threads split the lines, each
      // adding a contiguous range of whole lines (sequential reads) into partial accumulators
      // of its own, combined in thread order after.
      std::unique_ptr<Acc[]> parts(new Acc[nt * len]);  // not vector<Acc>: Acc may be bool
      std::fill(parts.get(), parts.get() + nt * len, r.Init());
      std::vector<char> used(nt, 0);
      ParallelFor(0, g.inner, std::max<int64_t>(1, kGrainSize / len), [&](int64_t b, int64_t e) {
        const int t = omp_in_parallel() ? omp_get_thread_num() : 0;
        add_lines(ip, len, b, e, &parts[t * len]);
        used[t] = 1;
      });
      for (int64_t j = 0; j < len; ++j) {
        Acc acc = r.Init();
        for (int t = 0; t < nt; ++t) if (used[t]) acc = r.Combine(acc, parts[t * len + j]);
        op[j * ostep] = static_cast<O>(r.Finish(acc, count));
      }
      return;
    }
    // Otherwise tasks are (position in the other kept dims) x (block of the innermost one):
    // blocks of at most kLine accumulators; shorter (down to 64) when there would be fewer
    // blocks than threads.
    int64_t blk = kLine;
    if (rest * ((len + kLine - 1) / kLine) < nt) blk = std::max<int64_t>(64, ((len + nt - 1) / nt + 15) / 16 * 16);
    const int64_t nblk = (len + blk - 1) / blk;
    const int64_t work = std::min(len, blk) * g.inner;
    ParallelFor(0, rest * nblk, std::max<int64_t>(1, kGrainSize / work), [&](int64_t b, int64_t e) {
      Acc acc[kLine];
      for (int64_t t = b; t < e; ++t) {
        const int64_t o = t / nblk, j0 = (t % nblk) * blk, n = std::min(blk, len - j0);
        const T* base = ip + Unravel(o, g.no - 1, g.osize, g.ostride_in) + j0;
        O* dst = op + Unravel(o, g.no - 1, g.osize, g.ostride_out) + j0 * ostep;
        for (int64_t j = 0; j < n; ++j) acc[j] = r.Init();
        add_lines(base, n, 0, g.inner, acc);
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
