// FileStore (store.h).
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <thread>

#include "core/error.h"
#include "dist/store.h"

namespace oneflow::dist {
namespace {

bool ReadFile(const std::string& path, std::vector<char>* out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  out->assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  return true;
}

void WriteFile(const std::string& path, const std::vector<char>& data) {
  std::string tmp = path + ".tmp" + std::to_string(getpid());
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    OF_CHECK(f) << "distributed: the file store cannot write " << tmp << ": " << std::strerror(errno);
    f.write(data.data(), data.size());
    OF_CHECK(f.good()) << "distributed: the file store could not write " << tmp;
  }
  OF_CHECK(std::rename(tmp.c_str(), path.c_str()) == 0)
      << "distributed: the file store cannot rename " << tmp << ": " << std::strerror(errno);
}

}  // namespace

FileStore::FileStore(const std::string& dir, std::chrono::milliseconds timeout) : Store(timeout), dir_(dir) {
  struct stat st {};
  OF_CHECK_VALUE(stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
      << "distributed: the file store's folder " << dir << " does not exist";
}

std::string FileStore::Path(const std::string& key) const {
  std::string name;
  for (char c : key) name += (c == '/' ? '%' : c);  // one flat folder
  return dir_ + "/" + name;
}

void FileStore::set(const std::string& key, const std::vector<char>& data) { WriteFile(Path(key), data); }

bool FileStore::check(const std::string& key) { return access(Path(key).c_str(), F_OK) == 0; }

void FileStore::wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (const auto& k : keys) {
    while (!check(k)) {
      OF_CHECK(std::chrono::steady_clock::now() < deadline)
          << "distributed: timed out after " << timeout.count() << " ms waiting for key '" << k
          << "' in the store: a process of the job did not arrive";
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
}

std::vector<char> FileStore::get(const std::string& key) {
  wait({key}, timeout_);
  std::vector<char> v;
  OF_CHECK(ReadFile(Path(key), &v)) << "distributed: the file store cannot read key '" << key << "'";
  return v;
}

int64_t FileStore::add(const std::string& key, int64_t delta) {
  std::string lock = dir_ + "/.lock";
  int fd = open(lock.c_str(), O_CREAT | O_RDWR, 0644);
  OF_CHECK(fd >= 0) << "distributed: the file store cannot open " << lock << ": " << std::strerror(errno);
  flock(fd, LOCK_EX);
  int64_t v = 0;
  std::vector<char> cur;
  if (ReadFile(Path(key), &cur) && cur.size() == sizeof v) std::memcpy(&v, cur.data(), sizeof v);
  v += delta;
  std::vector<char> out(sizeof v);
  std::memcpy(out.data(), &v, sizeof v);
  try {
    WriteFile(Path(key), out);
  } catch (...) {
    flock(fd, LOCK_UN);
    close(fd);
    throw;
  }
  flock(fd, LOCK_UN);
  close(fd);
  return v;
}

}  // namespace oneflow::dist
