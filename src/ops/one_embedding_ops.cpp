// Upstream OneFlow's one_embedding functional ops (src/ops/table/one_embedding.yaml): id
// deduplication and the one-rank shuffles, and the per-row optimizer updates as OneFlow's kernels
// compute them (oneflow/user/kernels/one_embedding_update_kernels.cu over the functors of
// model_update_kernel_util.h). They run on the host (ids are small next to the tables; a CUDA
// tensor is copied over and the results copied back) in float64 per element, rounded once.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <tuple>
#include <vector>

#include "core/error.h"
#include "core/parallel.h"
#include "core/shape.h"
#include "embedding/store.h"
#include "ops/copy.h"
#include "decl/contiguous.h"
#include "decl/empty.h"
#include "decl/one_embedding_adagrad_update.h"
#include "decl/one_embedding_adam_update.h"
#include "decl/one_embedding_embedding_gradient_shuffle.h"
#include "decl/one_embedding_embedding_put.h"
#include "decl/one_embedding_embedding_shuffle.h"
#include "decl/one_embedding_ftrl_update.h"
#include "decl/one_embedding_id_shuffle.h"
#include "decl/one_embedding_lookup.h"
#include "decl/one_embedding_sgd_update.h"
#include "decl/one_embedding_unique_key_value_pair.h"

