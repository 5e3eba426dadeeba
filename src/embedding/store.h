// The key -> row store behind flow.one_embedding (docs/one_embedding.md).
//
// Note [Embedding store]: an embedding table of OneFlow's one_embedding is not a tensor: its rows
// come into existence the first time a key is looked up (initialised from the key's table
// initializer), so a table's size is the number of distinct keys seen, not a vocabulary fixed in
// advance. A row holds `storage_dim` floats: the embedding (`embedding_dim` floats, the table's
// columns side by side) followed by the optimizer's per-row state (momentum, Adam's m and v,
// Adagrad's sum, Ftrl's accumulator and z), which the sparse update initialises the first time
// it touches the row (`state_ready`). Keys are the ids themselves, as upstream: a table id only
// picks the initializer of a new key, so ids of different tables must differ (the recommender
// scripts offset or hash them per table).
//
// Rows live in one contiguous array (row r at values_[r * storage_dim]); an open-addressing hash
// index (linear probing, power-of-two slots, at most half full) maps key -> row. A slot is
// (key, row + 1), so that zero bytes are an empty slot: a new slot array needs no filling. The
// slots are in memory; the other per-key arrays (keys, state flags, rows) are MappedArrays, in
// memory or in files (Note [Tables on disk]). Lookups find
// existing rows in parallel and insert the missing ones in one sequential pass; updates coalesce
// duplicate keys (their gradients summed, as a sparse gradient's coalesce does) and then update
// each distinct row in place in parallel: the lookup and the update each touch a row once.
#pragma once
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "embedding/mapped.h"

namespace oneflow {
namespace embedding {

class DiskIndex;

// Note [Row cache]: the SSD store's files (Note [Tables on disk]) are cached by the page cache,
// which on its own grows to all free memory. With a cache budget (make_cached_ssd_store_options'
// cache_budget_mb plus host_cache_budget_mb: upstream's two cache levels, one level here), half
// of it bounds the key index's process memory (Note [Index on disk]) and half the table's pages
// in the page cache -- rows, keys, state flags, the index's runs: after every operation
// (lookup, update, read, write) they are at most that. An operation adds an upper bound of the
// pages it touched to an upper bound of the pages resident (a found row: the pages it spans, its
// flag's page and a page of each index run; an appended row: its bytes, written sequentially);
// when the bound passes the budget the store counts the pages really resident (mincore) and, past
// the budget, evicts: the dirty pages written back, then dropped (msync, MADV_DONTNEED,
// POSIX_FADV_DONTNEED). The files are mapped MADV_RANDOM, so that a fault reads its page and no
// read-ahead of its neighbours. So a table many times its budget trains with its rows read from
// and written back to the disk (tests/test_one_embedding_disk_index.py).
//
// What an eviction drops: the least recently used pages of the rows and state-flag files, down to
// half the budget (kCacheKeep), and the keys and index-run files whole. The kernel does not say which
// pages were used last, so the store keeps its own clock: every operation is a tick, and the rows
// it touched stamp their pages (and their flags' pages) with it -- 4 bytes of process memory per
// 4 KiB page of those files, 0.1% of the table. An eviction takes the resident pages (mincore)
// with the oldest stamps: a hot set of rows that fits the budget stays in memory across
// evictions, where emptying the cache would read it back from the disk after each. Keeping half
// the budget free makes the next eviction come after half a budget of new pages, not at the next
// operation; the dirty pages of a file are written back by one msync before the drops (a sync
// per run of pages waited on each write: 4x slower). Measured by the hot-set test's workload
// (tests/test_one_embedding_disk_index.py; 256 ids of a hot set and 64 cold ones a step, 2 MiB
// budget): 35% fewer major page faults and 1.5x the ids/s of emptying the cache whole. The keys
// file is read only when a row is created (its initializer is the key's) and by snapshots, the
// index runs by lookups of keys not yet in the index's memory: dropped whole, as before.
// An operation's own pages may pass the budget while it runs (its batch is in memory), and a
// snapshot's save reads the table through the page cache (clean pages the kernel may drop) and
// empties the cache after.

// How a column of a new row is filled (OneFlow's make_*_initializer).
struct Initializer {
  enum Kind { kUniform, kNormal, kConstant, kTruncNormal } kind = kConstant;
  double a = 0, b = 0, c = 0, d = 0;  // (low, high) / (mean, std) / (value) / (mean, std, lo, hi)
};

// The options of one sparse update (python/oneflow/one_embedding/_update.py fills them from the
// optimizer's param group).
struct UpdateOptions {
  enum Kind { kSGD, kAdam, kAdagrad, kFtrl, kSmartDecayAdam } kind = kSGD;
  double lr = 0, weight_decay = 0;
  double momentum = 0, dampening = 0;  // SGD
  bool nesterov = false;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;  // Adam (eps: Adagrad too)
  bool do_bias_correction = true, decoupled_weight_decay = false;
  double lr_decay = 0, initial_accumulator_value = 0;  // Adagrad (the accumulator: Ftrl too)
  double lr_power = -0.5, lambda1 = 0, lambda2 = 0, beta = 0;  // Ftrl
  int64_t step = 1;  // the update's number, from 1 (Adam's bias correction, Adagrad's decay)
};

class Store {
 public:
  // column_dims: the embedding's columns (their sum is embedding_dim); tables[t][c]: the
  // initializer of column c of table t.
  // rows_file: where the rows live, the keys and state flags beside it in files named after it
  // (Note [Tables on disk]); empty: in memory. cache_budget > 0 (bytes, with a rows_file): the
  // table's memory: half for the key index, a DiskIndex of runs beside the rows (Note [Index on
  // disk]), half for the table's pages in the page cache (Note [Row cache]); 0: the slots in
  // memory, the page cache unbounded.
  Store(std::vector<int64_t> column_dims, int64_t storage_dim,
        std::vector<std::vector<Initializer>> tables, uint64_t seed, int64_t capacity_hint,
        const std::string& rows_file = "", int64_t cache_budget = 0);
  bool rows_on_disk() const { return values_.on_disk(); }
  bool index_on_disk() const { return index_ != nullptr; }
  // the key index's process memory now and at its peak (bytes)
  int64_t index_memory_bytes() const;
  int64_t index_peak_bytes() const;
  // Note [Row cache]: the bytes of the table's files in the page cache now (rows, keys, flags,
  // index runs), the budget they are kept within after each operation (0: none) and how many
  // times the cache was emptied.
  int64_t cache_resident_bytes() const;
  int64_t row_cache_budget() const { return row_cache_budget_; }
  int64_t cache_evictions() const { return evictions_; }
  // Writes the table's dirty pages back and drops its pages from the page cache.
  void EvictCache() const;

