// The boxed form of every op (docs/architecture.md §8): call an op by name with a list of argument values,
// without knowing its C++ signature. The static graph, global tensors and BuiltinOp call ops
// through it; the eager fast path never does. Each table op gets a generated boxed entry
// (tools/gen_boxed.py) that unpacks the values and calls the op's differentiable entry.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <variant>
#include <vector>

#include "core/generator.h"
#include "core/tensor.h"
#include "decl/add.h"

namespace oneflow {

// One argument or attribute value. monostate = None (an absent optional / undefined tensor).
using Value = std::variant<std::monostate, Tensor, std::vector<Tensor>, bool, int64_t, double, Scalar,
                           DimVector, std::vector<double>, DType, Device, std::string, GeneratorPtr>;

struct ParamSchema {
  std::string name;
  std::string type;     // the table's type: Tensor, TensorLike, int, int[], Scalar, ...
  bool optional;        // `T?`
  bool kw_only;
  bool varargs;         // `int[]...`: Python passes the ints as separate positional arguments
  bool has_default;
  Value default_value;  // when has_default
  bool is_tensor() const { return type == "Tensor" || type == "TensorLike" || type == "Tensor[]"; }
};

struct OpSchema {
  std::string name;
  std::vector<ParamSchema> params;
  std::vector<std::string> outputs;  // names; {"result"} for one tensor, {"*"} for a list
  // args: one Value per parameter, in signature order (defaults already filled in).
  std::vector<Tensor> (*call)(const std::vector<Value>& args);
};

class BoxedRegistry {
 public:
  void Add(OpSchema s);
  const OpSchema* Find(std::string_view name) const;
  const std::vector<OpSchema>& all() const { return ops_; }

 private:
  std::vector<OpSchema> ops_;
};

const BoxedRegistry& Boxed();  // built on first use

// Calls op `name`: `inputs` fill the tensor parameters in order (a Tensor[] parameter takes all
// remaining inputs), `attrs` the others by name; missing ones take their defaults.
// Note [Several tensor lists]: an op with more than one Tensor[] parameter (the optimizer
// updates) gets each list followed by an undefined tensor, which ends it.
std::vector<Tensor> CallBoxed(std::string_view name, const std::vector<Tensor>& inputs,
                              const std::vector<std::pair<std::string, Value>>& attrs);
// Meta inference alone: the same call on meta copies of the inputs (shapes, dtypes, strides; no
// data, no kernel). Errors are the ones the eager call raises.
std::vector<Tensor> InferBoxed(std::string_view name, const std::vector<Tensor>& inputs,
                               const std::vector<std::pair<std::string, Value>>& attrs);
Tensor ToMeta(const Tensor& t);  // a meta tensor with t's sizes, strides and dtype
// The schema of op `name` (ValueError when there is none) and a call's values in its order.
const OpSchema& BoxedSchema(std::string_view name);
std::vector<Value> BoxedArgs(const OpSchema& s, const std::vector<Tensor>& inputs,
                             const std::vector<std::pair<std::string, Value>>& attrs);

// Unpacking helpers used by the generated entries.
template <typename T> T ValueAs(const Value& v);
template <typename T> std::optional<T> OptValueAs(const Value& v) {
  if (std::holds_alternative<std::monostate>(v)) return std::nullopt;
  return ValueAs<T>(v);
}
Tensor TensorValue(const Value& v);  // monostate -> undefined tensor

inline std::vector<Tensor> BoxOutputs(Tensor t) { return {std::move(t)}; }
inline std::vector<Tensor> BoxOutputs(std::vector<Tensor> ts) { return ts; }
template <typename... Ts>
std::vector<Tensor> BoxOutputs(const std::tuple<Ts...>& t) {
  return std::apply([](const auto&... x) { return std::vector<Tensor>{x...}; }, t);
}

void RegisterManualBoxed(BoxedRegistry& r);  // ops with hand-written bindings (max, min, split)

}  // namespace oneflow
