// Row-wise sorting and selection kernels; see Note [Sort keys] in sort.h.
#include "kernels/sort.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <numeric>

#include "kernels/sort_keys.h"
#include "ops/copy.h"
#include "ops/index_util.h"
#include "decl/empty.h"

namespace oneflow {

namespace {

// ---- radix sort ---------------------------------------------------------------------------

// Sorts (keys, pos) by key, stably, through the scratch arrays tk/tp; returns true when the
// result ended up in the scratch arrays. pos may be null (keys only).
template <typename K>
bool RadixSort(K* keys, uint32_t* pos, K* tk, uint32_t* tp, int64_t n) {
  constexpr int kPasses = sizeof(K);
  int64_t hist[kPasses][256] = {};
  for (int64_t i = 0; i < n; ++i) {
    K k = keys[i];
    for (int p = 0; p < kPasses; ++p) ++hist[p][(k >> (8 * p)) & 0xff];
  }
  bool swapped = false;
  const bool with_pos = pos != nullptr;
  K *sk = keys, *dk = tk;
  uint32_t *sp = pos, *dp = tp;
  for (int p = 0; p < kPasses; ++p) {
    int64_t* h = hist[p];
    if (h[(sk[0] >> (8 * p)) & 0xff] == n) continue;  // every key has this digit: no-op pass
    int64_t off[256], acc = 0;
    for (int b = 0; b < 256; ++b) {
      off[b] = acc;
      acc += h[b];
    }
    for (int64_t i = 0; i < n; ++i) {
      const int b = (sk[i] >> (8 * p)) & 0xff;
      const int64_t o = off[b]++;
      dk[o] = sk[i];
      if (with_pos) dp[o] = sp[i];
    }
    std::swap(sk, dk);
    std::swap(sp, dp);
    swapped = !swapped;
  }
  return swapped;
}

// The same over one long row with every thread: per pass, each thread counts the digits of its
// chunk, the per-(digit, thread) offsets keep the chunks in order (stable), then all scatter.
template <typename K>
bool ParallelRadixSort(K* keys, uint32_t* pos, K* tk, uint32_t* tp, int64_t n, int nt) {
  constexpr int kPasses = sizeof(K);
  std::vector<int64_t> hist(static_cast<size_t>(nt) * 256);
  const int64_t per = (n + nt - 1) / nt;
  K *sk = keys, *dk = tk;
  uint32_t *sp = pos, *dp = tp;
  const bool with_pos = pos != nullptr;
  bool swapped = false, skip = false;
#pragma omp parallel num_threads(nt)
  {
    const int t = omp_get_thread_num();
    const int64_t b = std::min(n, t * per), e = std::min(n, b + per);
    for (int p = 0; p < kPasses; ++p) {
      int64_t* h = &hist[static_cast<size_t>(t) * 256];
      std::fill(h, h + 256, 0);
      for (int64_t i = b; i < e; ++i) ++h[(sk[i] >> (8 * p)) & 0xff];
#pragma omp barrier
#pragma omp single
      {
        // Exclusive offsets in (digit, thread) order; a pass whose digit never changes is skipped.
        skip = false;
        int64_t acc = 0;
        for (int d = 0; d < 256; ++d) {
          int64_t total = 0;
          for (int u = 0; u < nt; ++u) {
            int64_t& c = hist[static_cast<size_t>(u) * 256 + d];
            const int64_t cnt = c;
            c = acc;
            acc += cnt;
            total += cnt;
          }
          if (total == n) skip = true;
        }
      }
      if (!skip) {
        for (int64_t i = b; i < e; ++i) {
          const int64_t o = h[(sk[i] >> (8 * p)) & 0xff]++;
          dk[o] = sk[i];
          if (with_pos) dp[o] = sp[i];
        }
      }
#pragma omp barrier
#pragma omp single
      {
        if (!skip) {
          std::swap(sk, dk);
          std::swap(sp, dp);
          swapped = !swapped;
        }
      }
    }
  }
  return swapped;
}

constexpr int64_t kRadixMin = 512;      // shorter rows: comparison sort
constexpr int64_t kParallelSort = 1 << 16;  // a single row this long uses every thread

// Sorts keys[0..n) with positions pos (0..n-1 on entry) by (key, position); the result is left
// in keys/pos. Scratch must hold n of each.
template <typename K>
void SortKeys(K* keys, uint32_t* pos, K* tk, uint32_t* tp, int64_t n, bool allow_threads) {
  if (n < kRadixMin) {
    if constexpr (sizeof(K) <= 4) {
      // One 64-bit compare per pair: the key above the position, so ties keep their order.
      uint64_t* c = reinterpret_cast<uint64_t*>(tk);  // caller sizes scratch for this
      for (int64_t i = 0; i < n; ++i) c[i] = (static_cast<uint64_t>(keys[i]) << 32) | (pos ? pos[i] : 0u);
      std::sort(c, c + n);
      for (int64_t i = 0; i < n; ++i) {
        keys[i] = static_cast<K>(c[i] >> 32);
        if (pos) pos[i] = static_cast<uint32_t>(c[i]);
      }
    } else {
      std::vector<std::pair<K, uint32_t>> c(n);
      for (int64_t i = 0; i < n; ++i) c[i] = {keys[i], pos ? pos[i] : 0u};
      std::sort(c.begin(), c.end());
      for (int64_t i = 0; i < n; ++i) {
        keys[i] = c[i].first;
        if (pos) pos[i] = c[i].second;
      }
    }
    return;
  }
  const int nt = GetNumThreads();
  const bool par = allow_threads && nt > 1 && n >= kParallelSort && !omp_in_parallel();
  const bool in_scratch = par ? ParallelRadixSort(keys, pos, tk, tp, n, nt) : RadixSort(keys, pos, tk, tp, n);
  if (in_scratch) {
    std::memcpy(keys, tk, n * sizeof(K));
    if (pos) std::memcpy(pos, tp, n * sizeof(uint32_t));
  }
}

// ---- row geometry -------------------------------------------------------------------------

// Rows of `in` along `dim` and of the outputs (values and indices share their contiguous shape).
struct Rows {
  Odometer<2> o;  // offsets: input, output
  int64_t n = 1, in_stride = 1, out_stride = 1;
};

Rows MakeRows(const Tensor& in, int dim, const DimVector& out_sizes) {
  Rows r;
  const DimVector ost = ContiguousStrides(out_sizes);
  r.o.nd = 0;
  for (int d = 0; d < in.dim(); ++d) {
    if (d == dim) continue;
    r.o.sizes[r.o.nd] = in.sizes()[d];
    r.o.strides[0][r.o.nd] = in.strides()[d];
    r.o.strides[1][r.o.nd] = ost[d];
    ++r.o.nd;
  }
  if (in.dim() > 0) {
    r.n = in.sizes()[dim];
    r.in_stride = in.strides()[dim];
    r.out_stride = ost[dim];
  }
  return r;
}

// Runs f(in_offset, out_offset, scratch) per row, rows split over threads; `scratch` is a
// per-thread buffer of `scratch_bytes`.
template <typename F>
void ForRows(const Rows& r, int64_t work_per_row, size_t scratch_bytes, const F& f) {
  const int64_t base[2] = {0, 0};
  const int64_t rows = r.o.count();
  ParallelFor(0, rows, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, work_per_row)),
              [&](int64_t b, int64_t e) {
                std::unique_ptr<char[]> scratch(new char[scratch_bytes]);  // uninitialised
                Odometer<2> it = r.o;
                it.Seek(b, base);
                for (int64_t i = b; i < e; ++i) {
                  f(it.off[0], it.off[1], scratch.get(), rows == 1);
                  if (i + 1 < e) it.Next();
                }
              });
}

