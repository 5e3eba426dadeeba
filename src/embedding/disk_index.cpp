// The SSD table's key index within a memory budget (Note [Index on disk], disk_index.h).
#include "embedding/disk_index.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/error.h"

namespace oneflow {
namespace embedding {

namespace {

constexpr int64_t kPage = 4096 / sizeof(int64_t) / 2;  // entries of a 4 KiB page (256)
constexpr int64_t kChunk = 4096;                          // entries a merge writes at once (64 KiB)
constexpr size_t kMinSlots = 1024;

uint64_t Hash(int64_t key) {  // (a mixing hash: ids offset per table spread over the slots)
  uint64_t z = static_cast<uint64_t>(key) + 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

}  // namespace

DiskIndex::DiskIndex(std::string prefix, size_t budget) : prefix_(std::move(prefix)), budget_(budget) {
  // the buffer's slots (16 bytes) and, at a flush, the sorted copy of its entries (at most half
  // the slots: 8 bytes a slot) and the merge's write buffer, in three quarters of the budget; the
  // rest for the fences
  max_slots_ = kMinSlots;
  while (24 * (max_slots_ * 2) + kChunk * sizeof(Entry) <= budget_ / 4 * 3) max_slots_ *= 2;
  buf_.assign(kMinSlots, Entry{0, 0});
  mask_ = kMinSlots - 1;
  Note(0);
}

DiskIndex::~DiskIndex() {
  for (Run& r : runs_) Drop(r);
}

size_t DiskIndex::memory_bytes() const {
  size_t fences = 0;
  for (const Run& r : runs_) fences += r.fence.capacity() * sizeof(int64_t);
  return buf_.capacity() * sizeof(Entry) + fences;
}

void DiskIndex::Note(size_t extra) { peak_ = std::max(peak_, memory_bytes() + extra); }

int64_t DiskIndex::Find(int64_t key) const {
  for (uint64_t s = Hash(key) & mask_;; s = (s + 1) & mask_) {
    const Entry& e = buf_[s];
    if (e.row1 == 0) break;
    if (e.key == key) return e.row1 - 1;
  }
  // from the oldest run, the largest (sizes about halve towards the newest): a key is in one
  // run, so a stored key is found after two runs on average rather than after all the small ones
  for (const Run& r : runs_) {
    if (r.n == 0 || key < r.fence.front()) continue;
    // the page whose first key is the last one <= key, then a binary search within it
    const int64_t page = std::upper_bound(r.fence.begin(), r.fence.end(), key) - r.fence.begin() - 1;
    const Entry* b = r.map + page * kPage;
    const Entry* e = r.map + std::min(r.n, (page + 1) * kPage);
    const Entry* at = std::lower_bound(b, e, key, [](const Entry& x, int64_t k) { return x.key < k; });
    if (at != e && at->key == key) return at->row1 - 1;
  }
  return -1;
}

void DiskIndex::GrowBuffer() {
  std::vector<Entry> old = std::move(buf_);
  buf_.assign(old.size() * 2, Entry{0, 0});
  mask_ = buf_.size() - 1;
  for (const Entry& e : old) {
    if (e.row1 == 0) continue;
    uint64_t s = Hash(e.key) & mask_;
    while (buf_[s].row1 != 0) s = (s + 1) & mask_;
    buf_[s] = e;
  }
  Note(old.capacity() * sizeof(Entry));
}

void DiskIndex::Insert(int64_t key, int64_t row) {
  if (2 * (count_ + 1) > static_cast<int64_t>(buf_.size())) {
    if (buf_.size() < max_slots_)
      GrowBuffer();
    else
      Flush();
  }
  uint64_t s = Hash(key) & mask_;
  while (buf_[s].row1 != 0) s = (s + 1) & mask_;
  buf_[s] = Entry{key, row + 1};
  ++count_;
}

void DiskIndex::Flush() {
  std::vector<Entry> sorted;
  sorted.reserve(count_);
  for (const Entry& e : buf_)
    if (e.row1 != 0) sorted.push_back(e);
  std::sort(sorted.begin(), sorted.end(), [](const Entry& a, const Entry& b) { return a.key < b.key; });
  Note(sorted.capacity() * sizeof(Entry) + kChunk * sizeof(Entry));
  runs_.push_back(Write({}, sorted));
  sorted = {};
  std::fill(buf_.begin(), buf_.end(), Entry{0, 0});
  count_ = 0;
  // merge while the older of the last two runs is at most twice the newer: run sizes then about
  // double from the newest to the oldest
  while (runs_.size() >= 2 && runs_[runs_.size() - 2].n <= 2 * runs_.back().n) {
    Run& a = runs_[runs_.size() - 2];
    Run& b = runs_.back();
    Note(kChunk * sizeof(Entry));
    Run merged = Write({&a, &b}, {});
    Drop(a);
    Drop(b);
    runs_.pop_back();
    runs_.back() = std::move(merged);
  }
}

// A new run of the merged (key-sorted) inputs and `sorted`, written sequentially a chunk at a time.
DiskIndex::Run DiskIndex::Write(const std::vector<const Run*>& inputs, const std::vector<Entry>& sorted) {
  Run out;
  out.path = prefix_ + ".run" + std::to_string(next_run_++);
  const int fd = ::open(out.path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  OF_CHECK(fd >= 0) << "one_embedding: cannot create the index file " << out.path << ": " << std::strerror(errno);
  // the sources: the inputs' mapped entries and `sorted`, each a key-sorted span
  std::vector<std::pair<const Entry*, const Entry*>> spans;
  for (const Run* r : inputs) {
    ::madvise(const_cast<Entry*>(r->map), r->n * sizeof(Entry), MADV_SEQUENTIAL);
    spans.emplace_back(r->map, r->map + r->n);
  }
  if (!sorted.empty()) spans.emplace_back(sorted.data(), sorted.data() + sorted.size());
  std::vector<Entry> chunk;
  chunk.reserve(kChunk);
  int64_t written = 0;
  auto flush = [&]() {
    const char* p = reinterpret_cast<const char*>(chunk.data());
    size_t left = chunk.size() * sizeof(Entry);
    off_t at = static_cast<off_t>(written * sizeof(Entry));
    while (left > 0) {
      const ssize_t w = ::pwrite(fd, p, left, at);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        const int err = errno;
        ::close(fd);
        ::unlink(out.path.c_str());
        OF_CHECK(false) << "one_embedding: writing the index file " << out.path << " failed: " << std::strerror(err);
      }
      p += w;
      left -= static_cast<size_t>(w);
      at += w;
    }
    written += static_cast<int64_t>(chunk.size());
    chunk.clear();
  };
  while (true) {  // (two or three spans: a linear pick of the smallest head is enough)
    int best = -1;
    for (size_t i = 0; i < spans.size(); ++i)
      if (spans[i].first != spans[i].second && (best < 0 || spans[i].first->key < spans[best].first->key))
        best = static_cast<int>(i);
    if (best < 0) break;
    chunk.push_back(*spans[best].first++);
    if (static_cast<int64_t>(chunk.size()) == kChunk) flush();
  }
  if (!chunk.empty()) flush();
  // the new run is on disk, not in the page cache: written once here, a lookup reads back one
  // page of it (Note [Row cache], store.h: the table's pages in memory stay within its budget);
  // the merged inputs' pages go with their files
  if (written > 0) {
    OF_CHECK(::fdatasync(fd) == 0) << "one_embedding: writing the index file " << out.path
                                   << " failed: " << std::strerror(errno);
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  }
  out.fd = fd;
  out.n = written;
  Open(out);
  return out;
}

void DiskIndex::Open(Run& run) {
  if (run.n == 0) return;
  void* m = ::mmap(nullptr, run.n * sizeof(Entry), PROT_READ, MAP_SHARED, run.fd, 0);
  OF_CHECK(m != MAP_FAILED) << "one_embedding: cannot map the index file " << run.path << ": " << std::strerror(errno);
  run.map = static_cast<const Entry*>(m);
  ::madvise(m, run.n * sizeof(Entry), MADV_RANDOM);  // (a lookup reads one page: no read-ahead)
  run.fence.resize((run.n + kPage - 1) / kPage);
  for (size_t p = 0; p < run.fence.size(); ++p) run.fence[p] = run.map[p * kPage].key;
}

size_t DiskIndex::ResidentBytes() const {
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  size_t n = 0;
  std::vector<unsigned char> in;
  for (const Run& r : runs_) {
    if (!r.map) continue;
    const size_t pages = (r.n * sizeof(Entry) + page - 1) / page;
    in.assign(pages, 0);
    OF_CHECK(::mincore(const_cast<Entry*>(r.map), pages * page, in.data()) == 0)
        << "one_embedding: mincore of the index file " << r.path << " failed: " << std::strerror(errno);
    for (unsigned char c : in) n += c & 1;
  }
  return n * page;
}

void DiskIndex::Evict() const {
  for (const Run& r : runs_) {
    if (!r.map) continue;
    ::madvise(const_cast<Entry*>(r.map), r.n * sizeof(Entry), MADV_DONTNEED);
    ::posix_fadvise(r.fd, 0, 0, POSIX_FADV_DONTNEED);
  }
}

void DiskIndex::Drop(Run& run) {
  if (run.map) ::munmap(const_cast<Entry*>(run.map), run.n * sizeof(Entry));
  if (run.fd >= 0) ::close(run.fd);
  if (!run.path.empty()) ::unlink(run.path.c_str());
  run = Run{};
}

void DiskIndex::Clear() {
  for (Run& r : runs_) Drop(r);
  runs_.clear();
  buf_.assign(kMinSlots, Entry{0, 0});
  buf_.shrink_to_fit();
  mask_ = kMinSlots - 1;
  count_ = 0;
}

}  // namespace embedding
}  // namespace oneflow
