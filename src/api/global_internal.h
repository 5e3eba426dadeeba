// The global kind's state shared by global_bind.cpp (Note [Global kind]: the registered types, the
// kind test, the same-layout path of Note [Global fast path], the bindings) and global_fast.cpp
// (the fast path of the rules of Note [SBP rules in C++] and of Note [Partial elementwise]).
// Internal to src/api (not in the precompiled header).
#pragma once
#include <nanobind/nanobind.h>

#include <functional>
#include <initializer_list>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace nb = nanobind;

namespace oneflow::global_internal {

// The slots of a global type (Python __slots__: member descriptors; GlobalParameter has its own).
struct GlobalType {
  PyTypeObject* type = nullptr;
  PyObject* local = nullptr;  // borrowed: the descriptors live in the type's __dict__
  PyObject* placement = nullptr;
  PyObject* sbp = nullptr;
  PyObject* shape = nullptr;
};

// Borrowed: everything registered lives in oneflow._oneflow_internal._global_state (global_bind.cpp).
extern GlobalType g_types[2];
extern int g_num_types;
extern PyObject* g_tensor_type;  // flow.Tensor
extern PyObject* g_marker_str;   // "_oneflow_global_": the other Python-level kinds (dispatch.register_kind)

const GlobalType* TypeOf(PyObject* o);  // the global type of o, or nullptr
nb::object Slot(PyObject* descr, PyObject* obj);
void SetSlot(PyObject* descr, PyObject* obj, PyObject* value);
// A new GlobalTensor: component `local`, `placement`, n-d `sbp` (a tuple), logical `shape` (a tuple).
nb::object NewGlobal(const nb::object& local, const nb::object& placement, const nb::object& sbp,
                     const nb::object& shape);
PyObject* OpFunction(const char* op);  // the table op's binding (borrowed)

// How C++ may run op `name` (a table op, an in-place form, a Python operator or method name): read
// from the op table's SBP signatures (api/sbp_table.h) once per name by FastRuleOf (global_bind.cpp);
// kSumLayout / kScaleLayout / kProductLayout: the elementwise rules whose partial sums may stay
// partial (Note [Partial elementwise] in api/global_rules.h).
enum FastRule {
  kSlowRule = 0, kSameLayout = 1, kMatmul = 2, kReduceSum = 3, kTranspose = 4, kSumLayout = 5, kScaleLayout = 6,
  kReduceMean = 7, kSoftmax = 8, kLinear = 9, kBmm = 10, kAlongDim = 11, kReduceDims = 12,
  kReshape = 13, kLoss = 14, kProductLayout = 15
};
inline bool DimRule(int r) { return r == kAlongDim || r == kReduceDims; }

// Where the op of a dim rule (kAlongDim, kReduceDims) takes its dim / keepdim arguments
// (the op table's sig, api/sbp_table.h, as the dispatcher's _param reads it).
struct DimArgs {
  std::string dim_name, keep_name;  // keep_name empty: no keepdim parameter
  int dim_pos = -1, keep_pos = -1;  // -1: keyword-only
  std::optional<int64_t> dim_default;
};

// FastRuleOf's answer for one op name.
struct FastInfo {
  int rule = 0;
  DimArgs dims;
};
inline bool PartialRule(int r) { return r == kSumLayout || r == kScaleLayout || r == kProductLayout; }
inline bool SameLayoutRule(int r) { return r == kSameLayout || PartialRule(r); }
inline bool SignatureRule(int r) { return r > kSameLayout && !PartialRule(r); }  // Note [SBP rules in C++]

// An op's arguments as given: positional ones, then keyword ones (borrowed).
struct RuleCall {
  std::vector<PyObject*> pos;
  std::vector<std::pair<const char*, PyObject*>> kw;
  PyObject* Find(size_t i, std::initializer_list<const char*> names) const;  // by keyword, else at position i
};

// Runs the op on the components: (positional locals, keyword locals) -> its result.
using Invoke = std::function<nb::object(const std::vector<nb::object>&, const std::vector<nb::object>&)>;

// global_fast.cpp: the op run by `invoke` and wrapped, or nullopt (the dispatcher's turn).
std::optional<nb::object> RuleFast(const FastInfo& info, const RuleCall& call, const Invoke& invoke);
std::optional<nb::object> PartialFast(int rule, bool inplace, const RuleCall& call, const Invoke& invoke);

}  // namespace oneflow::global_internal