  int64_t embedding_dim() const { return embedding_dim_; }
  int64_t storage_dim() const { return storage_dim_; }
  int64_t num_tables() const { return static_cast<int64_t>(tables_.size()); }
  int64_t size() const { return keys_.size(); }
  int64_t num_slots() const { return static_cast<int64_t>(mask_ + 1); }

  // out[i] = the embedding of keys[i] (n x embedding_dim), inserting missing keys; rows of
  // `padding` (when has_padding) read as zeros and are never inserted.
  void Lookup(const int64_t* keys, const int32_t* table_ids, int64_t n, bool has_padding,
              int64_t padding, float* out);
  // The sparse update of the rows of keys[i] with gradients grads[i] (n x embedding_dim);
  // `unique`: the keys are distinct (Coalesce ran), else duplicates' gradients are summed here.
  void Update(const int64_t* keys, const int32_t* table_ids, const float* grads, int64_t n,
              bool has_padding, int64_t padding, const UpdateOptions& opt, bool unique = false);

  // Whole rows (storage_dim floats) of keys, inserting missing keys as Lookup does; ready[i]:
  // whether the row's optimizer state has started (upstream's one_embedding_lookup).
  void LookupRows(const int64_t* keys, const int32_t* table_ids, int64_t n, float* out, uint8_t* ready);
  // Whole rows (storage_dim floats) of keys, without inserting: found[i] says whether keys[i]
  // has a row (its values are zeros otherwise).
  void Read(const int64_t* keys, int64_t n, float* out, uint8_t* found) const;
  // Sets whole rows (inserting keys); state_ready marks the state part as initialised.
  void Write(const int64_t* keys, int64_t n, const float* rows, bool state_ready);
  // Every key (size() of them), its row and its state flag, in insertion order.
  const int64_t* keys() const { return keys_.data(); }
  const float* values() const { return values_.data(); }
  const uint8_t* state_ready() const { return state_ready_.data(); }
  void Clear();
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;
  // Upstream's functional ops name a table by its embedding_name (flow._C.one_embedding_lookup
  // and embedding_put): the store answers to `name` in this process until it goes or another
  // store takes the name.
  void SetName(const std::string& name);

