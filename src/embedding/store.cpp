// The key -> row store of flow.one_embedding: Note [Embedding store] in store.h.
#include "embedding/store.h"

#include "embedding/disk_index.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>

#include "core/error.h"
#include "core/parallel.h"
#include "core/philox.h"

namespace oneflow {
namespace embedding {
namespace {

// splitmix64's finaliser: spreads consecutive ids over the slots.
inline uint64_t Mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Uniform in (0, 1) from a 32-bit word (never 0: log() of it is finite).
inline double Unit(uint32_t w) { return (static_cast<double>(w) + 0.5) * (1.0 / 4294967296.0); }

// The random words of block `block` of key `key`'s row, for draws of `kind`, attempt `round`: a
// pure function of (seed, key, kind, block, round), so a key's initial row does not depend on
// which keys came before it or on the number of threads. (The kind keeps the blocks of
// differently drawn columns apart: a uniform column uses block j/4, a normal one block j/2.)
inline void Words(uint64_t seed, int64_t key, uint32_t kind, int64_t block, uint32_t round, uint32_t w[4]) {
  const uint64_t k = static_cast<uint64_t>(key);
  w[0] = static_cast<uint32_t>(block);
  w[1] = (kind << 24) | round;
  w[2] = static_cast<uint32_t>(k);
  w[3] = static_cast<uint32_t>(k >> 32);
  Philox4x32::Block(w, static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
}

// Elements [j0, j1) of a row (global element indices j) drawn by `init`: one Philox block gives
// four uniforms or two normals (Box-Muller's pair).
void FillColumn(const Initializer& init, uint64_t seed, int64_t key, int64_t j0, int64_t j1, float* v) {
  uint32_t w[4];
  switch (init.kind) {
    case Initializer::kConstant:
      std::fill(v + j0, v + j1, static_cast<float>(init.a));
      return;
    case Initializer::kUniform:
      for (int64_t j = j0; j < j1; ++j) {
        if (j == j0 || (j & 3) == 0) Words(seed, key, Initializer::kUniform, j >> 2, 0, w);
        v[j] = static_cast<float>(init.a + (init.b - init.a) * Unit(w[j & 3]));
      }
      return;
    case Initializer::kNormal: {
      double z[2] = {0, 0};
      for (int64_t j = j0; j < j1; ++j) {
        if (j == j0 || (j & 1) == 0) {
          Words(seed, key, Initializer::kNormal, j >> 1, 0, w);
          const double r = std::sqrt(-2.0 * std::log(Unit(w[0]))), t = 6.283185307179586 * Unit(w[1]);
          z[0] = r * std::cos(t);
          z[1] = r * std::sin(t);
        }
        v[j] = static_cast<float>(init.a + init.b * z[j & 1]);
      }
      return;
    }
    case Initializer::kTruncNormal:
      // rejection, per element: a draw outside [c, d] is redrawn (make_trunc_normal_initializer
      // checks that the interval has mass; the cap keeps a pathological one finite)
      for (int64_t j = j0; j < j1; ++j) {
        double out = std::min(std::max(init.a, init.c), init.d);
        for (uint32_t round = 0; round < 1000; ++round) {
          Words(seed, key, Initializer::kTruncNormal, j, round, w);
          const double x = init.a + init.b * std::sqrt(-2.0 * std::log(Unit(w[0]))) *
                                        std::cos(6.283185307179586 * Unit(w[1]));
          if (x >= init.c && x <= init.d) {
            out = x;
            break;
          }
        }
        v[j] = static_cast<float>(out);
      }
      return;
  }
}

}  // namespace

Store::Store(std::vector<int64_t> column_dims, int64_t storage_dim,
             std::vector<std::vector<Initializer>> tables, uint64_t seed, int64_t capacity_hint,
             const std::string& rows_file, int64_t cache_budget)
    : column_dims_(std::move(column_dims)), storage_dim_(storage_dim), tables_(std::move(tables)),
      seed_(seed) {
  OpScope scope("one_embedding");
  embedding_dim_ = 0;
  for (int64_t d : column_dims_) {
    OF_CHECK_VALUE(d > 0) << "every column dim must be positive, got " << d;
    embedding_dim_ += d;
  }
  OF_CHECK_VALUE(!column_dims_.empty()) << "the embedding has no column";
  OF_CHECK_VALUE(storage_dim_ >= embedding_dim_)
      << "storage_dim (" << storage_dim_ << ") is smaller than embedding_dim ("
      << embedding_dim_ << ")";
  OF_CHECK_VALUE(!tables_.empty()) << "no table";
  for (const auto& t : tables_)
    OF_CHECK_VALUE(t.size() == column_dims_.size())
        << "a table has " << t.size() << " column initializers for "
        << column_dims_.size() << " columns";
  // reserve only a bounded part of the hint: capacities of recommender scripts are counts of
  // the whole vocabulary, most of which a run may never see
  const int64_t reserve = std::min<int64_t>(std::max<int64_t>(capacity_hint, 0), int64_t(1) << 20);
  if (!rows_file.empty()) {  // Note [Tables on disk]
    files_ = rows_file;
    values_.OpenFile(rows_file);
    keys_.OpenFile(rows_file + ".keys");
    state_ready_.OpenFile(rows_file + ".state");
    if (cache_budget > 0) {  // half each (Note [Row cache])
      index_ = std::make_unique<DiskIndex>(rows_file + ".index", static_cast<size_t>(cache_budget - cache_budget / 2));
      row_cache_budget_ = cache_budget / 2;
    }
  }
  Rehash(index_ ? 16 : std::max<int64_t>(16, 2 * reserve));
}

int64_t Store::index_memory_bytes() const {
  return index_ ? static_cast<int64_t>(index_->memory_bytes()) : slots_.size() * static_cast<int64_t>(sizeof(Slot));
}

int64_t Store::index_peak_bytes() const {
  return index_ ? static_cast<int64_t>(index_->peak_memory_bytes()) : index_memory_bytes();
}

int64_t Store::cache_resident_bytes() const {
  const size_t n = values_.ResidentBytes() + keys_.ResidentBytes() + state_ready_.ResidentBytes() +
                   (index_ ? index_->ResidentBytes() : 0);
  return static_cast<int64_t>(n);
}

void Store::EvictCache() const {
  std::lock_guard<std::mutex> lock(cache_mu_);
  EvictLocked();
}

void Store::EvictLocked() const {
  values_.Evict();
  keys_.Evict();
  state_ready_.Evict();
  if (index_) index_->Evict();
  resident_bound_ = 0;
  ++evictions_;
}

namespace {
// the part of the budget an eviction keeps resident (Note [Row cache])
constexpr double kCacheKeep = 0.5;

void Stamp(std::vector<uint32_t>& use, int64_t begin, int64_t end, int64_t page, uint32_t clock) {
  const size_t last = static_cast<size_t>((end - 1) / page);
  if (use.size() <= last) use.resize(std::max(last + 1, 2 * use.size()), 0);
  for (size_t p = static_cast<size_t>(begin / page); p <= last; ++p) use[p] = clock;
}
}  // namespace

void Store::Touched(const std::vector<int64_t>& rows, int64_t found, int64_t appended) const {
  if (row_cache_budget_ <= 0) return;
  std::lock_guard<std::mutex> lock(cache_mu_);
  constexpr int64_t kPageBytes = 4096;
  const int64_t row_bytes = storage_dim_ * static_cast<int64_t>(sizeof(float));
  ++clock_;
  for (int64_t r : rows) {
    if (r < 0) continue;
    Stamp(row_page_use_, r * row_bytes, (r + 1) * row_bytes, kPageBytes, clock_);
    Stamp(flag_page_use_, r, r + 1, kPageBytes, clock_);
  }
  const int64_t runs = index_ ? index_->num_runs() : 0;
  // a found row: the pages it spans, its key's and flag's pages, a page of each run its lookup
  // read; appended rows: their bytes (sequential), plus a partial page of each file
  const int64_t per_found = ((row_bytes + kPageBytes - 1) / kPageBytes + 1 + 2 + runs) * kPageBytes;
  const int64_t per_new = row_bytes + 9 + runs * kPageBytes;
  const double bound = static_cast<double>(resident_bound_) + static_cast<double>(found) * per_found +
                       static_cast<double>(appended) * per_new + 3.0 * kPageBytes;
  if (bound <= static_cast<double>(row_cache_budget_)) {
    resident_bound_ = static_cast<int64_t>(bound);
    return;
  }
  const int64_t resident = cache_resident_bytes();
  if (resident > row_cache_budget_) EvictLeastRecentLocked();
  else resident_bound_ = resident;
}

void Store::EvictLeastRecentLocked() const {
  keys_.Evict();
  if (index_) index_->Evict();
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  // the resident pages of the rows (file 0) and flags (file 1) files: (last use, file, page)
  struct Page {
    uint32_t use;
    uint32_t file;
    size_t index;
  };
  std::vector<Page> resident;
  const std::vector<uint32_t>* uses[2] = {&row_page_use_, &flag_page_use_};
  const std::vector<unsigned char> in[2] = {values_.ResidentPages(), state_ready_.ResidentPages()};
  for (uint32_t f = 0; f < 2; ++f)
    for (size_t p = 0; p < in[f].size(); ++p)
      if (in[f][p] & 1) resident.push_back(Page{p < uses[f]->size() ? (*uses[f])[p] : 0u, f, p});
  const size_t keep = static_cast<size_t>(kCacheKeep * static_cast<double>(row_cache_budget_)) / page;
  const size_t kept = std::min(keep, resident.size());
  if (resident.size() > keep) {
    const size_t drop = resident.size() - keep;
    std::nth_element(resident.begin(), resident.begin() + drop, resident.end(),
                     [](const Page& a, const Page& b) { return a.use < b.use; });
    resident.resize(drop);
    std::sort(resident.begin(), resident.end(),
              [](const Page& a, const Page& b) { return a.file != b.file ? a.file < b.file : a.index < b.index; });
    // the dirty pages written back first, each file at once; then adjacent pages dropped
    // together: one drop per run of pages
    if (resident.front().file == 0) values_.WriteBack();
    if (resident.back().file == 1) state_ready_.WriteBack();
    for (size_t i = 0; i < resident.size();) {
      size_t j = i + 1;
      while (j < resident.size() && resident[j].file == resident[i].file &&
             resident[j].index == resident[j - 1].index + 1)
        ++j;
      if (resident[i].file == 0) values_.DropPages(resident[i].index, j - i);
      else state_ready_.DropPages(resident[i].index, j - i);
      i = j;
    }
  }
  resident_bound_ = static_cast<int64_t>(kept * page);
  ++evictions_;
}

void Store::Rehash(int64_t min_slots) {
  uint64_t slots = 16;
  while (slots < static_cast<uint64_t>(min_slots)) slots <<= 1;
  // (in memory, for the SSD store too: Note [Tables on disk] says why the index is not a file)
  MappedArray<Slot> fresh;  // zero bytes: every slot empty
  fresh.Grow(static_cast<int64_t>(slots));
  const uint64_t mask = slots - 1;
  // Entries move in the order of the old slots: the slot of a key is the low bits of its hash,
  // so entry s of the old array lands near s or s + old size of the new one, and both arrays
  // are walked about sequentially (cache-friendly).
  Slot* to = fresh.data();
  auto place = [&](int64_t key, int64_t row1) {
    uint64_t s = Mix(static_cast<uint64_t>(key)) & mask;
    while (to[s].row1 != 0) s = (s + 1) & mask;
    to[s] = Slot{key, row1};
  };
  const Slot* from = slots_.data();
  for (int64_t s = 0; s < slots_.size(); ++s)
    if (from[s].row1 != 0) place(from[s].key, from[s].row1);
  slots_ = std::move(fresh);
  mask_ = mask;
}

int64_t Store::Find(int64_t key) const {
  if (index_) return index_->Find(key);
  const Slot* slot = slots_.data();
  uint64_t s = Mix(static_cast<uint64_t>(key)) & mask_;
  while (true) {
    const Slot& e = slot[s];
    if (e.row1 == 0) return -1;
    if (e.key == key) return e.row1 - 1;
    s = (s + 1) & mask_;
  }
}

int64_t Store::Insert(int64_t key) {
  const int64_t r = keys_.size();
  if (index_) {
    index_->Insert(key, r);
  } else {
    if (2 * (keys_.size() + 1) > slots_.size()) Rehash(slots_.size() * 2);
    Slot* slot = slots_.data();
    uint64_t s = Mix(static_cast<uint64_t>(key)) & mask_;
    while (slot[s].row1 != 0) s = (s + 1) & mask_;
    slot[s] = Slot{key, r + 1};
  }
  keys_.PushBack(key);
  values_.Grow(storage_dim_);
  state_ready_.PushBack(0);
  return r;
}

void Store::InitRow(int64_t row, int64_t key, int32_t table) {
  float* v = values_.data() + row * storage_dim_;
  const auto& cols = tables_[table];
  int64_t j = 0;
  for (size_t c = 0; c < cols.size(); ++c) {
    FillColumn(cols[c], seed_, key, j, j + column_dims_[c], v);
    j += column_dims_[c];
  }
  std::fill(v + embedding_dim_, v + storage_dim_, 0.f);
}

namespace {
void CheckTables(const int32_t* table_ids, int64_t n, int64_t num_tables) {
  if (!table_ids) return;
  for (int64_t i = 0; i < n; ++i)
    OF_CHECK_INDEX(table_ids[i] >= 0 && table_ids[i] < num_tables)
        << "table id " << table_ids[i] << " is out of range for "
        << num_tables << " tables";
}
}  // namespace

void Store::Lookup(const int64_t* keys, const int32_t* table_ids, int64_t n, bool has_padding,
                   int64_t padding, float* out) {
  OpScope scope("one_embedding lookup");
  CheckTables(table_ids, n, num_tables());
  std::vector<int64_t> rows(n);
  ParallelFor(0, n, 4096, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) rows[i] = (has_padding && keys[i] == padding) ? -2 : Find(keys[i]);
  });
  // the missing keys, inserted in order of first appearance (a repeated new key once)
  std::vector<std::pair<int64_t, int32_t>> fresh;  // (row, table)
  for (int64_t i = 0; i < n; ++i) {
    if (rows[i] != -1) continue;
    int64_t r = Find(keys[i]);
    if (r < 0) {
      r = Insert(keys[i]);
      fresh.emplace_back(r, table_ids ? table_ids[i] : 0);
    }
    rows[i] = r;
  }
  ParallelFor(0, static_cast<int64_t>(fresh.size()), 256, [&](int64_t b, int64_t e) {
    for (int64_t f = b; f < e; ++f) InitRow(fresh[f].first, keys_[fresh[f].first], fresh[f].second);
  });
  const int64_t d = embedding_dim_, sd = storage_dim_;
  const float* vals = values_.data();
  ParallelFor(0, n, 1024, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      if (rows[i] == -2) std::fill(out + i * d, out + (i + 1) * d, 0.f);
      else std::memcpy(out + i * d, vals + rows[i] * sd, d * sizeof(float));
    }
  });
  Touched(rows, n - static_cast<int64_t>(fresh.size()), static_cast<int64_t>(fresh.size()));
}