namespace oneflow {

namespace {

// A contiguous host copy of t in `dtype`.
Tensor Host(const Tensor& t, DType dtype) {
  CheckHasData(t);
  return Contiguous(CastTo(OnHost(t), dtype));
}

void CheckIds(const Tensor& t, const char* what) {
  OF_CHECK_TYPE(IsIntegral(t.dtype(), false))
      << what << " must be an integer tensor, got " << DTypeName(t.dtype());
}

// ---- unique ids ----------------------------------------------------------------------------

struct Deduped {
  std::vector<int64_t> keys, values;  // distinct keys in order of first appearance, their value
  std::vector<int32_t> inverse;       // keys[i] == unique keys[inverse[i]]
};

// Deduplicates keys (open addressing over a power-of-two table at most half full).
Deduped Deduplicate(const int64_t* keys, const int64_t* values, int64_t n, int64_t num_tables) {
  OF_CHECK_VALUE(n < (int64_t(1) << 31)) << n << " ids are more than int32 indices can count";
  Deduped u;
  u.inverse.resize(n);
  uint64_t slots = 16;
  while (slots < static_cast<uint64_t>(2 * n + 2)) slots <<= 1;
  std::vector<int64_t> slot_key(slots), slot_pos(slots, -1);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t k = keys[i];
    uint64_t h = static_cast<uint64_t>(k) * 0x9e3779b97f4a7c15ULL;
    uint64_t s = (h ^ (h >> 29)) & (slots - 1);
    while (slot_pos[s] >= 0 && slot_key[s] != k) s = (s + 1) & (slots - 1);
    if (slot_pos[s] < 0) {
      slot_key[s] = k;
      slot_pos[s] = static_cast<int64_t>(u.keys.size());
      u.keys.push_back(k);
      u.values.push_back(values ? values[i] : i % num_tables);
    }
    u.inverse[i] = static_cast<int32_t>(slot_pos[s]);
  }
  return u;
}

Deduped DeduplicateIds(const Tensor& ids, const Tensor& values, int64_t num_tables, const char* values_name) {
  CheckIds(ids, "ids");
  OF_CHECK_VALUE(num_tables >= 1) << "num_tables must be at least 1, got " << num_tables;
  Tensor v;
  if (values.defined()) {
    CheckIds(values, values_name);
    OF_CHECK_VALUE(values.sizes() == ids.sizes())
        << values_name << " must have the shape of the ids " << ShapeStr(ids.sizes()) << ", got "
        << ShapeStr(values.sizes());
    v = Host(values, DType::kInt64);
  } else if (num_tables > 1) {
    OF_CHECK_VALUE(ids.dim() == 2 && ids.size(1) == num_tables)
        << "without " << values_name << ", ids of " << num_tables
        << " tables must be (batch, num_tables) (column j in table j), got " << ShapeStr(ids.sizes());
  }
  Tensor k = Host(ids, DType::kInt64);
  return Deduplicate(k.data<int64_t>(), v.defined() ? v.data<int64_t>() : nullptr, k.numel(), num_tables);
}

// A tensor of `sizes` and dtype on device: the first v.size() elements from v, the rest zero.
template <typename T>
Tensor Padded(const std::vector<T>& v, const DimVector& sizes, DType dtype, const Device& device) {
  Tensor t = Empty(sizes, DType::kInt64);
  int64_t* p = t.data<int64_t>();
  const int64_t n = t.numel();
  for (int64_t i = 0; i < n; ++i) p[i] = i < static_cast<int64_t>(v.size()) ? static_cast<int64_t>(v[i]) : 0;
  return MovedTo(CastTo(t, dtype), device);
}

Tensor Count(int64_t u, const Device& device) {
  return Padded(std::vector<int64_t>{u}, DimVector{1}, DType::kInt32, device);
}

// The rows of the one-rank shuffles: row r of the unique ids for each id.
std::vector<int64_t> ShuffleRows(const Tensor& cur_rank_inverse_indices,
                                 const Tensor& inverse_unique_partition_indices, int64_t rows) {
  CheckIds(cur_rank_inverse_indices, "cur_rank_inverse_indices");
  CheckIds(inverse_unique_partition_indices, "inverse_unique_partition_indices");
  Tensor cur = Host(cur_rank_inverse_indices, DType::kInt64);
  Tensor inv = Host(inverse_unique_partition_indices, DType::kInt64);
  const int64_t nc = cur.numel();
  std::vector<int64_t> out(inv.numel());
  for (int64_t i = 0; i < inv.numel(); ++i) {
    const int64_t p = inv.data<int64_t>()[i];
    OF_CHECK_INDEX(p >= 0 && p < nc) << "inverse_unique_partition_indices holds " << p
                                     << ", out of range for " << nc << " cur_rank_inverse_indices";
    const int64_t r = cur.data<int64_t>()[p];
    OF_CHECK_INDEX(r >= 0 && r < rows) << "cur_rank_inverse_indices holds " << r << ", out of range for "
                                       << rows << " rows";
    out[i] = r;
  }
  return out;
}

void CheckMatrix(const Tensor& num_unique_matrix) {
  CheckIds(num_unique_matrix, "num_unique_matrix");
  OF_CHECK(num_unique_matrix.numel() == 1)
      << "num_unique_matrix has " << num_unique_matrix.numel()
      << " entries: a table here has one process (a 1 x 1 matrix); multi-process shuffles are not implemented";
}

// ---- updates -------------------------------------------------------------------------------

// What every update shares: the rows (n x line_size) and gradients (n x embedding_size), how many
// rows to update, the learning rate and gradient scale after the optional tensors, and skip_if.
struct Rows {
  Tensor values, grad;  // float32, contiguous, host; values is the output (a copy)
  int64_t count = 0, line = 0, dim = 0;
  double lr = 0, scale = 1;
  bool skip = false;
  Device device;
};

double Scalar1(const Tensor& t, const char* what) {
  OF_CHECK_VALUE(t.numel() == 1) << what << " must hold one element, got " << t.numel();
  return Host(t, DType::kFloat64).data<double>()[0];
}

Rows PrepareRows(const Tensor& num_unique_ids, const Tensor& unique_embeddings, const Tensor& embedding_grad,
                 const Tensor& learning_rate, const Tensor& down_scale_by_tensor, const Tensor& skip_if,
                 double learning_rate_val, double scale, int64_t line_size, int64_t embedding_size,
                 int64_t state_floats) {
  CheckHasData(unique_embeddings);
  CheckHasData(embedding_grad);
  OF_CHECK_TYPE(IsFloating(unique_embeddings.dtype()) && IsFloating(embedding_grad.dtype()))
      << "unique_embeddings and embedding_grad must be floating, got "
      << DTypeName(unique_embeddings.dtype()) << " and " << DTypeName(embedding_grad.dtype());
  OF_CHECK_VALUE(unique_embeddings.dim() == 2 && embedding_grad.dim() == 2)
      << "unique_embeddings (rows, line_size) and embedding_grad (rows, embedding_size) must be 2-D, got "
      << ShapeStr(unique_embeddings.sizes()) << " and " << ShapeStr(embedding_grad.sizes());
  Rows r;
  r.line = line_size >= 0 ? line_size : unique_embeddings.size(1);
  r.dim = embedding_size >= 0 ? embedding_size : embedding_grad.size(1);
  OF_CHECK_VALUE(unique_embeddings.size(1) == r.line && embedding_grad.size(1) == r.dim)
      << "line_size " << r.line << " and embedding_size " << r.dim << " do not match unique_embeddings "
      << ShapeStr(unique_embeddings.sizes()) << " and embedding_grad " << ShapeStr(embedding_grad.sizes());
  OF_CHECK_VALUE(r.line >= r.dim * (1 + state_floats))
      << "line_size " << r.line << " is too small for embedding_size " << r.dim << " and the update's "
      << state_floats << " state vector(s) (needs " << r.dim * (1 + state_floats) << ")";
  CheckIds(num_unique_ids, "num_unique_ids");
  OF_CHECK_VALUE(num_unique_ids.numel() == 1) << "num_unique_ids must hold one count, got "
                                              << num_unique_ids.numel() << " elements";
  r.count = Host(num_unique_ids, DType::kInt64).data<int64_t>()[0];
  OF_CHECK_VALUE(r.count >= 0 && r.count <= unique_embeddings.size(0) && r.count <= embedding_grad.size(0))
      << "num_unique_ids is " << r.count << " for " << unique_embeddings.size(0) << " rows and "
      << embedding_grad.size(0) << " gradients";
  r.lr = learning_rate.defined() ? Scalar1(learning_rate, "learning_rate") : learning_rate_val;
  r.scale = down_scale_by_tensor.defined() ? scale / Scalar1(down_scale_by_tensor, "down_scale_by_tensor") : scale;
  r.skip = skip_if.defined() && Scalar1(skip_if, "skip_if") != 0;
  r.device = unique_embeddings.device();
  Tensor v = Host(unique_embeddings, DType::kFloat32);
  r.values = Empty(v.sizes(), DType::kFloat32);
  std::memcpy(r.values.data<float>(), v.data<float>(), v.numel() * sizeof(float));
  r.grad = Host(embedding_grad, DType::kFloat32);
  return r;
}

// Runs f(w, state, g) over the rows to update (each row's embedding, the rest of its line, its
// gradient) and returns the rows in the input's dtype and device.
template <typename F>
Tensor Finish(Rows& r, DType dtype, F f) {
  if (!r.skip) {
    float* v = r.values.data<float>();
    const float* g = r.grad.data<float>();
    ParallelFor(0, r.count, 64, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) f(v + i * r.line, v + i * r.line + r.dim, g + i * r.dim);
    });
  }
  return MovedTo(CastTo(r.values, dtype), r.device);
}

