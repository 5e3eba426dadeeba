// The store's growable arrays: Note [Tables on disk] in mapped.h.
#include "embedding/mapped.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "core/error.h"

namespace oneflow {
namespace embedding {

MappedBuffer::~MappedBuffer() { Release(); }

void MappedBuffer::Release() {
  if (map_) munmap(map_, cap_);
  if (fd_ >= 0) {
    ::close(fd_);
    ::unlink(path_.c_str());
  }
  map_ = nullptr;
  fd_ = -1;
  size_ = cap_ = dirty_ = 0;
}

MappedBuffer::MappedBuffer(MappedBuffer&& o) noexcept
    : path_(std::move(o.path_)), fd_(o.fd_), map_(o.map_), size_(o.size_), cap_(o.cap_), dirty_(o.dirty_) {
  o.fd_ = -1;
  o.map_ = nullptr;
  o.size_ = o.cap_ = o.dirty_ = 0;
}

MappedBuffer& MappedBuffer::operator=(MappedBuffer&& o) noexcept {
  if (this != &o) {
    Release();
    path_ = std::move(o.path_);
    fd_ = o.fd_;
    map_ = o.map_;
    size_ = o.size_;
    cap_ = o.cap_;
    dirty_ = o.dirty_;
    o.fd_ = -1;
    o.map_ = nullptr;
    o.size_ = o.cap_ = o.dirty_ = 0;
  }
  return *this;
}

void MappedBuffer::OpenFile(const std::string& path) {
  OpScope scope("one_embedding");
  OF_CHECK(fd_ < 0 && map_ == nullptr) << "the table's storage already has a place";
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
  OF_CHECK(fd_ >= 0) << "cannot create the table's file '" << path << "': " << std::strerror(errno);
  path_ = path;
}

void MappedBuffer::Grow(size_t n) {
  const size_t need = size_ + n;
  if (need > cap_) {
    // doubling, from 4 MiB: a resize per doubling, never per key (an anonymous mapping's
    // untouched pages, as a file's holes, cost nothing)
    const size_t cap = std::max({need, 2 * cap_, size_t(1) << 22});
    OpScope scope("one_embedding");
    if (fd_ >= 0)
      OF_CHECK(::ftruncate(fd_, static_cast<off_t>(cap)) == 0)
          << "cannot grow the table's file '" << path_ << "' to " << cap << " bytes: " << std::strerror(errno);
    void* p;
    if (map_) p = mremap(map_, cap_, cap, MREMAP_MAYMOVE);
    else if (fd_ >= 0) p = mmap(nullptr, cap, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    else p = mmap(nullptr, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    OF_CHECK(p != MAP_FAILED) << "cannot map " << cap << " bytes for the table"
                              << (fd_ >= 0 ? " ('" + path_ + "')" : std::string()) << ": "
                              << std::strerror(errno);
    map_ = static_cast<char*>(p);
    cap_ = cap;
    // rows are touched at random: a fault reads its page only, no read-ahead around it (which
    // would fill the row cache with neighbours nobody asked for: Note [Row cache], store.h)
    if (fd_ >= 0) ::madvise(map_, cap_, MADV_RANDOM);
  }
  // only bytes used before a Clear can be non-zero: fresh ones are zero already, and writing
  // zeros over them would make every page of a new slot array resident
  if (size_ < dirty_) std::memset(map_ + size_, 0, std::min(need, dirty_) - size_);
  size_ = need;
  dirty_ = std::max(dirty_, size_);
}

void MappedBuffer::Clear() {
  if (fd_ < 0) {
    if (map_) munmap(map_, cap_);
    map_ = nullptr;
    size_ = cap_ = dirty_ = 0;
    return;
  }
  size_ = 0;  // (the file keeps its size: Grow zeroes the bytes it hands out again)
}

std::vector<unsigned char> MappedBuffer::ResidentPages() const {
  if (fd_ < 0 || map_ == nullptr) return {};
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> in((cap_ + page - 1) / page);
  OF_CHECK(::mincore(map_, in.size() * page, in.data()) == 0)
      << "one_embedding: mincore of '" << path_ << "' failed: " << std::strerror(errno);
  return in;
}

size_t MappedBuffer::ResidentBytes() const {
  size_t n = 0;
  for (unsigned char c : ResidentPages()) n += c & 1;
  return n * static_cast<size_t>(::sysconf(_SC_PAGESIZE));
}

void MappedBuffer::WriteBack() const {
  if (fd_ < 0 || map_ == nullptr) return;
  OF_CHECK(::msync(map_, cap_, MS_SYNC) == 0)
      << "one_embedding: writing the table's file '" << path_ << "' back failed: " << std::strerror(errno);
}

void MappedBuffer::DropPages(size_t first, size_t count) const {
  if (fd_ < 0 || map_ == nullptr || count == 0) return;
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t begin = first * page, len = std::min(count * page, cap_ - std::min(cap_, begin));
  if (len == 0) return;
  // as Evict, on the run (clean after WriteBack): unmapped here, dropped from the page cache
  ::madvise(map_ + begin, len, MADV_DONTNEED);
  ::posix_fadvise(fd_, static_cast<off_t>(begin), static_cast<off_t>(len), POSIX_FADV_DONTNEED);
}

void MappedBuffer::Evict() const {
  if (fd_ < 0 || map_ == nullptr) return;
  // written back (MAP_SHARED: the file is the storage), unmapped from this process, then dropped
  // from the page cache: fadvise drops only clean pages no one maps
  OF_CHECK(::msync(map_, cap_, MS_SYNC) == 0)
      << "one_embedding: writing the table's file '" << path_ << "' back failed: " << std::strerror(errno);
  ::madvise(map_, cap_, MADV_DONTNEED);
  ::posix_fadvise(fd_, 0, 0, POSIX_FADV_DONTNEED);
}

}  // namespace embedding
}  // namespace oneflow
