// Lazy tracing (docs/architecture.md §8): while nn.Graph traces its build(), every op called from Python is
// recorded as a node of a Program instead of running, and answers with a lazy tensor (a meta
// tensor: sizes, strides, dtype, no data) produced by the op's own meta inference, so shape and
// dtype errors surface at trace time with the eager messages. The Program then runs many times
// on real tensors through the same boxed entries, without the Python that built it.
//
// Note [Lazy interception]: the door is the Python binding of each op (generated bindings and the
// hand-written ones in src/api): the one place every op a Python program calls passes, and only
// those (ops a C++ op calls internally belong to it). The eager path pays one load of a global
// counter; a thread traces only while its own Tracer is installed, so another thread's eager ops
// (a data-loading thread) are never recorded.
//
// Values in a node's arguments:
//  - a lazy tensor (registered in the Tracer: a graph input or an earlier node's output) becomes a
//    slot reference, filled when the Program runs;
//  - any other tensor (a parameter, a buffer, a constant made before or during build) is captured
//    by reference: the Program sees its current values (optimizer updates, in-place buffer
//    updates recorded in the graph itself);
//  - a meta Device attribute (`device=x.device` of a lazy x) means the graph's device.
//
// Note [Backward nodes]: `loss.backward()` in build() becomes nodes of the program, made by the
// same `backward:` formulas of the op table that eager autograd runs (docs/graph.md, Backward).
//  - A lazy tensor carries autograd like any tensor. The interception point of a differentiable
//    op is below its autograd recording: the generated entry functional::X records its backward
//    node (saving lazy tensors, making a lazy output's grad_fn) and then, where it would call the
//    kernel entry, tests the tracer counter and records the op through its boxed form instead
//    (RecordEntry; tools/gen_autograd.py `kernel_call`). Ops without formulas (`backward: none`)
//    get the same test in their functional entry, so that formulas calling them record too. The
//    generated Python binding still records directly (one node for a composite) when no
//    argument needs autograd, and otherwise falls through to functional::X (`lazy_hook`).
//  - loss.backward() runs the C++ engine at trace time on the lazy loss (Tracer::Backward), with
//    a seed computed in the program (ones * the graph's loss-scale tensor, a captured 0-dim
//    tensor the graph sets before each run: 1/micro-batches and the GradScaler's scale). Each
//    node's Apply calls formulas, i.e. functional entries on lazy tensors: each records a node
//    (marked `backward`, run with autocast off as the eager engine does). The engine's own sums
//    and casts of gradients go through functional entries too (autograd/engine.h,
//    LazyBackward).
//  - A leaf's AccumulateGrad (a parameter, or a graph input requiring grad) records an
//    `accumulate_grad_(leaf, grad)` node instead of writing .grad at trace time: when run it
//    stores or adds the gradient into the real leaf's .grad, as AccumulateGrad does.
//  - The program then runs every node with grad mode off (Program::run_grad): its forward
//    builds no autograd graph and saves nothing beyond the slots the backward nodes read.
//  - An op recorded by a hand-written binding (indexing, split, max/min) or a manual/composite
//    table op with an input requiring grad is a local autograd node: its gradient is its own
//    eager autograd, run by the program (Note [Local autograd nodes], lazy.cpp).
//  - What stays a barrier (the backward runs in Python on the real tensors, as before, and the
//    program runs with grad mode on): a trace where something autograd cannot see through
//    happened while gradients were needed (Tracer::Opaque): such an op that writes an argument
//    (setitem, copy_), a Python step whose outputs
//    require grad (autograd.Function, LSTM/GRU layers, activation checkpointing, global boxing);
//    a leaf with gradient hooks; and a backward whose formula fails on lazy tensors (one that
//    reads values, or a helper that calls a kernel entry directly): then the nodes it recorded
//    are removed again.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <unordered_map>
#include <vector>

#include "ops/boxed.h"