// The first num_unique_ids ids of unique_ids (int64, host) and the count.
std::vector<int64_t> CountedIds(const Tensor& num_unique_ids, const Tensor& unique_ids) {
  CheckIds(num_unique_ids, "num_unique_ids");
  CheckIds(unique_ids, "unique_ids");
  OF_CHECK_VALUE(num_unique_ids.numel() == 1) << "num_unique_ids must hold one count, got "
                                              << num_unique_ids.numel() << " elements";
  const int64_t n = Host(num_unique_ids, DType::kInt64).data<int64_t>()[0];
  OF_CHECK_VALUE(n >= 0 && n <= unique_ids.numel())
      << "num_unique_ids is " << n << " for " << unique_ids.numel() << " unique_ids";
  Tensor ids = Host(unique_ids, DType::kInt64);
  return std::vector<int64_t>(ids.data<int64_t>(), ids.data<int64_t>() + n);
}

// The constants of upstream's state_initializer (a JSON list of make_constant_initializer(v):
// [{"type": "constant", "value": v}, ...]), one per state vector.
std::vector<double> StateConstants(const std::string& json) {
  std::vector<double> out;
  size_t at = 0;
  while ((at = json.find("\"type\"", at)) != std::string::npos) {
    const size_t colon = json.find(':', at);
    const size_t q1 = json.find('"', colon + 1), q2 = json.find('"', q1 + 1);
    OF_CHECK_VALUE(colon != std::string::npos && q2 != std::string::npos)
        << "state_initializer is not a list of initializers: " << json;
    OF_CHECK_VALUE(json.compare(q1 + 1, q2 - q1 - 1, "constant") == 0)
        << "state_initializer: only constant initializers set an optimizer's state, got " << json;
    const size_t v = json.find("\"value\"", at);
    OF_CHECK_VALUE(v != std::string::npos) << "state_initializer: a constant without a value: " << json;
    out.push_back(std::strtod(json.c_str() + json.find(':', v) + 1, nullptr));
    at = v + 1;
  }
  return out;
}

}  // namespace

