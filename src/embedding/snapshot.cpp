// Snapshots of the embedding store: Note [Embedding snapshots] in store.h.
//
// Layout (little-endian, as the host): "OFEMBSNP", u32 version, u32 0, i64 storage_dim, i64 n,
// n i64 keys, n u8 state flags, n * storage_dim f32 values, u64 checksum of everything before it.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/error.h"
#include "embedding/store.h"

namespace oneflow {
namespace embedding {
namespace {

constexpr char kMagic[8] = {'O', 'F', 'E', 'M', 'B', 'S', 'N', 'P'};
constexpr uint32_t kVersion = 1;

// FNV-1a over the bytes, 8 at a time (a damaged file's check, not a cryptographic one).
struct Checksum {
  uint64_t h = 0xcbf29ce484222325ULL;
  void Add(const void* p, size_t n) {
    const unsigned char* b = static_cast<const unsigned char*>(p);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      uint64_t w;
      std::memcpy(&w, b + i, 8);
      h = (h ^ w) * 0x100000001b3ULL;
    }
    for (; i < n; ++i) h = (h ^ b[i]) * 0x100000001b3ULL;
  }
};

class Writer {
 public:
  explicit Writer(const std::string& path) : path_(path) {
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    OF_CHECK(fd_ >= 0) << "cannot create '" << path
                       << "': " << std::strerror(errno);
  }
  ~Writer() {
    if (fd_ >= 0) ::close(fd_);
  }
  void Put(const void* p, size_t n) {
    sum_.Add(p, n);
    Raw(p, n);
  }
  void Finish() {
    const uint64_t h = sum_.h;
    Raw(&h, sizeof h);
    OF_CHECK(::fsync(fd_) == 0) << "fsync of '" << path_
                                << "' failed: " << std::strerror(errno);
    ::close(fd_);
    fd_ = -1;
  }

 private:
  void Raw(const void* p, size_t n) {
    const char* c = static_cast<const char*>(p);
    while (n > 0) {
      const ssize_t w = ::write(fd_, c, n);
      if (w < 0 && errno == EINTR) continue;
      OF_CHECK(w > 0) << "writing '" << path_
                      << "' failed: " << std::strerror(errno);
      c += w;
      n -= static_cast<size_t>(w);
    }
  }
  std::string path_;
  int fd_ = -1;
  Checksum sum_;
};

class Reader {
 public:
  explicit Reader(const std::string& path) : path_(path) {
    f_ = std::fopen(path.c_str(), "rb");
    OF_CHECK(f_ != nullptr) << "cannot open '" << path
                            << "': " << std::strerror(errno);
  }
  ~Reader() {
    if (f_) std::fclose(f_);
  }
  void Get(void* p, size_t n) {
    OF_CHECK(std::fread(p, 1, n, f_) == n)
        << "'" << path_ << "' is truncated (not a complete snapshot)";
    sum_.Add(p, n);
  }
  void Verify() {
    uint64_t h = 0;
    OF_CHECK(std::fread(&h, 1, sizeof h, f_) == sizeof h && h == sum_.h)
        << "'" << path_ << "' is damaged (checksum mismatch)";
  }

 private:
  std::string path_;
  FILE* f_ = nullptr;
  Checksum sum_;
};

void SyncDir(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd >= 0) {
    ::fsync(fd);  // (the rename's directory entry on disk; best effort, as some filesystems refuse)
    ::close(fd);
  }
}

}  // namespace

void WriteSnapshot(const std::string& path, int64_t storage_dim, const int64_t* keys,
                   const uint8_t* state_ready, const float* values, int64_t n) {
  OpScope scope("one_embedding save_snapshot");
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    Writer w(tmp);
    const uint32_t head[2] = {kVersion, 0};
    const int64_t dims[2] = {storage_dim, n};
    w.Put(kMagic, sizeof kMagic);
    w.Put(head, sizeof head);
    w.Put(dims, sizeof dims);
    w.Put(keys, n * sizeof(int64_t));
    w.Put(state_ready, n);
    w.Put(values, n * storage_dim * sizeof(float));
    w.Finish();
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    OF_THROW(kRuntime) << "cannot rename '" << tmp << "' to '" << path
                       << "': " << std::strerror(err);
  }
  SyncDir(path);
}