namespace oneflow::lazy {

struct ArenaPlan;  // memory_plan.h

using NodeFn = std::vector<Tensor> (*)(const std::vector<Value>& args);

struct SlotRef {
  int arg;    // index into the node's arguments
  int elem;   // element of a Tensor[] argument, or -1
  int slot;
};

// An argument of a node: its index, and the element of a Tensor[] argument or -1.
struct ArgPos {
  int arg;
  int elem;
  bool operator==(const ArgPos& o) const { return arg == o.arg && elem == o.elem; }
};

// Note [Dynamic shapes]: element `elem` of the int-list argument `arg` (sizes a formula took from
// a value of run-time sizes: `expand(grad, input_sizes)`) is, when the node runs, dim `dim` of the
// value its ref `ref` reads -- a ref with arg -1, a slot read for its sizes only.
struct SizeRef {
  int arg;
  int elem;
  int ref;
  int dim;
};

struct Node;
// Note [Local autograd nodes] (lazy.cpp): runs a local-autograd node's op with autograd on its
// gradient inputs; its outputs are the op's, then the leaves.
std::vector<Tensor> CallLocal(const Node& n, const std::vector<Value>& args);

struct Node {
  std::string name;
  NodeFn fn;
  const OpSchema* schema = nullptr;  // table ops: their parameters (printing, purity); null for hand-written nodes
  std::vector<Value> args;     // lazy tensors left undefined; SlotRefs fill them
  std::vector<SlotRef> refs;
  std::vector<int> outs;       // slot of each output; -1: the output is a captured tensor
  std::vector<int> devices;    // arguments holding a meta Device (the graph's device at run time)
  bool grad_enabled;           // grad mode at trace time (no_grad blocks inside build)
  int barrier = -1;            // >= 0: not an op; Run() stops here and returns this id
  bool aliases = false;        // at trace time an output shared an input's storage (a view)
  std::string loc;             // the user's source line that called the op ("file.py:41")
  std::string scope;           // the module (graph attribute path) whose forward called it
  bool backward = false;       // recorded by the traced backward pass (Note [Backward nodes])
  // Note [Scalar inputs]: arguments read per run from a 0-dim float64 CPU tensor the program
  // captures (argument index, tensor): a value the caller changes between runs without tracing
  // again (an optimizer update's learning rate, set by the LR scheduler).
  std::vector<std::pair<int, Tensor>> scalars;
  // Note [Local autograd nodes] (lazy.cpp): non-empty when the node is an op autograd cannot see
  // into, called on inputs requiring grad: the arguments whose gradients its own eager autograd
  // gives. The node then also returns a leaf per such argument (after the op's outputs), which
  // its `<op>_local_backward` node differentiates against. Printed `{local_grads: [%7]}`.
  std::vector<ArgPos> local_grads;
  std::vector<SizeRef> size_refs;  // Note [Dynamic shapes]: sizes read from values when run

  // The node's computation on its filled arguments.
  std::vector<Tensor> Call(const std::vector<Value>& a) const {
    return local_grads.empty() ? fn(a) : CallLocal(*this, a);
  }
};

class Program {
 public:
  std::vector<Node> nodes;
  int num_slots = 0;
  std::vector<int> inputs;     // slot of each graph input
  Device device{DeviceType::kCPU, -1};
  std::vector<int> pinned;     // slots kept to the end (outputs, barrier arguments)
  std::vector<int> outputs;    // the slots build() returned (a subset of `pinned`)
  std::vector<Tensor> meta;    // per slot: its meta tensor from tracing (sizes, strides, dtype)
  // Note [Dynamic shapes] (dynamic_shapes.h): per slot, bit d set when dim d's size is known only
  // when the program runs (a value-dependent op's output, or computed from one); `meta` then holds
  // the tracing call's sizes. Such values are never placed in the arena, fused or simplified by
  // their sizes. (Shorter than num_slots: the slots after it are static.)
  std::vector<uint64_t> dynamic;
  bool Dynamic(int s) const { return s >= 0 && s < static_cast<int>(dynamic.size()) && dynamic[s] != 0; }
  // Slots whose value is computed once when the program is optimized (constant folding,
  // src/graph/passes.h): set at the start of every execution.
  std::vector<std::pair<int, Tensor>> consts;
  // Slot forwarding left by the passes (a removed node's output is another slot's value): -1 or
  // the slot to read instead. Python reads outputs and barrier slots through it.
  std::vector<int> forward;
  // Names of captured tensors (parameters and buffers) for printing.
  std::unordered_map<const TensorImpl*, std::string> names;
  // false when the backward is nodes of the program (Note [Backward nodes]): nodes then run with
  // grad mode off. true: a Python backward step needs the autograd graph of the real tensors.
  bool run_grad = true;
  // The step's arena (memory_plan.h PlaceInArena), or null: each execution allocates one of its
  // size and offers each planned node's kernel its output's bytes in it.
  std::shared_ptr<const ArenaPlan> arena;