namespace {

// Where SmartDecayAdam keeps a row's last step: after w, m and v, aligned to 8 bytes (upstream's
// layout, so its storage_dim is 3 * dim rounded up to even, plus 2).
inline int64_t SmartStepColumn(int64_t d) { return (3 * d + 1) / 2 * 2; }

// One row's update: w (embedding_dim), state (the rest of the row), g (the summed gradient).
void UpdateRow(float* w, float* state, const float* g, int64_t d, bool fresh,
               const UpdateOptions& o) {
  const double lr = o.lr, wd = o.weight_decay;
  switch (o.kind) {
    case UpdateOptions::kSGD: {
      float* buf = state;
      for (int64_t j = 0; j < d; ++j) {
        double gj = g[j] + wd * w[j];
        if (o.momentum != 0) {
          // torch's first step puts the gradient itself in the buffer (no dampening)
          const double b = fresh ? gj : o.momentum * buf[j] + (1 - o.dampening) * gj;
          buf[j] = static_cast<float>(b);
          gj = o.nesterov ? gj + o.momentum * b : b;
        }
        w[j] = static_cast<float>(w[j] - lr * gj);
      }
      break;
    }
    case UpdateOptions::kAdam: {
      float *m = state, *v = state + d;
      const double bc1 = o.do_bias_correction ? 1 - std::pow(o.beta1, double(o.step)) : 1.0;
      const double bc2 = o.do_bias_correction ? 1 - std::pow(o.beta2, double(o.step)) : 1.0;
      const double sbc2 = std::sqrt(bc2);
      for (int64_t j = 0; j < d; ++j) {
        double wj = w[j], gj = g[j];
        if (o.decoupled_weight_decay) wj *= 1 - lr * wd;
        else gj += wd * wj;
        const double mj = o.beta1 * m[j] + (1 - o.beta1) * gj;
        const double vj = o.beta2 * v[j] + (1 - o.beta2) * gj * gj;
        m[j] = static_cast<float>(mj);
        v[j] = static_cast<float>(vj);
        w[j] = static_cast<float>(wj - (lr / bc1) * mj / (std::sqrt(vj) / sbc2 + o.eps));
      }
      break;
    }
    case UpdateOptions::kAdagrad: {
      float* sum = state;
      const double clr = lr / (1 + (o.step - 1) * o.lr_decay);
      for (int64_t j = 0; j < d; ++j) {
        const double gj = g[j] + wd * w[j];
        const double s = sum[j] + gj * gj;
        sum[j] = static_cast<float>(s);
        w[j] = static_cast<float>(w[j] - clr * gj / (std::sqrt(s) + o.eps));
      }
      break;
    }
    case UpdateOptions::kSmartDecayAdam: {
      // upstream's SmartDecaySparseAdam: a row last updated k steps ago decays its moments by
      // beta^k at once and catches up the momentum steps it missed (no bias correction); the
      // row's last step is an int64 after m and v (SmartStepColumn)
      float *m = state, *v = state + d;
      int64_t prev;
      float* step_slot = state + (SmartStepColumn(d) - d);
      std::memcpy(&prev, step_slot, sizeof prev);
      const int64_t k = o.step - prev;
      const double b1k = std::pow(o.beta1, double(k)), b2k = std::pow(o.beta2, double(k));
      for (int64_t j = 0; j < d; ++j) {
        const double wj = w[j], gj = g[j] + wd * wj;
        const double catchup = k > 1 ? m[j] * o.beta1 * (1 - std::pow(o.beta1, double(k - 1))) / (1 - o.beta1) : 0.0;
        const double mj = b1k * m[j] + (1 - o.beta1) * gj;
        const double vj = b2k * v[j] + (1 - o.beta2) * gj * gj;
        m[j] = static_cast<float>(mj);
        v[j] = static_cast<float>(vj);
        w[j] = static_cast<float>(wj - lr * (mj + catchup) / (std::sqrt(vj) + o.eps));
      }
      std::memcpy(step_slot, &o.step, sizeof o.step);
      break;
    }
    case UpdateOptions::kFtrl: {
      // upstream OneFlow's FTRL (its docstring's formula, accumulator powers taken as given)
      float *acc = state, *z = state + d;
      for (int64_t j = 0; j < d; ++j) {
        const double wj = w[j], gj = g[j] + wd * wj;
        const double a0 = acc[j], a1 = a0 + gj * gj;
        const double p0 = std::pow(a0, o.lr_power), p1 = std::pow(a1, o.lr_power);
        const double sigma = (p1 - p0) / lr;
        const double zj = z[j] + gj - sigma * wj;
        double nw = 0;
        if (std::fabs(zj) >= o.lambda1)
          nw = (std::copysign(o.lambda1, zj) - zj) / ((o.beta + p1) / lr + o.lambda2);
        w[j] = static_cast<float>(nw);
        acc[j] = static_cast<float>(a1);
        z[j] = static_cast<float>(zj);
      }
      break;
    }
  }
}

int64_t StateFloats(UpdateOptions::Kind k, bool momentum) {
  switch (k) {
    case UpdateOptions::kSmartDecayAdam: return 3;
    case UpdateOptions::kSGD: return momentum ? 1 : 0;
    case UpdateOptions::kAdam: return 2;
    case UpdateOptions::kAdagrad: return 1;
    case UpdateOptions::kFtrl: return 2;
  }
  return 0;
}

// The floats a row needs for the update (the embedding and the optimizer's state).
int64_t RowFloats(UpdateOptions::Kind k, bool momentum, int64_t d) {
  if (k == UpdateOptions::kSmartDecayAdam) return SmartStepColumn(d) + 2;
  return d * (1 + StateFloats(k, momentum));
}

const char* KindName(UpdateOptions::Kind k) {
  switch (k) {
    case UpdateOptions::kSmartDecayAdam: return "SmartDecayAdam";
    case UpdateOptions::kSGD: return "SGD";
    case UpdateOptions::kAdam: return "Adam";
    case UpdateOptions::kAdagrad: return "Adagrad";
    case UpdateOptions::kFtrl: return "Ftrl";
  }
  return "?";
}

}  // namespace