// Scratch layout for sorting a row of n: keys, positions, and their radix copies (the
// comparison path reuses the key copy as n 64-bit pairs, hence the max).
inline size_t Align8(size_t b) { return (b + 7) & ~size_t(7); }

template <typename K>
size_t SortScratch(int64_t n) {
  return n * std::max(sizeof(K), sizeof(uint64_t)) + Align8(n * sizeof(K)) + 2 * Align8(n * sizeof(uint32_t));
}

template <typename K>
struct Scratch {
  K *keys, *tk;
  uint32_t *pos, *tp;
  Scratch(char* s, int64_t n) {
    tk = reinterpret_cast<K*>(s);  // the widest first; every region starts 8-byte aligned
    keys = reinterpret_cast<K*>(s + n * std::max(sizeof(K), sizeof(uint64_t)));
    pos = reinterpret_cast<uint32_t*>(reinterpret_cast<char*>(keys) + Align8(n * sizeof(K)));
    tp = reinterpret_cast<uint32_t*>(reinterpret_cast<char*>(pos) + Align8(n * sizeof(uint32_t)));
  }
};

template <typename T>
void SortTyped(const Tensor& in, int dim, bool descending, const Tensor& values, const Tensor& indices) {
  using K = KeyOf<T>;
  const DimVector& osz = values.defined() ? values.sizes() : indices.sizes();
  Rows r = MakeRows(in, dim, osz);
  const int64_t n = r.n;
  const T* ip = in.data<T>();
  T* vp = values.defined() ? values.data<T>() : nullptr;
  int64_t* xp = indices.defined() ? indices.data<int64_t>() : nullptr;
  ForRows(r, n * 8, SortScratch<K>(n), [&](int64_t io, int64_t oo, char* s, bool single) {
    Scratch<K> sc(s, n);
    const T* row = ip + io;
    for (int64_t i = 0; i < n; ++i) {
      const K k = ToKey<T>(row[i * r.in_stride]);
      sc.keys[i] = descending ? static_cast<K>(~k) : k;
      sc.pos[i] = static_cast<uint32_t>(i);
    }
    SortKeys<K>(sc.keys, sc.pos, sc.tk, sc.tp, n, single);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t p = sc.pos[i];
      if (vp) vp[oo + i * r.out_stride] = row[p * r.in_stride];
      if (xp) xp[oo + i * r.out_stride] = p;
    }
  });
}

