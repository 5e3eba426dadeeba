// flow._C._OneEmbeddingStore and the snapshot readers/writers of flow.one_embedding
// (src/embedding/store.h, Note [Embedding store]). The Python layer
// (python/oneflow/one_embedding/) validates the user's arguments and hands over contiguous CPU
// tensors: int64 ids, int32 table ids, float32 gradients; the checks here guard the kernels.
#include <cstring>

#include <nanobind/stl/pair.h>
#include <nanobind/stl/tuple.h>

#include "api/bind_registry.h"
#include "api/convert.h"
#include "embedding/store.h"
#include "decl/empty.h"

namespace oneflow {
namespace {

using embedding::Initializer;
using embedding::Store;
using embedding::UpdateOptions;

const Tensor& CpuArg(nb::handle h, DType dtype, const char* what, const char* fn) {
  OF_CHECK_TYPE(IsTensor(h)) << fn << ": " << what << " must be a Tensor, got " << nb::inst_name(h).c_str();
  const Tensor& t = ToTensor(h);
  CheckHasData(t);
  OF_CHECK_TYPE(t.dtype() == dtype) << fn << ": " << what << " must be " << DTypeName(dtype)
                                    << ", got " << DTypeName(t.dtype());
  OF_CHECK(t.device().is_cpu() && t.is_contiguous())
      << fn << ": " << what << " must be a contiguous CPU tensor";
  return t;
}

const int32_t* TableIds(nb::handle h, int64_t n, const char* fn) {
  if (h.is_none()) return nullptr;
  const Tensor& t = CpuArg(h, DType::kInt32, "table_ids", fn);
  OF_CHECK_VALUE(t.numel() == n) << fn << ": " << n << " ids but " << t.numel() << " table ids";
  return t.data<int32_t>();
}

Initializer::Kind InitKind(const std::string& s) {
  if (s == "uniform") return Initializer::kUniform;
  if (s == "normal") return Initializer::kNormal;
  if (s == "constant") return Initializer::kConstant;
  OF_CHECK_VALUE(s == "trunc_normal") << "one_embedding: unknown initializer type '" << s << "'";
  return Initializer::kTruncNormal;
}

UpdateOptions ToOptions(const nb::dict& d) {
  UpdateOptions o;
  const std::string kind = nb::cast<std::string>(d["kind"]);
  if (kind == "sgd") o.kind = UpdateOptions::kSGD;
  else if (kind == "adam") o.kind = UpdateOptions::kAdam;
  else if (kind == "adagrad") o.kind = UpdateOptions::kAdagrad;
  else if (kind == "ftrl") o.kind = UpdateOptions::kFtrl;
  else if (kind == "smart_decay_adam") o.kind = UpdateOptions::kSmartDecayAdam;
  else OF_THROW(kNotImplemented) << "one_embedding: no sparse update named '" << kind << "'";
  auto num = [&](const char* k, double& v) { if (d.contains(k)) v = nb::cast<double>(d[k]); };
  auto flag = [&](const char* k, bool& v) { if (d.contains(k)) v = nb::cast<bool>(d[k]); };
  num("lr", o.lr); num("weight_decay", o.weight_decay); num("momentum", o.momentum);
  num("dampening", o.dampening); flag("nesterov", o.nesterov); num("beta1", o.beta1);
  num("beta2", o.beta2); num("eps", o.eps); flag("do_bias_correction", o.do_bias_correction);
  flag("decoupled_weight_decay", o.decoupled_weight_decay); num("lr_decay", o.lr_decay);
  num("initial_accumulator_value", o.initial_accumulator_value); num("lr_power", o.lr_power);
  num("lambda1", o.lambda1); num("lambda2", o.lambda2); num("beta", o.beta);
  if (d.contains("step")) o.step = nb::cast<int64_t>(d["step"]);
  return o;
}

using TableInits = std::vector<std::vector<std::tuple<std::string, double, double, double, double>>>;

std::vector<std::vector<Initializer>> ToInits(const TableInits& tables) {
  std::vector<std::vector<Initializer>> inits;
  for (const auto& t : tables) {
    std::vector<Initializer> cols;
    for (const auto& [kind, a, b, c, d] : t) cols.push_back(Initializer{InitKind(kind), a, b, c, d});
    inits.push_back(std::move(cols));
  }
  return inits;
}

nb::object Lookup(Store& s, nb::handle ids_h, nb::handle tables_h, std::optional<int64_t> padding) {
  const char* fn = "one_embedding lookup";
  const Tensor& ids = CpuArg(ids_h, DType::kInt64, "ids", fn);
  const int64_t n = ids.numel();
  const int32_t* tables = TableIds(tables_h, n, fn);
  Tensor out = Empty(DimVector{n, s.embedding_dim()}, DType::kFloat32);
  {
    nb::gil_scoped_release nogil;
    s.Lookup(ids.data<int64_t>(), tables, n, padding.has_value(), padding.value_or(0), out.data<float>());
  }
  return Wrap(out);
}

void Update(Store& s, nb::handle ids_h, nb::handle tables_h, nb::handle grads_h,
            std::optional<int64_t> padding, const nb::dict& options, bool unique) {
  const char* fn = "one_embedding update";
  const Tensor& ids = CpuArg(ids_h, DType::kInt64, "ids", fn);
  const int64_t n = ids.numel();
  const int32_t* tables = TableIds(tables_h, n, fn);
  const Tensor& g = CpuArg(grads_h, DType::kFloat32, "gradient", fn);
  OF_CHECK_VALUE(g.numel() == n * s.embedding_dim())
      << fn << ": the gradient has " << g.numel() << " elements, expected " << n << " x "
      << s.embedding_dim();
  const UpdateOptions o = ToOptions(options);
  nb::gil_scoped_release nogil;
  s.Update(ids.data<int64_t>(), tables, g.data<float>(), n, padding.has_value(), padding.value_or(0), o, unique);
}

nb::object Read(const Store& s, nb::handle ids_h) {
  const Tensor& ids = CpuArg(ids_h, DType::kInt64, "ids", "one_embedding read");
  const int64_t n = ids.numel();
  Tensor out = Empty(DimVector{n, s.storage_dim()}, DType::kFloat32);
  Tensor found = Empty(DimVector{n}, DType::kBool);
  s.Read(ids.data<int64_t>(), n, out.data<float>(), found.data<uint8_t>());
  return nb::make_tuple(Wrap(out), Wrap(found));
}

void Write(Store& s, nb::handle ids_h, nb::handle rows_h, bool state_ready) {
  const char* fn = "one_embedding write";
  const Tensor& ids = CpuArg(ids_h, DType::kInt64, "ids", fn);
  const Tensor& rows = CpuArg(rows_h, DType::kFloat32, "values", fn);
  OF_CHECK_VALUE(rows.numel() == ids.numel() * s.storage_dim())
      << fn << ": " << ids.numel() << " keys need " << ids.numel() << " x " << s.storage_dim()
      << " values, got " << rows.numel();
  s.Write(ids.data<int64_t>(), ids.numel(), rows.data<float>(), state_ready);
}

template <typename T>
nb::object VectorTensor(const std::vector<T>& v, DimVector sizes, DType dtype) {
  Tensor t = Empty(sizes, dtype);
  if (!v.empty()) std::memcpy(t.raw_data(), v.data(), v.size() * sizeof(T));
  return Wrap(t);
}

}  // namespace

void BindOneEmbedding(nb::module_& m) {
  nb::class_<Store>(m, "_OneEmbeddingStore")
      .def("__init__", [](Store* self, const std::vector<int64_t>& column_dims, int64_t storage_dim,
                          const TableInits& tables, uint64_t seed, int64_t capacity_hint,
                          const std::string& rows_file, int64_t cache_budget) {
             new (self) Store(column_dims, storage_dim, ToInits(tables), seed, capacity_hint, rows_file, cache_budget);
           }, "column_dims"_a, "storage_dim"_a, "tables"_a, "seed"_a, "capacity_hint"_a, "rows_file"_a = "",
           "cache_budget"_a = 0)
      .def_prop_ro("index_on_disk", &Store::index_on_disk)
      .def_prop_ro("index_memory_bytes", &Store::index_memory_bytes)
      .def_prop_ro("index_peak_bytes", &Store::index_peak_bytes)
      .def_prop_ro("cache_resident_bytes", &Store::cache_resident_bytes)
      .def_prop_ro("row_cache_budget", &Store::row_cache_budget)
      .def_prop_ro("cache_evictions", &Store::cache_evictions)
      .def("evict_cache", &Store::EvictCache)
      .def_prop_ro("embedding_dim", &Store::embedding_dim)
      .def_prop_ro("storage_dim", &Store::storage_dim)
      .def_prop_ro("num_tables", &Store::num_tables)
      .def_prop_ro("rows_on_disk", &Store::rows_on_disk)
      .def("__len__", &Store::size)
      .def("lookup", &Lookup, "ids"_a, "table_ids"_a.none(), "padding_idx"_a.none())
      .def("update", &Update, "ids"_a, "table_ids"_a.none(), "grads"_a, "padding_idx"_a.none(), "options"_a,
           "unique"_a = false)
      .def("read", &Read, "ids"_a)
      .def("write", &Write, "ids"_a, "values"_a, "state_ready"_a)
      .def("keys", [](const Store& s) {
        Tensor t = Empty(DimVector{s.size()}, DType::kInt64);
        if (s.size()) std::memcpy(t.raw_data(), s.keys(), s.size() * sizeof(int64_t));
        return Wrap(t);
      })
      .def_prop_ro("num_slots", &Store::num_slots)
      .def("copy_rows_from", [](Store& s, const Store& other) {
        // (a deep copy of an embedding: every row with its state flag)
        OF_CHECK_VALUE(other.storage_dim() == s.storage_dim()) << "one_embedding: rows of " << other.storage_dim()
                                                               << " floats into a store of " << s.storage_dim();
        for (int64_t r = 0; r < other.size(); ++r)
          s.Write(&other.keys()[r], 1, other.values() + r * other.storage_dim(), other.state_ready()[r] != 0);
      })
      .def("clear", &Store::Clear)
      .def("set_name", &Store::SetName, "name"_a)
      .def("save", [](const Store& s, const std::string& path) {
        nb::gil_scoped_release nogil;
        embedding::SaveSnapshot(s, path);
      })
      .def("load", [](Store& s, const std::string& path) {
        nb::gil_scoped_release nogil;
        embedding::LoadSnapshot(s, path);
      });
  // (first appearances, summed gradients, their 2-norm): Coalesce of store.h
  m.def("_one_embedding_coalesce", [](nb::handle ids_h, nb::handle grads_h, std::optional<int64_t> padding) {
    const char* fn = "one_embedding coalesce";
    const Tensor& ids = CpuArg(ids_h, DType::kInt64, "ids", fn);
    const Tensor& g = CpuArg(grads_h, DType::kFloat32, "gradient", fn);
    const int64_t n = ids.numel();
    OF_CHECK_VALUE(g.dim() == 2 && g.size(0) == n) << fn << ": the gradient must be (" << n << ", dim)";
    const int64_t d = g.size(1);
    embedding::Coalesced c;
    double norm;
    {
      nb::gil_scoped_release nogil;
      c = embedding::Coalesce(ids.data<int64_t>(), g.data<float>(), n, d, padding.has_value(), padding.value_or(0));
      norm = c.Norm();
    }
    const int64_t u = static_cast<int64_t>(c.first.size());
    return nb::make_tuple(VectorTensor(c.first, DimVector{u}, DType::kInt64),
                          VectorTensor(c.summed, DimVector{u, d}, DType::kFloat32), norm);
  }, "ids"_a, "grads"_a, "padding_idx"_a.none());
  // (a snapshot read a chunk at a time: checked whole first, then ranges of keys)
  m.def("_one_embedding_check_snapshot", [](const std::string& path) {
    nb::gil_scoped_release nogil;
    return embedding::CheckSnapshot(path);
  });
  m.def("_one_embedding_read_snapshot_rows", [](const std::string& path, int64_t storage_dim, int64_t n,
                                                int64_t begin, int64_t count) {
    embedding::SnapshotData d;
    {
      nb::gil_scoped_release nogil;
      d = embedding::ReadSnapshotRows(path, storage_dim, n, begin, count);
    }
    const int64_t m = static_cast<int64_t>(d.keys.size());
    return nb::make_tuple(VectorTensor(d.keys, DimVector{m}, DType::kInt64),
                          VectorTensor(d.values, DimVector{m, d.storage_dim}, DType::kFloat32),
                          VectorTensor(d.state_ready, DimVector{m}, DType::kBool));
  });
  m.def("_one_embedding_write_snapshot", [](const std::string& path, nb::handle keys_h, nb::handle values_h) {
    const char* fn = "one_embedding write_snapshot";
    const Tensor& keys = CpuArg(keys_h, DType::kInt64, "keys", fn);
    const Tensor& values = CpuArg(values_h, DType::kFloat32, "values", fn);
    const int64_t n = keys.numel();
    OF_CHECK_VALUE(values.dim() == 2 && values.size(0) == n && values.size(1) > 0)
        << fn << ": values must be (number of keys, storage_dim)";
    // rows written from outside carry no optimizer state: the first update initialises it
    std::vector<uint8_t> ready(n, 0);
    embedding::WriteSnapshot(path, values.size(1), keys.data<int64_t>(), ready.data(),
                             values.data<float>(), n);
  });
}
OF_BIND(130, BindOneEmbedding);

}  // namespace oneflow