Coalesced Coalesce(const int64_t* keys, const float* grads, int64_t n, int64_t d,
                   bool has_padding, int64_t padding) {
  Coalesced c;
  std::vector<int64_t> local_keys, local_pos;  // a local open-addressing index: key -> position
  uint64_t lmask = 16;
  while (lmask < static_cast<uint64_t>(2 * n + 2)) lmask <<= 1;
  local_keys.assign(lmask, 0);
  local_pos.assign(lmask, -1);
  lmask -= 1;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t k = keys[i];
    if (has_padding && k == padding) continue;
    uint64_t s = Mix(static_cast<uint64_t>(k)) & lmask;
    while (local_pos[s] >= 0 && local_keys[s] != k) s = (s + 1) & lmask;
    int64_t p = local_pos[s];
    if (p < 0) {
      p = static_cast<int64_t>(c.first.size());
      local_keys[s] = k;
      local_pos[s] = p;
      c.first.push_back(i);
      c.summed.resize(c.summed.size() + d, 0.f);
    }
    float* acc = c.summed.data() + p * d;
    const float* gi = grads + i * d;
    for (int64_t j = 0; j < d; ++j) acc[j] += gi[j];
  }
  return c;
}

double Coalesced::Norm() const {
  double sq = 0;
  for (float v : summed) sq += double(v) * v;
  return std::sqrt(sq);
}