// ---- top-k --------------------------------------------------------------------------------

// A candidate: bigger is better (key, then the smaller position).
template <typename K>
struct Cand {
  K key;
  uint32_t inv_pos;  // ~position
  bool operator<(const Cand& o) const { return key != o.key ? key < o.key : inv_pos < o.inv_pos; }
  bool operator>(const Cand& o) const { return o < *this; }
};

// The best k of row[b..e) (min-heap of size k), appended to `out` (unordered).
template <typename T>
void TopkRange(const T* row, int64_t stride, int64_t b, int64_t e, int64_t k, bool largest,
               std::vector<Cand<KeyOf<T>>>& out) {
  using K = KeyOf<T>;
  using C = Cand<K>;
  std::vector<C> heap;
  heap.reserve(k);
  auto cand = [&](int64_t i) {
    const K key = ToKey<T>(row[i * stride]);
    return C{largest ? key : static_cast<K>(~key), ~static_cast<uint32_t>(i)};
  };
  int64_t i = b;
  for (; i < e && static_cast<int64_t>(heap.size()) < k; ++i) heap.push_back(cand(i));
  std::make_heap(heap.begin(), heap.end(), std::greater<C>());
  if (!heap.empty()) {
    // Blocks of keys (a vectorisable transform and max); a block whose best key does not beat
    // the heap's worst is skipped whole -- nearly every block of a long row once the heap holds
    // large values. Later positions never win a tie, so "beat" means a strictly larger key.
    constexpr int64_t kBlock = 256;
    K keys[kBlock];
    while (i < e) {
      const int64_t m = std::min(kBlock, e - i);
      K best = 0;
      for (int64_t j = 0; j < m; ++j) {
        const K key = ToKey<T>(row[(i + j) * stride]);
        keys[j] = largest ? key : static_cast<K>(~key);
        best = keys[j] > best ? keys[j] : best;
      }
      for (int64_t j = 0; best > heap.front().key && j < m; ++j) {
        if (keys[j] <= heap.front().key) continue;
        std::pop_heap(heap.begin(), heap.end(), std::greater<C>());
        heap.back() = C{keys[j], ~static_cast<uint32_t>(i + j)};
        std::push_heap(heap.begin(), heap.end(), std::greater<C>());
      }
      i += m;
    }
  }
  out.insert(out.end(), heap.begin(), heap.end());
}

