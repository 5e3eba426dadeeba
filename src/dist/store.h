// The key-value stores processes meet through (Note [Rendezvous] in tcp_store.h): Gloo's
// connections and NCCL's unique id are exchanged through them. Ours, not Gloo's, so that a
// build with only one of the two collective libraries still has them.
#pragma once
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace oneflow::dist {

class Store {
 public:
  explicit Store(std::chrono::milliseconds timeout) : timeout_(timeout) {}
  virtual ~Store() = default;
  virtual void set(const std::string& key, const std::vector<char>& data) = 0;
  // Waits (up to the store's timeout) until the key exists.
  virtual std::vector<char> get(const std::string& key) = 0;
  virtual void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) = 0;
  // Adds `delta` to the integer stored under `key` (0 when absent) and returns the sum.
  virtual int64_t add(const std::string& key, int64_t delta) = 0;
  virtual bool check(const std::string& key) = 0;
  std::chrono::milliseconds timeout() const { return timeout_; }

 protected:
  std::chrono::milliseconds timeout_;
};

// A store in a folder of a file system every process sees: a file per key, written to a
// temporary name and renamed (readers never see half a value); add() holds an flock.
class FileStore : public Store {
 public:
  FileStore(const std::string& dir, std::chrono::milliseconds timeout);
  void set(const std::string& key, const std::vector<char>& data) override;
  std::vector<char> get(const std::string& key) override;
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;
  int64_t add(const std::string& key, int64_t delta) override;
  bool check(const std::string& key) override;

 private:
  std::string Path(const std::string& key) const;
  std::string dir_;
};

}  // namespace oneflow::dist