namespace {

// The header of a snapshot: (storage_dim, number of keys), checked.
std::pair<int64_t, int64_t> ReadHeader(Reader& r, const std::string& path) {
  char magic[8];
  uint32_t head[2];
  int64_t dims[2];
  r.Get(magic, sizeof magic);
  OF_CHECK(std::memcmp(magic, kMagic, sizeof magic) == 0)
      << "'" << path << "' is not a one_embedding snapshot";
  r.Get(head, sizeof head);
  OF_CHECK(head[0] == kVersion) << "'" << path
                                << "' has format version " << head[0] << ", expected " << kVersion;
  r.Get(dims, sizeof dims);
  OF_CHECK(dims[0] > 0 && dims[1] >= 0 && dims[1] < (int64_t(1) << 40))
      << "'" << path << "' has a corrupt header";
  return {dims[0], dims[1]};
}

constexpr int64_t kHeaderBytes = 8 + 8 + 16;

// Reads [offset, offset + n) of the file (pread: the three regions of a load are read side by
// side without moving one stream back and forth).
void ReadAt(int fd, const std::string& path, int64_t offset, void* p, size_t n) {
  char* c = static_cast<char*>(p);
  while (n > 0) {
    const ssize_t got = ::pread(fd, c, n, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    OF_CHECK(got > 0) << "'" << path << "' is truncated (not a complete snapshot)";
    c += got;
    offset += got;
    n -= static_cast<size_t>(got);
  }
}

}  // namespace

std::pair<int64_t, int64_t> CheckSnapshot(const std::string& path) {
  OpScope scope("one_embedding load_snapshot");
  // the header, then the checksum over every byte, a chunk at a time (region by region, in
  // chunks of a multiple of 8 bytes: the checksum takes 8 bytes at a time, so it must see the
  // bytes cut where the writer's Put calls cut them)
  Reader r(path);
  const auto [storage_dim, n] = ReadHeader(r, path);
  std::vector<char> buf(size_t(1) << 20);
  for (int64_t left : {8 * n, n, 4 * storage_dim * n}) {
    while (left > 0) {
      const size_t take = static_cast<size_t>(std::min<int64_t>(left, static_cast<int64_t>(buf.size())));
      r.Get(buf.data(), take);
      left -= static_cast<int64_t>(take);
    }
  }
  r.Verify();
  return {storage_dim, n};
}

SnapshotData ReadSnapshotRows(const std::string& path, int64_t storage_dim, int64_t n, int64_t begin,
                              int64_t count) {
  OpScope scope("one_embedding load_snapshot");
  OF_CHECK_INDEX(begin >= 0 && count >= 0 && begin + count <= n)
      << "rows [" << begin << ", " << begin + count << ") of a snapshot of " << n << " keys";
  const int fd = ::open(path.c_str(), O_RDONLY);
  OF_CHECK(fd >= 0) << "cannot open '" << path << "': " << std::strerror(errno);
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  SnapshotData d;
  d.storage_dim = storage_dim;
  d.keys.resize(count);
  d.state_ready.resize(count);
  d.values.resize(count * storage_dim);
  const int64_t flags_at = kHeaderBytes + 8 * n, values_at = flags_at + n;
  ReadAt(fd, path, kHeaderBytes + 8 * begin, d.keys.data(), count * sizeof(int64_t));
  ReadAt(fd, path, flags_at + begin, d.state_ready.data(), count);
  ReadAt(fd, path, values_at + 4 * begin * storage_dim, d.values.data(), count * storage_dim * sizeof(float));
  return d;
}

void SaveSnapshot(const Store& store, const std::string& path) {
  WriteSnapshot(path, store.storage_dim(), store.keys(), store.state_ready(), store.values(), store.size());
  if (store.row_cache_budget() > 0) store.EvictCache();  // (the save read every page: Note [Row cache])
}

void LoadSnapshot(Store& store, const std::string& path) {
  // A table may exceed memory (Note [Tables on disk]), so the snapshot is never held whole: a
  // first pass checks it, and only a whole file replaces the table; the second pass inserts it
  // a chunk of keys at a time.
  const auto [storage_dim, n] = CheckSnapshot(path);
  OpScope scope("one_embedding load_snapshot");
  OF_CHECK_VALUE(storage_dim == store.storage_dim())
      << "'" << path << "' holds rows of " << storage_dim
      << " floats, the embedding's storage_dim is " << store.storage_dim();
  // The snapshot replaces the table (rows made after it was saved are dropped), as upstream;
  // rows with and without optimizer state keep their flags.
  store.Clear();
  for (int64_t b = 0; b < n; b += kSnapshotChunk) {
    const SnapshotData d = ReadSnapshotRows(path, storage_dim, n, b, std::min(kSnapshotChunk, n - b));
    // (keys of one state flag written together: usually the whole chunk)
    for (size_t i = 0, j; i < d.keys.size(); i = j) {
      for (j = i + 1; j < d.keys.size() && d.state_ready[j] == d.state_ready[i];) ++j;
      store.Write(&d.keys[i], static_cast<int64_t>(j - i), d.values.data() + i * storage_dim, d.state_ready[i] != 0);
    }
  }
}

}  // namespace embedding
}  // namespace oneflow