template <typename T>
void TopkTyped(const Tensor& in, int dim, int64_t k, bool largest, const Tensor& values, const Tensor& indices) {
  using K = KeyOf<T>;
  using C = Cand<K>;
  Rows r = MakeRows(in, dim, values.sizes());
  const int64_t n = r.n;
  const T* ip = in.data<T>();
  T* vp = values.data<T>();
  int64_t* xp = indices.data<int64_t>();
  const bool big_k = k * 16 > n;  // then a full sort of the row is cheaper than a heap
  ForRows(r, n * 2, big_k ? SortScratch<K>(n) : 0, [&](int64_t io, int64_t oo, char* s, bool single) {
    const T* row = ip + io;
    std::vector<C> best;
    if (big_k) {
      Scratch<K> sc(s, n);
      for (int64_t i = 0; i < n; ++i) {
        const K key = ToKey<T>(row[i * r.in_stride]);
        sc.keys[i] = largest ? static_cast<K>(~key) : key;
        sc.pos[i] = static_cast<uint32_t>(i);
      }
      SortKeys<K>(sc.keys, sc.pos, sc.tk, sc.tp, n, single);
      for (int64_t i = 0; i < k; ++i) {
        vp[oo + i * r.out_stride] = row[sc.pos[i] * r.in_stride];
        xp[oo + i * r.out_stride] = sc.pos[i];
      }
      return;
    }
    const int nt = GetNumThreads();
    if (single && nt > 1 && n >= kParallelSort && !omp_in_parallel()) {
      // One long row: every thread keeps the best k of its chunk, then the candidates merge.
      std::vector<std::vector<C>> parts(nt);
      const int64_t per = (n + nt - 1) / nt;
#pragma omp parallel for num_threads(nt) schedule(static, 1)
      for (int t = 0; t < nt; ++t)
        TopkRange<T>(row, r.in_stride, std::min(n, t * per), std::min(n, (t + 1) * per), k, largest, parts[t]);
      for (auto& p : parts) best.insert(best.end(), p.begin(), p.end());
    } else {
      TopkRange<T>(row, r.in_stride, 0, n, k, largest, best);
    }
    std::partial_sort(best.begin(), best.begin() + k, best.end(), std::greater<C>());
    for (int64_t i = 0; i < k; ++i) {
      const int64_t p = ~best[i].inv_pos;
      vp[oo + i * r.out_stride] = row[p * r.in_stride];
      xp[oo + i * r.out_stride] = p;
    }
  });
}

// ---- selection ----------------------------------------------------------------------------

template <typename T>
void SelectTyped(const Tensor& in, int dim, SelectKind kind, int64_t k, const Tensor& values, const Tensor& indices) {
  using K = KeyOf<T>;
  Rows r = MakeRows(in, dim, values.sizes());
  const int64_t n = r.n;
  const T* ip = in.data<T>();
  T* vp = values.data<T>();
  int64_t* xp = indices.data<int64_t>();
  ForRows(r, n * 4, SortScratch<K>(n), [&](int64_t io, int64_t oo, char* s, bool single) {
    Scratch<K> sc(s, n);
    const T* row = ip + io;
    uint64_t* c = reinterpret_cast<uint64_t*>(sc.tk);  // (key, position) packed when K fits
    int64_t nans = 0, first_nan = -1;
    for (int64_t i = 0; i < n; ++i) {
      sc.keys[i] = ToKey<T>(row[i * r.in_stride]);
      sc.pos[i] = static_cast<uint32_t>(i);
      if (IsNanKey<T>(sc.keys[i])) {
        if (first_nan < 0) first_nan = i;
        ++nans;
      }
    }
    int64_t pick = -1;
    if (kind == SelectKind::kMedian && nans > 0) {
      pick = first_nan;
    } else if (kind == SelectKind::kMode) {
      SortKeys<K>(sc.keys, sc.pos, sc.tk, sc.tp, n, single);
      // The longest run of equal keys (the first, i.e. the smallest value, among ties), at its
      // last position in the input (a run is in position order: the sort is stable).
      int64_t best = 0;
      for (int64_t s0 = 0, e0 = 0; s0 < n; s0 = e0) {
        e0 = s0 + 1;
        while (e0 < n && sc.keys[e0] == sc.keys[s0]) ++e0;
        if (e0 - s0 > best) {
          best = e0 - s0;
          pick = sc.pos[e0 - 1];
        }
      }
    } else {
      int64_t rank = k;
      if (kind == SelectKind::kMedian) rank = (n - 1) / 2;
      if (kind == SelectKind::kNanMedian) rank = nans == n ? 0 : (n - nans - 1) / 2;
      if constexpr (sizeof(K) <= 4) {
        for (int64_t i = 0; i < n; ++i) c[i] = (static_cast<uint64_t>(sc.keys[i]) << 32) | sc.pos[i];
        std::nth_element(c, c + rank, c + n);
        pick = static_cast<uint32_t>(c[rank]);
      } else {
        std::vector<std::pair<K, uint32_t>> pr(n);
        for (int64_t i = 0; i < n; ++i) pr[i] = {sc.keys[i], sc.pos[i]};
        std::nth_element(pr.begin(), pr.begin() + rank, pr.end());
        pick = pr[rank].second;
      }
    }
    vp[oo] = row[pick * r.in_stride];
    xp[oo] = pick;
  });
}

}  // namespace


