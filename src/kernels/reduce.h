// The reduce half of the engine. The input is split into kept ("outer") and reduced ("inner")
// dims, each coalesced. Three loops cover the cases that matter:
//  - inner contiguous (row reductions, full reductions): a flat loop per output, split across
//    threads for a single output;
//  - outer contiguous (column reductions such as sum(dim=0)): accumulate whole rows at a time;
//  - anything else: strided walk.
#pragma once
#include <vector>

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

inline int64_t Unravel(int64_t idx, int n, const int64_t* sizes, const int64_t* strides) {
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
  const bool column = !(g.ni == 1 && g.istride[0] == 1) && g.no == 1 && g.ostride_in[0] == 1;
  if (column && g.inner > 0) {
    // Outer contiguous: each thread owns a block of outputs and streams rows through it.
    ParallelFor(0, g.outer, 1024, [&](int64_t b, int64_t e) {
      std::vector<Acc> acc(e - b, r.Init());
      for (int64_t i = 0; i < g.inner; ++i) {
        const T* row = ip + Unravel(i, g.ni, g.isize, g.istride);
        for (int64_t j = b; j < e; ++j) acc[j - b] = r.Step(acc[j - b], static_cast<M>(row[j]), i);
      }
      for (int64_t j = b; j < e; ++j) op[j * g.ostride_out[0]] = static_cast<O>(r.Finish(acc[j - b], count));
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
