// The key -> row index of an SSD table within a memory budget (Note [Index on disk]).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace oneflow {
namespace embedding {

// Note [Index on disk]: with make_cached_ssd_store_options the key index does not live in
// process memory as a whole (which takes 32-64 bytes a key: 4 GiB at 10^8 keys). It is a small
// log-structured index: new keys go to an in-memory hash buffer (open addressing, at most half
// full) whose size is bounded by the store's cache_budget_mb; when the buffer is full its entries
// are sorted and written out sequentially as a run -- a file of (key, row) pairs in key order --
// and the buffer starts empty. Runs are merged pairwise while the older of the last two is at most
// twice the newer (a merge reads both sequentially and writes one file sequentially), so there are
// about log2(keys / buffer) runs and a key is rewritten about as often. A run is mapped read-only:
// its pages are clean page cache, which the kernel drops under pressure without writing, and a
// lookup touches one of its 4 KiB pages, found through the run's fence (the first key of each
// page: 8 bytes per 256 keys, in memory). A lookup tries the buffer, then the runs from the
// oldest, the largest (a key is inserted once, so the first hit is the only one). Compared with the slots in
// a file (Note [Tables on disk]: a random 16-byte write dirtying a 4 KiB page per new key), every
// byte written is written sequentially. The process memory is the buffer, the sort's copy of it
// at a flush, the merge's write buffer and the fences: memory_bytes() counts them.
class DiskIndex {
 public:
  // prefix: the runs' files are prefix + ".run<n>"; budget: the bytes of memory the index may use.
  DiskIndex(std::string prefix, size_t budget);
  ~DiskIndex();
  DiskIndex(const DiskIndex&) = delete;
  DiskIndex& operator=(const DiskIndex&) = delete;

  int64_t Find(int64_t key) const;        // the row, or -1 (concurrent Finds are safe)
  void Insert(int64_t key, int64_t row);  // key must be absent
  void Clear();
  size_t memory_bytes() const;            // what the index holds in process memory now
  size_t peak_memory_bytes() const { return peak_; }
  int64_t num_runs() const { return static_cast<int64_t>(runs_.size()); }
  // Note [Row cache] (store.h): the runs' pages in the page cache, and dropping them (they are
  // clean: a run is written once, synced, and only read after).
  size_t ResidentBytes() const;
  void Evict() const;

 private:
  struct Entry {
    int64_t key;
    int64_t row1;  // row + 1; 0: an empty slot of the buffer
  };
  struct Run {
    std::string path;
    int fd = -1;
    const Entry* map = nullptr;
    int64_t n = 0;
    std::vector<int64_t> fence;  // first key of each page of entries
  };
  void GrowBuffer();
  void Flush();                         // the buffer becomes the newest run
  Run Write(const std::vector<const Run*>& inputs, const std::vector<Entry>& sorted);
  void Open(Run& run);
  void Drop(Run& run);
  void Note(size_t extra);              // records the peak memory with `extra` bytes in use

  std::string prefix_;
  size_t budget_, max_slots_;
  std::vector<Entry> buf_;
  uint64_t mask_ = 0;
  int64_t count_ = 0;
  std::vector<Run> runs_;
  int64_t next_run_ = 0;
  size_t peak_ = 0;
};

}  // namespace embedding
}  // namespace oneflow