void Store::Update(const int64_t* keys, const int32_t* table_ids, const float* grads, int64_t n,
                   bool has_padding, int64_t padding, const UpdateOptions& opt, bool unique) {
  OpScope scope("one_embedding update");
  CheckTables(table_ids, n, num_tables());
  const int64_t d = embedding_dim_;
  const int64_t need = RowFloats(opt.kind, opt.momentum != 0, d);
  const int64_t factor = (need + d - 1) / d;
  OF_CHECK_VALUE(storage_dim_ >= need)
      << "the " << KindName(opt.kind) << " update keeps " << need
      << " floats per row, but the store's storage_dim is " << storage_dim_ << " for embedding_dim "
      << d << " (pass size_factor=" << factor << " or storage_dim=" << need << " to the store options)";
  // (Ftrl's sigma divides by the learning rate)
  OF_CHECK_VALUE(opt.kind != UpdateOptions::kFtrl || opt.lr > 0)
      << "Ftrl needs a positive learning rate, got " << opt.lr;
  // distinct keys (given so: the lookup's backward coalesced them already) and their gradients
  Coalesced c;
  const float* summed = grads;
  if (unique) {
    for (int64_t i = 0; i < n; ++i)
      if (!(has_padding && keys[i] == padding)) c.first.push_back(i);
  } else {
    c = Coalesce(keys, grads, n, d, has_padding, padding);
    summed = c.summed.data();
  }
  std::vector<int64_t> uniq_rows(c.first.size());
  for (size_t p = 0; p < c.first.size(); ++p) {
    const int64_t i = c.first[p], k = keys[i];
    int64_t r = Find(k);
    if (r < 0) {  // a key updated without a lookup first: created as a lookup would
      r = Insert(k);
      InitRow(r, k, table_ids ? table_ids[i] : 0);
    }
    uniq_rows[p] = r;
  }
  const int64_t u = static_cast<int64_t>(uniq_rows.size());
  const float init_acc = static_cast<float>(opt.initial_accumulator_value);
  ParallelFor(0, u, 64, [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) {
      const int64_t r = uniq_rows[p];
      float* row = values_.data() + r * storage_dim_;
      const bool fresh = !state_ready_[r];
      if (fresh) {
        // the optimizer's state starts here: zeros, Adagrad's and Ftrl's accumulator at its
        // initial value
        std::fill(row + d, row + storage_dim_, 0.f);
        if (opt.kind == UpdateOptions::kAdagrad || opt.kind == UpdateOptions::kFtrl)
          std::fill(row + d, row + 2 * d, init_acc);
        state_ready_[r] = 1;
      }
      UpdateRow(row, row + d, summed + (unique ? c.first[p] : p) * d, d, fresh, opt);
    }
  });
  Touched(uniq_rows, u, 0);
}

