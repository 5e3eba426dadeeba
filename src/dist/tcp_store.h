// The key-value store the processes of a job meet through (Note [Rendezvous]).
//
// Note [Rendezvous]: Gloo connects every pair of processes once each has published its address
// in a shared store (`connectFullMesh`). Debian's Gloo brings a file store (one shared folder)
// and a Redis one, but PyTorch's launchers and ours hand each process only MASTER_ADDR and
// MASTER_PORT, so the store here is a small TCP server run by rank 0 (as PyTorch's TCPStore):
// `set` stores bytes under a key, `get` waits until the key exists. Every process, rank 0
// included, is a client over one connection; the server answers each connection on a thread of
// its own, so a `get` waiting for a late rank blocks only its own caller.
#pragma once
#include <memory>
#include <mutex>

#include "dist/store.h"

namespace oneflow::dist {

class TcpStoreServer;

class TcpStore : public Store {
 public:
  // is_server: this process listens on `port` (all interfaces) before connecting to host:port.
  TcpStore(const std::string& host, int port, bool is_server, std::chrono::milliseconds timeout);
  ~TcpStore() override;

  void set(const std::string& key, const std::vector<char>& data) override;
  std::vector<char> get(const std::string& key) override;
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;
  int64_t add(const std::string& key, int64_t delta) override;
  bool check(const std::string& key) override;
  int port() const { return port_; }

 private:
  std::vector<char> Request(char cmd, const std::string& key, const std::vector<char>& value,
                            std::chrono::milliseconds timeout);

  std::shared_ptr<TcpStoreServer> server_;
  std::mutex mu_;  // one request at a time on the connection
  int fd_ = -1;
  std::string host_;
  int port_ = 0;
};

}  // namespace oneflow::dist