  // Frees each slot after its last use; run again after the passes change the nodes.
  void Finalize();
  int Resolve(int slot) const;  // `slot` through `forward`
  // The program as text, one line per node: `%7:f32[64,10] = matmul(%5, %6)  # model.py:41`.
  std::string Describe() const;
  std::string NodeText(const Node& n) const;

  // One execution. Run() executes nodes until a barrier (returns its id) or the end (-1).
  class Execution {
   public:
    Execution(std::shared_ptr<const Program> p, std::vector<Tensor> inputs);
    int Run();
    const Tensor& Slot(int s) const;
    void SetSlot(int s, Tensor t);  // a barrier's output

   private:
    void Release(size_t node);
    std::shared_ptr<const Program> p_;
    std::vector<Tensor> slots_;
    size_t next_ = 0;
    int after_barrier_ = -1;  // the barrier Run() stopped at: its dead slots go on the next Run()
  };

 private:
  friend class Execution;
  std::vector<std::vector<int>> release_after_;  // per node: slots that die after it
};

class Tracer {
 public:
  explicit Tracer(Device device);
  ~Tracer();
  // Installs / removes this tracer on the calling thread.
  void Begin();
  void End();
  bool active() const { return active_; }

  Tensor Input(const Tensor& like);          // a lazy stand-in for a graph input
  int SlotOf(const Tensor& t) const;         // -1 when t is not lazy here
  // A stop where Python acts (backward, an autograd.Function): it reads slots `ins` and fills
  // `outs` (Execution::SetSlot); returns its id.
  int Barrier(const std::vector<int>& ins = {}, const std::vector<int>& outs = {});
  int AddSlot(const Tensor& meta);           // a lazy tensor a barrier will produce
  void Pin(int slot);
  void Output(int slot);                     // a slot build() returns (pinned)
  void SetScope(std::string scope) { scope_ = std::move(scope); }
  const std::string& scope() const { return scope_; }
  void Name(const Tensor& captured, std::string name);  // a captured tensor's name when printed
  // `schema` (table ops): its Device parameters run meta inference on the meta device even when
  // None (a factory's default device), so nothing is computed for real while tracing.
  // `tracked`: autograd has seen the call (a functional entry recorded its backward node, or the
  // op has no gradient); otherwise an input requiring grad makes the trace opaque to autograd.
  std::vector<Tensor> Record(const char* name, NodeFn fn, std::vector<Value> args,
                             const OpSchema* schema = nullptr, bool tracked = false);
  // Note [Backward nodes]: the backward of `loss` seeded with `seed` (both lazy) as nodes of the
  // program. False (nothing recorded; `why` says why): the caller records a Python step instead.
  bool Backward(const Tensor& loss, const Tensor& seed, std::string* why);
  // Note [Scalar inputs]: the float parameter `param` of the last recorded (table-op) node is
  // read from `value` (a 0-dim float64 CPU tensor) each time the program runs.
  void ScalarInput(const std::string& param, const Tensor& value);
  // The gradient the traced backward accumulates into `leaf` (its one accumulate_grad_ node's
  // value), or an undefined tensor when it has none or several.
  Tensor TracedGrad(const Tensor& leaf) const;
  // Autograd cannot follow what was recorded (`what`): a backward stays a Python step.
  void Opaque(const std::string& what) {
    if (opaque_.empty()) opaque_ = what;
  }
  const std::string& opaque() const { return opaque_; }
  // Off: ops are recorded at the bindings only and backward stays a Python step (graphs of global
  // tensors, whose boxing autograd runs in Python: Note [Backward nodes]).
  void SetAutograd(bool on) { autograd_ = on; }
  bool autograd() const { return autograd_; }
  // The traced backward's gradient for leaf `leaf` (AccumulateGrad at trace time).
  void Accumulate(const Tensor& leaf, const Tensor& grad);
  std::shared_ptr<Program> Finish();         // the traced program (this tracer is then spent)
  // Note [Dynamic shapes]: the value slot `slot` has in the tracing call (its graph inputs' values),
  // computed by running the pure nodes it depends on; `op` (the value-dependent op that needs it)
  // names the refusal when it cannot be known (a random draw, an in-place write, a Python step).
  Tensor Evaluate(int slot, const std::string& op);

