// The growable arrays of the embedding store (Note [Embedding store]): anonymous memory, or a
// memory-mapped file (Note [Tables on disk]).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace oneflow {
namespace embedding {

// Note [Tables on disk]: a store made with make_cached_ssd_store_options keeps the rows
// (`rows-<name>-*.bin`) and beside them the key of each row (`.keys`) and each row's
// optimizer-state flag (`.state`) in files under the table's directory, mapped into memory
// (MAP_SHARED): the operating system's page cache is the cache in front of the disk, keeping the
// pages in use in memory and writing the others back, so a table may exceed RAM. These arrays
// grow at their end as keys arrive (a new key appends its key, flag and row: sequential writes),
// and a training step rewrites the rows it touches in place (a row is hundreds of bytes to a few
// KiB: a dirtied 4 KiB page is mostly the row). The key index is NOT a hash table in a file: with
// a cache budget it is runs of sorted entries written sequentially (Note [Index on disk],
// disk_index.h), else slots in process memory (16 bytes a slot, at most half full: 32-64 bytes a
// key). A hash table's slots in a file would not do: an insert writes 16 bytes at a random place,
// so an index mapped from a file dirties one 4 KiB page per new key, and once the dirty pages
// pass the kernel's dirty limit each insert writes a page back: a 10^8-key prefill with the
// index in files stalled at 6*10^7 keys (a slot file of 2^27 slots, 2 GiB) with 823 GB written. A file grows by doubling with ftruncate, whose new part is a hole that reads as zeros
// and costs no disk until written; the mapping moves with mremap. Every file is working storage,
// not a snapshot: the files are removed when the store goes (a crash leaves them behind, never a
// torn snapshot), and snapshots stay the way to keep a table (Note [Embedding snapshots]; a
// snapshot is the index's sequential copy: the keys in row order). In memory the same arrays are
// anonymous mappings, grown the same way.
class MappedBuffer {
 public:
  MappedBuffer() = default;
  ~MappedBuffer();
  MappedBuffer(MappedBuffer&& o) noexcept;
  MappedBuffer& operator=(MappedBuffer&& o) noexcept;
  MappedBuffer(const MappedBuffer&) = delete;
  MappedBuffer& operator=(const MappedBuffer&) = delete;

  void OpenFile(const std::string& path);  // from now on (when empty), the bytes live in `path`
  bool on_disk() const { return fd_ >= 0; }
  char* data() { return map_; }
  const char* data() const { return map_; }
  size_t size() const { return size_; }  // bytes in use
  void Grow(size_t n);                   // size() + n bytes, the new ones zero
  void Clear();                          // size() 0 (the memory of an anonymous one returned)
  // Note [Row cache]: a file's pages in the page cache (mincore; 0 in memory), and dropping them
  // (the dirty ones written back first).
  size_t ResidentBytes() const;
  void Evict() const;
  // Note [Row cache]: which pages of the mapping are in the page cache (mincore: one entry per
  // page of the mapping, bit 0 set when resident; empty in memory); writing the dirty pages back
  // (one msync of the file: its writes go out together, not a wait per page); dropping pages
  // [first, first + count), written back before.
  std::vector<unsigned char> ResidentPages() const;
  void WriteBack() const;
  void DropPages(size_t first, size_t count) const;

 private:
  void Release();
  std::string path_;
  int fd_ = -1;
  char* map_ = nullptr;
  size_t size_ = 0, cap_ = 0;
  size_t dirty_ = 0;  // bytes below which the mapping may hold non-zeros (above: fresh zeros)
};

// A MappedBuffer seen as an array of T (trivially copyable; zero bytes are a valid T).
template <typename T>
class MappedArray {
 public:
  void OpenFile(const std::string& path) { buf_.OpenFile(path); }
  bool on_disk() const { return buf_.on_disk(); }
  T* data() { return reinterpret_cast<T*>(buf_.data()); }
  const T* data() const { return reinterpret_cast<const T*>(buf_.data()); }
  int64_t size() const { return static_cast<int64_t>(buf_.size() / sizeof(T)); }
  T& operator[](int64_t i) { return data()[i]; }
  const T& operator[](int64_t i) const { return data()[i]; }
  void Grow(int64_t n) { buf_.Grow(static_cast<size_t>(n) * sizeof(T)); }
  void PushBack(const T& v) {
    Grow(1);
    data()[size() - 1] = v;
  }
  void Clear() { buf_.Clear(); }
  size_t ResidentBytes() const { return buf_.ResidentBytes(); }
  void Evict() const { buf_.Evict(); }
  std::vector<unsigned char> ResidentPages() const { return buf_.ResidentPages(); }
  void WriteBack() const { buf_.WriteBack(); }
  void DropPages(size_t first, size_t count) const { buf_.DropPages(first, count); }

 private:
  MappedBuffer buf_;
};

}  // namespace embedding
}  // namespace oneflow
