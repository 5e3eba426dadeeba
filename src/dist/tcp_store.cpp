// Note [Rendezvous] (tcp_store.h). The wire format, both ways: a command byte, then
// length-prefixed fields (u32 key length + key, u64 value length + value); the server answers
// every command with one u64-length-prefixed value.
#include "dist/tcp_store.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <map>
#include <thread>

#include "core/error.h"

namespace oneflow::dist {
namespace {

constexpr char kSet = 's', kGet = 'g', kAdd = 'a', kCheck = 'c';

// Reads or writes exactly n bytes; false when the peer closed or the deadline passed.
bool ReadAll(int fd, void* buf, size_t n, int timeout_ms = -1) {
  char* p = static_cast<char*>(buf);
  while (n > 0) {
    if (timeout_ms >= 0) {
      pollfd pfd{fd, POLLIN, 0};
      int r = poll(&pfd, 1, timeout_ms);
      if (r == 0) return false;
      if (r < 0 && errno != EINTR) return false;
      if (r < 0) continue;
    }
    ssize_t got = ::recv(fd, p, n, 0);
    if (got == 0) return false;
    if (got < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += got;
    n -= got;
  }
  return true;
}

bool WriteAll(int fd, const void* buf, size_t n) {
  const char* p = static_cast<const char*>(buf);
  while (n > 0) {
    ssize_t put = ::send(fd, p, n, MSG_NOSIGNAL);
    if (put < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += put;
    n -= put;
  }
  return true;
}

bool WriteBytes(int fd, const std::vector<char>& v) {
  uint64_t n = v.size();
  return WriteAll(fd, &n, sizeof n) && WriteAll(fd, v.data(), v.size());
}

bool ReadBytes(int fd, std::vector<char>* v, int timeout_ms = -1) {
  uint64_t n = 0;
  if (!ReadAll(fd, &n, sizeof n, timeout_ms)) return false;
  v->resize(n);
  return ReadAll(fd, v->data(), n, timeout_ms);
}

std::vector<char> IntBytes(int64_t x) {
  std::vector<char> v(sizeof x);
  std::memcpy(v.data(), &x, sizeof x);
  return v;
}

}  // namespace

// The server's state outlives the object while connection threads still run (they hold it).
class TcpStoreServer : public std::enable_shared_from_this<TcpStoreServer> {
 public:
  int Listen(int port) {
    // IPv6 with IPv4-mapped addresses where the kernel has it, else IPv4.
    int err = 0;
    for (int family : {AF_INET6, AF_INET}) {
      listen_fd_ = socket(family, SOCK_STREAM, 0);
      if (listen_fd_ < 0) {
        err = errno;
        continue;
      }
      int one = 1, zero = 0;
      setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
      sockaddr_storage addr{};
      socklen_t addr_len;
      if (family == AF_INET6) {
        setsockopt(listen_fd_, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);  // IPv4 clients too
        auto* a = reinterpret_cast<sockaddr_in6*>(&addr);
        a->sin6_family = AF_INET6;
        a->sin6_addr = in6addr_any;
        a->sin6_port = htons(port);
        addr_len = sizeof(sockaddr_in6);
      } else {
        auto* a = reinterpret_cast<sockaddr_in*>(&addr);
        a->sin_family = AF_INET;
        a->sin_addr.s_addr = htonl(INADDR_ANY);
        a->sin_port = htons(port);
        addr_len = sizeof(sockaddr_in);
      }
      if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), addr_len) == 0 && listen(listen_fd_, 128) == 0) {
        sockaddr_storage bound{};
        socklen_t len = sizeof bound;
        getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&bound), &len);
        int actual = family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                                        : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
        std::thread([self = shared_from_this()] { self->AcceptLoop(); }).detach();
        return actual;
      }
      err = errno;
      close(listen_fd_);
      listen_fd_ = -1;
      if (err == EADDRINUSE) break;  // (the port is taken: IPv4 would not do better)
    }
    OF_THROW(kRuntime) << "distributed: the store could not listen on port " << port << " (" << std::strerror(err)
                       << "); is MASTER_PORT used by another job?";
  }

  void Stop() {
    stopping_ = true;
    ::shutdown(listen_fd_, SHUT_RDWR);  // wakes accept()
    close(listen_fd_);
    std::lock_guard<std::mutex> lock(mu_);
    cv_.notify_all();
  }

 private:
  void AcceptLoop() {
    while (!stopping_) {
      int fd = accept(listen_fd_, nullptr, nullptr);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        return;
      }
      int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      std::thread([self = shared_from_this(), fd] { self->Serve(fd); }).detach();
    }
  }

  void Serve(int fd) {
    for (;;) {
      char cmd;
      uint32_t klen;
      if (!ReadAll(fd, &cmd, 1) || !ReadAll(fd, &klen, sizeof klen)) break;
      std::string key(klen, '\0');
      std::vector<char> value;
      if (!ReadAll(fd, key.data(), klen) || !ReadBytes(fd, &value)) break;
      std::vector<char> reply;
      {
        std::unique_lock<std::mutex> lock(mu_);
        if (cmd == kSet) {
          data_[key] = std::move(value);
          cv_.notify_all();
        } else if (cmd == kGet) {
          // The client bounds the wait by its own timeout: it stops reading and closes.
          cv_.wait(lock, [&] { return stopping_ || data_.count(key); });
          if (stopping_) break;
          reply = data_[key];
        } else if (cmd == kAdd) {
          int64_t cur = 0, delta = 0;
          auto it = data_.find(key);
          if (it != data_.end() && it->second.size() == sizeof cur) std::memcpy(&cur, it->second.data(), sizeof cur);
          if (value.size() == sizeof delta) std::memcpy(&delta, value.data(), sizeof delta);
          data_[key] = reply = IntBytes(cur + delta);
          cv_.notify_all();
        } else if (cmd == kCheck) {
          reply = IntBytes(data_.count(key) ? 1 : 0);
        } else {
          break;
        }
      }
      if (!WriteBytes(fd, reply)) break;
    }
    close(fd);
  }

  int listen_fd_ = -1;
  std::atomic<bool> stopping_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, std::vector<char>> data_;
};