 private:
  int NewSlot(const Tensor& t);
  std::unordered_map<int, Tensor> real_;    // Note [Dynamic shapes]: slot -> its tracing-call value
  std::unordered_map<int, int> producer_;   // slot -> the node that computed it
  std::vector<int> dynamic_slots_;          // the slots of run-time sizes, in order
  void LinkSizes(Node& n, const std::vector<Value>& args);
  std::shared_ptr<Program> prog_;
  std::unordered_map<TensorImpl*, int> slot_of_;
  std::vector<Tensor> lazies_;  // keeps the lazy tensors (and so their impl addresses) alive
  bool active_ = false;
  bool in_backward_ = false;
  std::string opaque_;
  std::string scope_;
  std::unordered_map<const Storage*, std::vector<int>> by_storage_;  // (SlotOf: saved outputs)
  bool autograd_ = true;  // SetAutograd
  std::unordered_map<const TensorImpl*, std::pair<Tensor, int>> grads_;  // leaf -> (lazy grad, accumulations)
};

// Where the user called the op being recorded ("file.py:41"); set by the Python bindings
// (src/api/graph_bind.cpp: the first frame outside the oneflow package). Null: not recorded.
using LocationFn = std::string (*)();
void SetLocationHook(LocationFn fn);

// Hot-path test of the bindings (Note [Lazy interception]).
extern std::atomic<int> g_tracers;
Tracer* CurrentTracer();
inline Tracer* Active() {
  if (__builtin_expect(g_tracers.load(std::memory_order_relaxed) == 0, 1)) return nullptr;
  return CurrentTracer();
}
inline bool IsLazy(const Tensor& t) {
  Tracer* tr = Active();
  return tr && t.defined() && tr->SlotOf(t) >= 0;
}

// Records table op `op` (its boxed entry; `add_` style names are the in-place forms); `tracked`
// as in Tracer::Record.
std::vector<Tensor> RecordOp(Tracer* tr, const char* op, std::vector<Value> args, bool tracked = false);

// A generated binding's test (Note [Backward nodes]): grad mode is on and an argument requires
// grad, so the call goes through the functional entry (autograd), which records it.
bool NeedsAutograd(const std::vector<Value>& args);

// The functional entries' interception (Note [Backward nodes]): the op recorded on the calling
// thread's tracer, its outputs as the entry returns them.
template <typename R> struct Unboxer;
template <> struct Unboxer<Tensor> {
  static Tensor Get(std::vector<Tensor> v) { return std::move(v.at(0)); }
};
template <> struct Unboxer<std::vector<Tensor>> {
  static std::vector<Tensor> Get(std::vector<Tensor> v) { return v; }
};
template <typename... T> struct Unboxer<std::tuple<T...>> {
  template <size_t... I>
  static std::tuple<T...> Make(const std::vector<Tensor>& v, std::index_sequence<I...>) { return {v.at(I)...}; }
  static std::tuple<T...> Get(std::vector<Tensor> v) { return Make(v, std::index_sequence_for<T...>{}); }
};
template <typename R> R RecordEntry(const char* op, std::vector<Value> args) {
  return Unboxer<R>::Get(RecordOp(CurrentTracer(), op, std::move(args), true));
}
inline Tensor& RecordEntryInplace(Tensor& self, const char* op, std::vector<Value> args) {
  RecordOp(CurrentTracer(), op, std::move(args), true);
  return self;
}

// Argument values from the bindings' converted C++ arguments.
inline Value V(std::nullopt_t) { return Value(); }
inline Value V(const Tensor& t) { return t.defined() ? Value(t) : Value(); }
inline Value V(const std::vector<Tensor>& t) { return Value(t); }
inline Value V(int64_t x) { return Value(x); }
inline Value V(int x) { return Value(static_cast<int64_t>(x)); }
inline Value V(double x) { return Value(x); }
inline Value V(bool x) { return Value(x); }
inline Value V(const Scalar& x) { return Value(x); }
inline Value V(const DimVector& x) { return Value(x); }
inline Value V(const std::vector<double>& x) { return Value(x); }
inline Value V(DType x) { return Value(x); }
inline Value V(const Device& x) { return Value(x); }
inline Value V(const std::string& x) { return Value(x); }
inline Value V(const GeneratorPtr& g) { return g ? Value(g) : Value(); }
template <typename T> Value V(const std::optional<T>& o) { return o ? V(*o) : Value(); }

}  // namespace oneflow::lazy