Tensor OneEmbeddingLookup(const Tensor& num_unique_ids, const Tensor& unique_ids, const Tensor& table_ids,
                          DType dtype, DType /*embedding_dtype*/, int64_t line_size, int64_t embedding_size,
                          const std::string& embedding_name, const std::string& /*embedding_tables*/,
                          const std::string& state_initializer, int64_t /*seed*/) {
  OF_CHECK_TYPE(IsFloating(dtype)) << "dtype must be floating, got " << DTypeName(dtype);
  embedding::Store& store = embedding::NamedStore(embedding_name);
  OF_CHECK_VALUE(line_size == store.storage_dim() && embedding_size == store.embedding_dim())
      << "line_size " << line_size << " and embedding_size " << embedding_size << " differ from table '"
      << embedding_name << "''s storage_dim " << store.storage_dim() << " and embedding_dim "
      << store.embedding_dim();
  const std::vector<int64_t> ids = CountedIds(num_unique_ids, unique_ids);
  const int64_t n = static_cast<int64_t>(ids.size());
  std::vector<int32_t> tables;
  if (table_ids.defined()) {
    CheckIds(table_ids, "table_ids");
    OF_CHECK_VALUE(table_ids.numel() >= n) << "table_ids has " << table_ids.numel() << " entries for " << n << " ids";
    Tensor t = Host(table_ids, DType::kInt32);
    tables.assign(t.data<int32_t>(), t.data<int32_t>() + n);
  }
  const std::vector<double> state = StateConstants(state_initializer);
  const int64_t d = store.embedding_dim(), sd = store.storage_dim();
  OF_CHECK_VALUE(static_cast<int64_t>(state.size()) * d <= sd - d)
      << "state_initializer gives " << state.size() << " state vectors; rows of " << sd
      << " floats hold " << (sd - d) / d << " after the embedding";
  Tensor out = Empty(DimVector{unique_ids.numel(), sd}, DType::kFloat32);
  float* o = out.data<float>();
  std::fill(o, o + out.numel(), 0.f);
  std::vector<uint8_t> ready(n);
  store.LookupRows(ids.data(), tables.empty() ? nullptr : tables.data(), n, o, ready.data());
  for (int64_t i = 0; i < n; ++i) {
    if (ready[i]) continue;  // (a row whose state has not started: its state is the initializer's)
    float* row = o + i * sd;
    std::fill(row + d, row + sd, 0.f);
    for (size_t k = 0; k < state.size(); ++k) std::fill(row + d * (k + 1), row + d * (k + 2), static_cast<float>(state[k]));
  }
  return MovedTo(CastTo(out, dtype), unique_ids.device());
}

