// The store's row array: Note [Rows on disk] in rows.h.
#include "embedding/rows.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/error.h"

namespace oneflow {
namespace embedding {

RowBuffer::~RowBuffer() {
  if (map_) munmap(map_, cap_ * sizeof(float));
  if (fd_ >= 0) {
    ::close(fd_);
    ::unlink(path_.c_str());
  }
}

RowBuffer::RowBuffer(RowBuffer&& o) noexcept
    : mem_(std::move(o.mem_)), path_(std::move(o.path_)), fd_(o.fd_), map_(o.map_), size_(o.size_), cap_(o.cap_) {
  o.fd_ = -1;
  o.map_ = nullptr;
  o.size_ = o.cap_ = 0;
}

void RowBuffer::OpenFile(const std::string& path) {
  OpScope scope("one_embedding");
  OF_CHECK(fd_ < 0 && mem_.empty()) << "the rows already have a place";
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
  OF_CHECK(fd_ >= 0) << "cannot create the table's row file '" << path << "': " << std::strerror(errno);
  path_ = path;
}

void RowBuffer::Grow(size_t n) {
  if (fd_ < 0) {
    mem_.resize(mem_.size() + n, 0.f);
    return;
  }
  const size_t need = size_ + n;
  if (need > cap_) {
    // (doubling, from 4 MiB: a file and mapping resize per doubling, never per row)
    const size_t cap = std::max({need, 2 * cap_, size_t(1) << 20});
    OpScope scope("one_embedding");
    OF_CHECK(::ftruncate(fd_, static_cast<off_t>(cap * sizeof(float))) == 0)
        << "cannot grow the table's row file '" << path_ << "' to " << cap * sizeof(float)
        << " bytes: " << std::strerror(errno);
    void* p = map_ ? mremap(map_, cap_ * sizeof(float), cap * sizeof(float), MREMAP_MAYMOVE)
                   : mmap(nullptr, cap * sizeof(float), PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    OF_CHECK(p != MAP_FAILED) << "cannot map the table's row file '" << path_ << "' ("
                              << cap * sizeof(float) << " bytes): " << std::strerror(errno);
    map_ = static_cast<float*>(p);
    cap_ = cap;
  }
  std::memset(map_ + size_, 0, n * sizeof(float));  // (rows reused after Clear)
  size_ = need;
}

void RowBuffer::Clear() {
  if (fd_ < 0) {
    mem_.clear();
    mem_.shrink_to_fit();
    return;
  }
  size_ = 0;
}

}  // namespace embedding
}  // namespace oneflow