void Store::LookupRows(const int64_t* keys, const int32_t* table_ids, int64_t n, float* out, uint8_t* ready) {
  OpScope scope("one_embedding lookup");
  CheckTables(table_ids, n, num_tables());
  const int64_t sd = storage_dim_;
  std::vector<int64_t> rows(n);
  for (int64_t i = 0; i < n; ++i) {
    int64_t r = Find(keys[i]);
    if (r < 0) {
      r = Insert(keys[i]);
      InitRow(r, keys[i], table_ids ? table_ids[i] : 0);
    }
    std::memcpy(out + i * sd, values_.data() + r * sd, sd * sizeof(float));
    ready[i] = state_ready_[r];
    rows[i] = r;
  }
  Touched(rows, n, 0);
}

void Store::Read(const int64_t* keys, int64_t n, float* out, uint8_t* found) const {
  const int64_t sd = storage_dim_;
  std::vector<int64_t> rows(n);
  ParallelFor(0, n, 1024, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const int64_t r = rows[i] = Find(keys[i]);
      found[i] = r >= 0;
      if (r >= 0) std::memcpy(out + i * sd, values_.data() + r * sd, sd * sizeof(float));
      else std::fill(out + i * sd, out + (i + 1) * sd, 0.f);
    }
  });
  Touched(rows, n, 0);
}