Tensor OneEmbeddingEmbeddingPut(const Tensor& num_unique_ids, const Tensor& unique_ids,
                                const Tensor& unique_embeddings, const std::string& embedding_name, int64_t line_size) {
  embedding::Store& store = embedding::NamedStore(embedding_name);
  CheckHasData(unique_embeddings);
  OF_CHECK_TYPE(IsFloating(unique_embeddings.dtype()))
      << "unique_embeddings must be floating, got " << DTypeName(unique_embeddings.dtype());
  OF_CHECK_VALUE(line_size == store.storage_dim() && unique_embeddings.dim() == 2 &&
                 unique_embeddings.size(1) == line_size)
      << "unique_embeddings must be (rows, " << store.storage_dim() << ") for table '" << embedding_name
      << "' (line_size " << line_size << "), got " << ShapeStr(unique_embeddings.sizes());
  const std::vector<int64_t> ids = CountedIds(num_unique_ids, unique_ids);
  OF_CHECK_VALUE(static_cast<int64_t>(ids.size()) <= unique_embeddings.size(0))
      << ids.size() << " ids but " << unique_embeddings.size(0) << " rows";
  Tensor rows = Host(unique_embeddings, DType::kFloat32);
  store.Write(ids.data(), static_cast<int64_t>(ids.size()), rows.data<float>(), true);
  return num_unique_ids;
}

std::tuple<Tensor, Tensor, Tensor, Tensor> OneEmbeddingUniqueKeyValuePair(
    const Tensor& keys, const Tensor& values, int64_t num_tables, const std::string& /*embedding_name*/) {
  const Deduped u = DeduplicateIds(keys, values, num_tables, "values");
  const DimVector n{keys.numel()};
  const Device& dev = keys.device();
  return {Count(static_cast<int64_t>(u.keys.size()), dev), Padded(u.keys, n, keys.dtype(), dev),
          Padded(u.values, n, values.defined() ? values.dtype() : DType::kUInt8, dev),
          Padded(u.inverse, keys.sizes(), DType::kInt32, dev)};
}

std::tuple<Tensor, Tensor, Tensor, Tensor, Tensor, Tensor> OneEmbeddingIdShuffle(
    const Tensor& ids, const Tensor& table_ids, int64_t num_tables, const std::string& /*embedding_name*/) {
  const Deduped u = DeduplicateIds(ids, table_ids, num_tables, "table_ids");
  const int64_t count = static_cast<int64_t>(u.keys.size());
  const DimVector n{ids.numel()};
  const Device& dev = ids.device();
  std::vector<int64_t> own(count);
  for (int64_t i = 0; i < count; ++i) own[i] = i;
  Tensor inverse = Padded(u.inverse, ids.sizes(), DType::kInt32, dev);
  return {Count(count, dev), inverse, Count(count, dev), Padded(u.keys, n, ids.dtype(), dev),
          Padded(u.values, n, table_ids.defined() ? table_ids.dtype() : DType::kUInt8, dev),
          Padded(own, n, DType::kInt32, dev)};
}

Tensor OneEmbeddingEmbeddingShuffle(const Tensor& cur_rank_embeddings, const Tensor& num_unique_matrix,
                                    const Tensor& cur_rank_inverse_indices,
                                    const Tensor& inverse_unique_partition_indices,
                                    const std::string& /*embedding_name*/) {
  CheckHasData(cur_rank_embeddings);
  CheckMatrix(num_unique_matrix);
  OF_CHECK_VALUE(cur_rank_embeddings.dim() == 2)
      << "cur_rank_embeddings must be (rows, embedding_size), got " << ShapeStr(cur_rank_embeddings.sizes());
  const int64_t rows = cur_rank_embeddings.size(0), d = cur_rank_embeddings.size(1);
  const std::vector<int64_t> at = ShuffleRows(cur_rank_inverse_indices, inverse_unique_partition_indices, rows);
  Tensor src = Host(cur_rank_embeddings, cur_rank_embeddings.dtype());
  DimVector sizes = inverse_unique_partition_indices.sizes();
  sizes.push_back(d);
  Tensor out = Empty(sizes, src.dtype());
  const int64_t bytes = d * ElementSize(src.dtype());
  const char* s = static_cast<const char*>(src.raw_data());
  char* o = static_cast<char*>(out.raw_data());
  for (size_t i = 0; i < at.size(); ++i) std::memcpy(o + i * bytes, s + at[i] * bytes, bytes);
  return MovedTo(out, cur_rank_embeddings.device());
}