namespace {

void SortCpu(const Tensor& in, int dim, bool descending, const Tensor& values, const Tensor& indices) {
  OF_CHECK(SizeAt(in, dim) < (int64_t(1) << 32)) << "sort: rows longer than 2^32 elements are not supported";
  DispatchAll(in.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    SortTyped<T>(in, dim, descending, values, indices);
  });
}

void TopkCpu(const Tensor& in, int dim, int64_t k, bool largest, const Tensor& values, const Tensor& indices) {
  DispatchAll(in.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    TopkTyped<T>(in, dim, k, largest, values, indices);
  });
}

void SelectCpu(const Tensor& in, int dim, SelectKind kind, int64_t k, const Tensor& values, const Tensor& indices) {
  DispatchAll(in.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    SelectTyped<T>(in, dim, kind, k, values, indices);
  });
}

// The CPU kernels in the registry (Note [Kernel registry]); the entries below reach them.
const bool kRegistered = [] {
  kernels::RegisterKernel<kernels::SortKernel>(DeviceType::kCPU, &SortCpu);
  kernels::RegisterKernel<kernels::TopkKernel>(DeviceType::kCPU, &TopkCpu);
  kernels::RegisterKernel<kernels::SelectKernel>(DeviceType::kCPU, &SelectCpu);
  return true;
}();

}  // namespace

void SortKernel(const Tensor& in, int dim, bool descending, const Tensor& values, const Tensor& indices) {
  if (in.numel() == 0) return;
  kernels::CallKernel<kernels::SortKernel>(in.device(), in, dim, descending, values, indices);
}

void TopkKernel(const Tensor& in, int dim, int64_t k, bool largest, const Tensor& values, const Tensor& indices) {
  if (values.numel() == 0) return;
  kernels::CallKernel<kernels::TopkKernel>(in.device(), in, dim, k, largest, values, indices);
}

void SelectKernel(const Tensor& in, int dim, SelectKind kind, int64_t k, const Tensor& values,
                  const Tensor& indices) {
  if (values.numel() == 0) return;
  kernels::CallKernel<kernels::SelectKernel>(in.device(), in, dim, kind, k, values, indices);
}

// ---- unique -------------------------------------------------------------------------------