namespace {

// Connects to host:port, retrying until the server is up or the timeout has passed.
int Connect(const std::string& host, int port, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string last_error = "timed out";
  for (;;) {
    addrinfo hints{}, *res = nullptr;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    int gai = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res);
    OF_CHECK(gai == 0) << "distributed: cannot resolve the store's address '" << host << "': " << gai_strerror(gai);
    for (addrinfo* ai = res; ai; ai = ai->ai_next) {
      int fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
      if (fd < 0) continue;
      if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
        freeaddrinfo(res);
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        return fd;
      }
      last_error = std::strerror(errno);
      close(fd);
    }
    freeaddrinfo(res);
    OF_CHECK(std::chrono::steady_clock::now() < deadline)
        << "distributed: could not reach the store at " << host << ":" << port << " (" << last_error
        << "); is rank 0 running and MASTER_ADDR / MASTER_PORT the same in every process?";
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace

TcpStore::TcpStore(const std::string& host, int port, bool is_server, std::chrono::milliseconds timeout)
    : Store(timeout), port_(port) {
  if (is_server) {
    server_ = std::make_shared<TcpStoreServer>();
    port_ = server_->Listen(port);
  }
  host_ = is_server ? std::string("127.0.0.1") : host;
  fd_ = Connect(host_, port_, timeout);
}

TcpStore::~TcpStore() {
  if (fd_ >= 0) close(fd_);
  if (server_) server_->Stop();
}

std::vector<char> TcpStore::Request(char cmd, const std::string& key, const std::vector<char>& value,
                                    std::chrono::milliseconds timeout) {
  std::lock_guard<std::mutex> lock(mu_);
  if (fd_ < 0) fd_ = Connect(host_, port_, timeout_);  // (dropped by an earlier timeout)
  uint32_t klen = key.size();
  bool ok = WriteAll(fd_, &cmd, 1) && WriteAll(fd_, &klen, sizeof klen) && WriteAll(fd_, key.data(), klen) &&
            WriteBytes(fd_, value);
  std::vector<char> reply;
  int ms = timeout.count() > 0 ? static_cast<int>(timeout.count()) : -1;
  if (ok && ReadBytes(fd_, &reply, ms)) return reply;
  // The connection is out of step (a reply may still come): drop it; later requests fail clearly.
  close(fd_);
  fd_ = -1;
  OF_CHECK(ok) << "distributed: lost the connection to the store (did rank 0 exit?)";
  OF_THROW(kRuntime) << "distributed: timed out after " << timeout.count() << " ms waiting for key '" << key
                     << "' in the store: a process of the job did not arrive";
}

void TcpStore::set(const std::string& key, const std::vector<char>& data) { Request(kSet, key, data, timeout_); }

std::vector<char> TcpStore::get(const std::string& key) { return Request(kGet, key, {}, timeout_); }

void TcpStore::wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  for (const auto& k : keys) Request(kGet, k, {}, timeout);
}

int64_t TcpStore::add(const std::string& key, int64_t delta) {
  std::vector<char> r = Request(kAdd, key, IntBytes(delta), timeout_);
  int64_t v = 0;
  std::memcpy(&v, r.data(), sizeof v);
  return v;
}

bool TcpStore::check(const std::string& key) {
  std::vector<char> r = Request(kCheck, key, {}, timeout_);
  int64_t v = 0;
  std::memcpy(&v, r.data(), sizeof v);
  return v != 0;
}

}  // namespace oneflow::dist