Tensor OneEmbeddingEmbeddingGradientShuffle(const Tensor& embedding_grad, const Tensor& num_unique_matrix,
                                            const Tensor& cur_rank_inverse_indices,
                                            const Tensor& inverse_unique_partition_indices,
                                            const std::string& /*embedding_name*/) {
  CheckHasData(embedding_grad);
  CheckMatrix(num_unique_matrix);
  OF_CHECK_TYPE(IsFloating(embedding_grad.dtype()))
      << "embedding_grad must be floating, got " << DTypeName(embedding_grad.dtype());
  const int64_t n = inverse_unique_partition_indices.numel();
  OF_CHECK_VALUE(embedding_grad.dim() >= 1 && embedding_grad.numel() % std::max<int64_t>(n, 1) == 0 &&
                 (n == 0 || embedding_grad.numel() / n == embedding_grad.size(-1)))
      << "embedding_grad must be the ids' shape + (embedding_size,), got " << ShapeStr(embedding_grad.sizes())
      << " for " << n << " ids";
  const int64_t d = embedding_grad.size(-1), rows = cur_rank_inverse_indices.numel();
  const std::vector<int64_t> at = ShuffleRows(cur_rank_inverse_indices, inverse_unique_partition_indices, rows);
  Tensor g = Host(embedding_grad, DType::kFloat64);
  Tensor out = Empty(DimVector{rows, d}, DType::kFloat64);
  double* o = out.data<double>();
  std::fill(o, o + rows * d, 0.0);
  const double* gp = g.data<double>();
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < d; ++j) o[at[i] * d + j] += gp[i * d + j];
  return MovedTo(CastTo(out, embedding_grad.dtype()), embedding_grad.device());
}

Tensor OneEmbeddingSgdUpdate(const Tensor& num_unique_ids, const Tensor& unique_embeddings,
                             const Tensor& embedding_grad, const Tensor& learning_rate,
                             const Tensor& down_scale_by_tensor, const Tensor& skip_if, double learning_rate_val,
                             double scale, double weight_decay, double momentum, int64_t line_size,
                             int64_t embedding_size, const std::string& /*embedding_name*/) {
  Rows r = PrepareRows(num_unique_ids, unique_embeddings, embedding_grad, learning_rate, down_scale_by_tensor,
                       skip_if, learning_rate_val, scale, line_size, embedding_size, momentum != 0 ? 1 : 0);
  const double lr = r.lr, sc = r.scale;
  const int64_t d = r.dim;
  return Finish(r, unique_embeddings.dtype(), [&](float* w, float* m, const float* g) {
    for (int64_t j = 0; j < d; ++j) {
      const double wj = w[j], gj = g[j] * sc;
      if (momentum == 0) {
        w[j] = static_cast<float>(wj - lr * (gj + weight_decay * wj));
      } else {  // (upstream's MomentumUpdateFunctor: no dampening, no nesterov)
        const double mj = momentum * m[j] + gj;
        m[j] = static_cast<float>(mj);
        w[j] = static_cast<float>(wj - lr * mj - lr * weight_decay * wj);
      }
    }
  });
}

Tensor OneEmbeddingAdamUpdate(const Tensor& num_unique_ids, const Tensor& unique_embeddings,
                              const Tensor& embedding_grad, const Tensor& learning_rate,
                              const Tensor& down_scale_by_tensor, const Tensor& skip_if,
                              const Tensor& bias_correction1, const Tensor& bias_correction2,
                              double learning_rate_val, double scale, double weight_decay, double beta1,
                              double beta2, double bias_correction1_val, double bias_correction2_val,
                              double epsilon, bool do_bias_correction, int64_t line_size,
                              int64_t embedding_size, const std::string& /*embedding_name*/) {
  Rows r = PrepareRows(num_unique_ids, unique_embeddings, embedding_grad, learning_rate, down_scale_by_tensor,
                       skip_if, learning_rate_val, scale, line_size, embedding_size, 2);
  double bc1 = 1, bc2 = 1;
  if (do_bias_correction) {
    bc1 = bias_correction1.defined() ? Scalar1(bias_correction1, "bias_correction1") : bias_correction1_val;
    bc2 = bias_correction2.defined() ? Scalar1(bias_correction2, "bias_correction2") : bias_correction2_val;
    OF_CHECK_VALUE(bc1 != 0 && bc2 > 0) << "the bias corrections must be positive, got " << bc1 << " and " << bc2;
  }
  const double lr = r.lr, sc = r.scale, sbc2 = std::sqrt(bc2);
  const int64_t d = r.dim;
  return Finish(r, unique_embeddings.dtype(), [&](float* w, float* state, const float* g) {
    float *m = state, *v = state + d;
    for (int64_t j = 0; j < d; ++j) {
      const double wj = w[j], gj = g[j] * sc;
      const double mj = beta1 * m[j] + (1 - beta1) * gj;
      const double vj = beta2 * v[j] + (1 - beta2) * gj * gj;
      m[j] = static_cast<float>(mj);
      v[j] = static_cast<float>(vj);
      w[j] = static_cast<float>(wj - (lr / bc1) * (mj / (std::sqrt(vj) / sbc2 + epsilon)) - lr * weight_decay * wj);
    }
  });
}