namespace {

template <typename T>
UniqueResult UniqueTyped(const Tensor& in, bool consecutive, bool want_inverse, bool want_counts) {
  using K = KeyOf<T>;
  const int64_t n = in.numel();
  const T* x = in.data<T>();
  // Group starts over an order of the elements: sorted (with positions when the inverse is
  // needed) or the input order for unique_consecutive.
  std::unique_ptr<char[]> buf(new char[consecutive ? 1 : SortScratch<K>(n)]);
  Scratch<K> sc(buf.get(), consecutive ? 0 : n);
  const bool with_pos = want_inverse && !consecutive;
  if (!consecutive) {
    ParallelFor(0, n, kGrainSize, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        sc.keys[i] = ToKey<T>(x[i]);
        sc.pos[i] = static_cast<uint32_t>(i);
      }
    });
    SortKeys<K>(sc.keys, with_pos ? sc.pos : nullptr, sc.tk, sc.tp, n, true);
  }
  // The value at sorted position i: read back through the position, or from the key.
  auto key_at = [&](int64_t i) { return consecutive ? ToKey<T>(x[i]) : sc.keys[i]; };
  auto starts = [&](int64_t i) {
    if (i == 0) return true;
    const K a = key_at(i - 1), b = key_at(i);
    return a != b || IsNanKey<T>(b);  // NaN != NaN
  };
  std::vector<int64_t> chunk_groups(GetNumThreads() + 1, 0);
  ParallelChunks(n, kGrainSize, [&](int c, int64_t b, int64_t e) {
    int64_t g = 0;
    for (int64_t i = b; i < e; ++i) g += starts(i);
    chunk_groups[c + 1] = g;
  });
  std::partial_sum(chunk_groups.begin(), chunk_groups.end(), chunk_groups.begin());
  const int64_t groups = chunk_groups.back();
  UniqueResult r;
  r.values = Empty(DimVector{groups}, in.dtype(), in.device());
  if (want_inverse) r.inverse = Empty(in.sizes(), DType::kInt64, in.device());
  if (want_counts) r.counts = Empty(DimVector{groups}, DType::kInt64, in.device());
  T* v = r.values.data<T>();
  int64_t* inv = want_inverse ? r.inverse.data<int64_t>() : nullptr;
  int64_t* cnt = want_counts ? r.counts.data<int64_t>() : nullptr;
  // Group starts per group (for counts): written at the start, differenced after.
  std::vector<int64_t> first(want_counts ? groups + 1 : 0);
  ParallelChunks(n, kGrainSize, [&](int c, int64_t b, int64_t e) {
    int64_t g = chunk_groups[c] - 1;
    for (int64_t i = b; i < e; ++i) {
      if (starts(i)) {
        ++g;
        if (consecutive) {
          v[g] = x[i];
        } else if (with_pos) {
          v[g] = x[sc.pos[i]];
        } else {
          // Without positions the value comes from its key (exact but for NaN payloads and the
          // sign of zero, which compare equal).
          const K k = sc.keys[i];
          constexpr K kSign = K(1) << (sizeof(K) * 8 - 1);
          K bits;
          if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, uint8_t>) bits = k;
          else if constexpr (std::is_integral_v<T>) bits = k ^ kSign;
          else bits = (k & kSign) ? static_cast<K>(k & ~kSign) : static_cast<K>(~k);
          std::memcpy(static_cast<void*>(&v[g]), &bits, sizeof(T));
        }
        if (want_counts) first[g] = i;
      }
      if (inv) inv[consecutive ? i : sc.pos[i]] = g;
    }
  });
  if (want_counts) {
    first[groups] = n;
    for (int64_t g = 0; g < groups; ++g) cnt[g] = first[g + 1] - first[g];
  }
  return r;
}

}  // namespace

UniqueResult UniqueFlat(const Tensor& in, bool consecutive, bool want_inverse, bool want_counts) {
  return DispatchAll(in.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    return UniqueTyped<T>(in, consecutive, want_inverse, want_counts);
  });
}

std::vector<int64_t> SortRowsLex(const Tensor& rows) {
  const int64_t n = rows.sizes()[0], m = rows.numel() / std::max<int64_t>(n, 1);
  std::vector<int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  DispatchAll(rows.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    const T* p = rows.data<T>();
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      for (int64_t j = 0; j < m; ++j) {
        const auto ka = ToKey<T>(p[a * m + j]), kb = ToKey<T>(p[b * m + j]);
        if (ka != kb) return ka < kb;
      }
      return false;
    });
  });
  return order;
}

bool RowsEqual(const Tensor& rows, int64_t a, int64_t b) {
  const int64_t n = rows.sizes()[0], m = rows.numel() / std::max<int64_t>(n, 1);
  return DispatchAll(rows.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    using M = OpMath<T>;
    const T* p = rows.data<T>();
    for (int64_t j = 0; j < m; ++j)
      if (!(static_cast<M>(p[a * m + j]) == static_cast<M>(p[b * m + j]))) return false;
    return true;
  });
}

}  // namespace oneflow
