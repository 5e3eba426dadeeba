// The row array of the embedding store (Note [Embedding store]): floats in memory, or in a
// memory-mapped file (Note [Rows on disk]).
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace oneflow {
namespace embedding {

// Note [Rows on disk]: a store made with make_cached_ssd_store_options keeps its rows in a file
// under the table's directory, mapped into memory (MAP_SHARED): the operating system's page
// cache is the cache in front of the disk, keeping the rows in use in memory and writing others
// back to the file, so a table's rows may exceed RAM (the key index stays in memory: 16 bytes a
// slot, at most half the slots in use). The file grows with the table (ftruncate makes the new
// part a hole that reads as zeros; the mapping moves with mremap). It is the table's working
// storage, not a snapshot: it is removed when the store goes, and snapshots stay the way to keep
// a table (Note [Embedding snapshots]).
class RowBuffer {
 public:
  RowBuffer() = default;
  ~RowBuffer();
  RowBuffer(RowBuffer&& o) noexcept;
  RowBuffer& operator=(RowBuffer&&) = delete;
  RowBuffer(const RowBuffer&) = delete;

  void OpenFile(const std::string& path);  // from now on (when empty), rows live in `path`
  bool on_disk() const { return fd_ >= 0; }
  float* data() { return fd_ >= 0 ? map_ : mem_.data(); }
  const float* data() const { return fd_ >= 0 ? map_ : mem_.data(); }
  size_t size() const { return fd_ >= 0 ? size_ : mem_.size(); }
  void Grow(size_t n);  // size() + n floats, the new ones zero
  void Clear();

 private:
  std::vector<float> mem_;
  std::string path_;
  int fd_ = -1;
  float* map_ = nullptr;
  size_t size_ = 0, cap_ = 0;  // floats in use / mapped
};

}  // namespace embedding
}  // namespace oneflow