Tensor OneEmbeddingAdagradUpdate(const Tensor& num_unique_ids, const Tensor& unique_embeddings,
                                 const Tensor& embedding_grad, const Tensor& learning_rate,
                                 const Tensor& down_scale_by_tensor, const Tensor& skip_if, const Tensor& train_step,
                                 int64_t train_step_val, double learning_rate_val, double scale,
                                 double weight_decay, double lr_decay, double epsilon, int64_t line_size,
                                 int64_t embedding_size, const std::string& /*embedding_name*/) {
  Rows r = PrepareRows(num_unique_ids, unique_embeddings, embedding_grad, learning_rate, down_scale_by_tensor,
                       skip_if, learning_rate_val, scale, line_size, embedding_size, 1);
  const double step = train_step.defined() ? Scalar1(train_step, "train_step") + 1 : double(train_step_val);
  const double lr = r.lr / (1 + (step - 1) * lr_decay), sc = r.scale;
  const int64_t d = r.dim;
  return Finish(r, unique_embeddings.dtype(), [&](float* w, float* sum, const float* g) {
    for (int64_t j = 0; j < d; ++j) {
      const double wj = w[j], gj = g[j] * sc;
      const double s = sum[j] + gj * gj;
      sum[j] = static_cast<float>(s);
      w[j] = static_cast<float>(wj - lr / (std::sqrt(s) + epsilon) * gj - lr * weight_decay * wj);
    }
  });
}

Tensor OneEmbeddingFtrlUpdate(const Tensor& num_unique_ids, const Tensor& unique_embeddings,
                              const Tensor& embedding_grad, const Tensor& learning_rate,
                              const Tensor& down_scale_by_tensor, const Tensor& skip_if, double learning_rate_val,
                              double scale, double weight_decay, double lr_power, double lambda1, double lambda2,
                              double beta, int64_t line_size, int64_t embedding_size,
                              const std::string& /*embedding_name*/) {
  Rows r = PrepareRows(num_unique_ids, unique_embeddings, embedding_grad, learning_rate, down_scale_by_tensor,
                       skip_if, learning_rate_val, scale, line_size, embedding_size, 2);
  OF_CHECK_VALUE(r.skip || r.lr > 0) << "FTRL needs a positive learning rate, got " << r.lr;
  const double lr = r.lr, sc = r.scale;
  const int64_t d = r.dim;
  return Finish(r, unique_embeddings.dtype(), [&](float* w, float* state, const float* g) {
    float *acc = state, *z = state + d;
    for (int64_t j = 0; j < d; ++j) {
      const double wj = w[j], gj = g[j] * sc;
      const double a1 = acc[j] + gj * gj;
      const double p0 = std::pow(double(acc[j]), lr_power), p1 = std::pow(a1, lr_power);
      const double zj = z[j] + gj - (p1 - p0) / lr * wj;
      double nw = 0;
      if (std::fabs(zj) >= lambda1)
        nw = (std::copysign(lambda1, zj) - zj) / ((beta + p1) / lr + lambda2) - lr * weight_decay * wj;
      w[j] = static_cast<float>(nw);
      acc[j] = static_cast<float>(a1);
      z[j] = static_cast<float>(zj);
    }
  });
}

}  // namespace oneflow
