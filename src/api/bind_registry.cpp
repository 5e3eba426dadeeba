// Note [Binding registry] (api/bind_registry.h).
#include "api/bind_registry.h"

#include <algorithm>
#include <tuple>

#include "api/convert.h"

namespace oneflow::bind {

namespace {

struct Entry {
  int rank;
  std::string name;
  Binder fn;
};

// (function-local: the registrars of other files run at load, in an order C++ leaves open)
std::vector<Entry>& Entries() {
  static std::vector<Entry> entries;
  return entries;
}

std::vector<Entry> Sorted() {
  std::vector<Entry> e = Entries();
  std::sort(e.begin(), e.end(), [](const Entry& a, const Entry& b) {
    return std::tie(a.rank, a.name) < std::tie(b.rank, b.name);
  });
  return e;
}

}  // namespace

Registrar::Registrar(int rank, const char* name, Binder fn) { Entries().push_back({rank, name, fn}); }

void RunAll(nanobind::module_& m, TensorClass& cls) {
  for (const Entry& e : Sorted()) e.fn(m, cls);
}

std::vector<std::string> Names() {
  std::vector<std::string> names;
  for (const Entry& e : Sorted()) names.push_back(e.name);
  return names;
}

}  // namespace oneflow::bind