 private:
  int64_t Find(int64_t key) const;       // row or -1
  int64_t Insert(int64_t key);           // new row (key must be absent), zero-filled
  void Rehash(int64_t min_slots);
  void InitRow(int64_t row, int64_t key, int32_t table);
  // After an operation that found `found` existing rows and appended `appended` new ones: keeps
  // the table's pages in memory within the row cache's budget (Note [Row cache]).
  // `rows`: the rows it touched (negative entries: none), whose pages it stamps.
  void Touched(const std::vector<int64_t>& rows, int64_t found, int64_t appended) const;
  void EvictLocked() const;  // EvictCache with cache_mu_ held
  void EvictLeastRecentLocked() const;  // the LRU eviction, cache_mu_ held

  std::vector<int64_t> column_dims_;
  int64_t embedding_dim_, storage_dim_;
  std::vector<std::vector<Initializer>> tables_;
  uint64_t seed_;
  struct Slot {
    int64_t key;
    int64_t row1;  // the row + 1; 0: an empty slot
  };
  std::string name_;               // SetName's ("": none)
  std::string files_;              // the on-disk arrays' path prefix ("": in memory)
  MappedArray<Slot> slots_;        // the hash index in memory (Note [Tables on disk]), unless
  std::unique_ptr<DiskIndex> index_;  // the index on disk (Note [Index on disk])
  uint64_t mask_ = 0;
  MappedArray<int64_t> keys_;      // row -> key
  MappedArray<float> values_;      // rows x storage_dim
  MappedArray<uint8_t> state_ready_;
  int64_t row_cache_budget_ = 0;      // bytes; 0: the page cache sizes itself
  mutable std::mutex cache_mu_;       // (Read is const and may run on several threads)
  mutable int64_t resident_bound_ = 0;  // at least the table's bytes in the page cache now
  mutable int64_t evictions_ = 0;
  mutable uint32_t clock_ = 0;                   // operations so far (Note [Row cache])
  mutable std::vector<uint32_t> row_page_use_;   // the clock when each page of the rows file
  mutable std::vector<uint32_t> flag_page_use_;  // (the flags file) was last touched; 0: never
};

// Duplicate keys' gradients summed (a sparse gradient's coalesce), padding dropped: for each
// distinct key in order of first appearance, the index of that appearance and the summed rows.
struct Coalesced {
  std::vector<int64_t> first;
  std::vector<float> summed;  // first.size() x d
  // The 2-norm of the summed rows: the norm of the dense gradient the table would have (Note
  // [Embedding gradients] gives it to the shadow parameter, for clipping and loss scaling).
  double Norm() const;
};
Coalesced Coalesce(const int64_t* keys, const float* grads, int64_t n, int64_t d,
                   bool has_padding, int64_t padding);

// Note [Embedding snapshots]: a snapshot is one file (keys, state flags, rows and a checksum)
// written to `<path>.tmp.<pid>`, flushed to disk (fsync) and renamed over `path`: rename is
// atomic, so a process killed mid-save leaves the previous snapshot (or none) intact, never a
// torn one; the checksum catches a file damaged afterwards.
void SaveSnapshot(const Store& store, const std::string& path);
void LoadSnapshot(Store& store, const std::string& path);
// A snapshot's contents without a store, a range of keys at a time (make_persistent_table_reader;
// LoadSnapshot): CheckSnapshot reads the whole file once to check it and returns (storage_dim,
// number of keys); ReadSnapshotRows reads keys [begin, begin + count) with their rows and flags.
// And a snapshot written from keys and rows (make_persistent_table_writer).
struct SnapshotData {
  int64_t storage_dim = 0;
  std::vector<int64_t> keys;
  std::vector<uint8_t> state_ready;
  std::vector<float> values;
};
constexpr int64_t kSnapshotChunk = 1 << 16;  // keys a load reads at a time
std::pair<int64_t, int64_t> CheckSnapshot(const std::string& path);
SnapshotData ReadSnapshotRows(const std::string& path, int64_t storage_dim, int64_t n, int64_t begin,
                              int64_t count);
// The store named `name` (Store::SetName); ValueError when none is.
Store& NamedStore(const std::string& name);
void WriteSnapshot(const std::string& path, int64_t storage_dim, const int64_t* keys,
                   const uint8_t* state_ready, const float* values, int64_t n);

}  // namespace embedding
}  // namespace oneflow