void Store::Write(const int64_t* keys, int64_t n, const float* rows, bool state_ready) {
  int64_t appended = 0;
  std::vector<int64_t> written(n);
  for (int64_t i = 0; i < n; ++i) {
    int64_t r = written[i] = Find(keys[i]);
    if (r < 0) {
      r = written[i] = Insert(keys[i]);
      ++appended;
    }
    std::memcpy(values_.data() + r * storage_dim_, rows + i * storage_dim_, storage_dim_ * sizeof(float));
    state_ready_[r] = state_ready ? 1 : 0;
  }
  Touched(written, n - appended, appended);
}

namespace {
// Note [Named stores]: embedding_name -> store, for upstream's functional ops. A store removes
// its own entry when it goes (and only its own: a newer store of the same name keeps the name).
std::mutex& NamesMutex() {
  static std::mutex m;
  return m;
}
std::unordered_map<std::string, Store*>& Names() {
  static auto* names = new std::unordered_map<std::string, Store*>();
  return *names;
}
}  // namespace

void Store::SetName(const std::string& name) {
  std::lock_guard<std::mutex> lock(NamesMutex());
  auto& names = Names();
  if (!name_.empty() && names.count(name_) && names[name_] == this) names.erase(name_);
  name_ = name;
  names[name] = this;
}

Store::~Store() {
  if (name_.empty()) return;
  std::lock_guard<std::mutex> lock(NamesMutex());
  auto it = Names().find(name_);
  if (it != Names().end() && it->second == this) Names().erase(it);
}

Store& NamedStore(const std::string& name) {
  std::lock_guard<std::mutex> lock(NamesMutex());
  auto it = Names().find(name);
  OF_CHECK_VALUE(it != Names().end())
      << "no one_embedding table is named '" << name
      << "' in this process (make it with flow.one_embedding.MultiTableEmbedding(name, ...))";
  return *it->second;
}

void Store::Clear() {
  keys_.Clear();
  values_.Clear();
  state_ready_.Clear();
  slots_.Clear();
  if (index_) index_->Clear();
  Rehash(16);
  // a file keeps its size and its pages stay cached (Grow hands them out again, zeroed): the bound
  // starts from what is resident (Note [Row cache])
  resident_bound_ = row_cache_budget_ > 0 ? cache_resident_bytes() : 0;
}

}  // namespace embedding
}  // namespace oneflow
