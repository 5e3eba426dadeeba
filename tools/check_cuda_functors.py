"""Checks that the math functors compile as CUDA device code (src/kernels/functors*.h, core/hd.h).

    python tools/check_cuda_functors.py [--nvcc PATH] [--out DIR] [--arch sm_90] [--jobs N] [--run]

The CUDA pointwise engine calls the same functors as the CPU engine (docs/layout.md, point 5), so
every functor's operator() and the helpers it calls must be `OF_HD`. This generates, per op family,
a .cu file calling each functor in a `__global__` kernel for every storage dtype that the CPU
engine instantiates it for (the op's `dtypes:` set; Half / BFloat16 computing in OpMath = float),
as ops/pointwise.h does, and compiles it with nvcc (no GPU needed). It fails on any nvcc error or
on a warning about a host function called from device code (the functor would not run there).

Which functors: every pointwise op of the table (kind unary/binary/ternary: its `functor:` or
`<CamelCase(name)>Functor`, built by aggregate initialisation from the parameters after the tensor
inputs as tools/gen_ops.py builds it, here with the signature's defaults or value-initialised
values of the parameters' C++ types), plus those that only hand-written entries use (HAND_WRITTEN
below); a functor struct of the headers in neither list is an error, so a new one can't be left
out.

--run links executables instead (DIR/check_<group>); run with any argument on a machine with a
GPU, each runs its kernels over a grid of inputs (NaN, infinities, signed zeros, integer extremes)
and compares with the same functor called on the host (floats within 4 units in the last place:
the device uses its own expf/tanhf/erff where the host has vectorisable forms), printing the
mismatches.
"""
import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_ops  # noqa: E402
import optable  # noqa: E402

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
SRC = os.path.join(ROOT, "src")

# The storage dtypes of each `dtypes:` set, as ops/pointwise.h's DispatchSet instantiates them
# (kNumber dispatches like kAll: bool is refused before the kernel, but instantiated).
INTS = ["bool", "int8_t", "uint8_t", "int16_t", "int32_t", "int64_t"]
FLOATS = ["Half", "BFloat16", "float", "double"]
SETS = {"all": INTS + FLOATS, "number": INTS + FLOATS, "integral": INTS, "float": FLOATS}

# Functors used only by hand-written entries (src/ops/*.cpp): name -> (family header, arity,
# dtype set, result, constructor arguments), as those entries instantiate them.
HAND_WRITTEN = {
    "AddFunctor": (None, 2, "all", "same", []),                    # pointwise_misc_ops.cpp
    "SubFunctor": (None, 2, "number", "same", []),
    "DivFunctor": (None, 2, "all", "float", []),                   # math_ops.cpp (div)
    "FloorDivideFunctor": (None, 2, "number", "same", []),         # math_ops.cpp (div, floor)
    "PowFunctor": (None, 2, "all", "same", []),                    # math_ops.cpp (pow)
    "ClampMinFunctor": ("math_shared", 2, "number", "same", []),   # math_ops.cpp (clamp)
    "ClampMaxFunctor": ("math_shared", 2, "number", "same", []),
    "ClampFunctor": ("math_shared", 3, "number", "same", []),
    "NanToNumFunctor": ("math_shared", 1, "all", "same", ["0.0", "1e4", "-1e4"]),
    "NextafterFunctor": ("math_shared", 2, "float", "same", []),
    "TruncDivideFunctor": ("math_shared", 2, "number", "same", []),  # math_ops.cpp (div, trunc)
    "GeluFunctor": ("activation", 1, "float", "float", []),        # activation_ops.cpp
    "GeluTanhFunctor": ("activation", 1, "float", "float", []),
    "GeluBackwardFunctor": ("activation", 2, "float", "float", []),
    "GeluTanhBackwardFunctor": ("activation", 2, "float", "float", []),
    "PreluFunctor": ("activation", 2, "float", "same", []),
    "PolygammaFunctor": ("special", 1, "float", "float", ["int64_t{2}"]),  # special_ops.cpp
    "ConjFunctor": ("complex", 1, "all", "same", []),              # complex_ops.cpp
    "MseLossFunctor": ("loss", 2, "float", "same", []),            # loss_pointwise_ops.cpp
    "L1LossFunctor": ("loss", 2, "float", "same", []),
    "SmoothL1LossFunctor": ("loss", 2, "float", "same", ["1.0"]),
    "HuberLossFunctor": ("loss", 2, "float", "same", ["1.0"]),
    "SoftMarginLossFunctor": ("loss", 2, "float", "same", []),
    "BinaryCrossEntropyFunctor": ("loss", 2, "float", "same", []),
    "BceWithLogitsFunctor": ("loss", 3, "float", "same", []),
    "KlDivFunctor": ("loss", 2, "float", "same", ["false"]),
    "MarginRankingLossFunctor": ("loss", 3, "float", "same", ["0.5"]),
}

# Integer divisors must be non-zero, integer exponents non-negative (ops/pointwise.h kIntCheck:
# checked before the kernel runs), so --run leaves those inputs out.
INT_DIVISOR = {"FloorDivideFunctor", "RemainderFunctor", "FmodFunctor"}
INT_EXPONENT = {"PowFunctor"}
# Likewise the dtypes an op's `check:` refuses are compiled but not run.
CHECK_REFUSES = {"CheckAddcdiv": INTS, "CheckIntegerNotBool": ["bool"]}

PRELUDE = r"""// Generated by tools/check_cuda_functors.py. Do not edit.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <optional>
#include <type_traits>
#include <vector>

#include "core/dtype.h"
#include "core/scalar.h"
#include "kernels/functors.h"
%(includes)s

namespace oneflow::cuda_check {

template <typename... A> struct Types {};

// The engine's inner loop for one element (kernels/loop.h): load A, compute in OpMath<A>, store R.
template <typename R, typename A, typename F>
__global__ void Unary(R* o, const A* a, int64_t n, F f) {
  using M = OpMath<A>;
  const int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i < n) o[i] = static_cast<R>(f(static_cast<M>(a[i])));
}
template <typename R, typename A, typename F>
__global__ void Binary(R* o, const A* a, const A* b, int64_t n, F f) {
  using M = OpMath<A>;
  const int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i < n) o[i] = static_cast<R>(f(static_cast<M>(a[i]), static_cast<M>(b[i])));
}
template <typename R, typename A, typename F>
__global__ void Ternary(R* o, const A* a, const A* b, const A* c, int64_t n, F f) {
  using M = OpMath<A>;
  const int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i < n) o[i] = static_cast<R>(f(static_cast<M>(a[i]), static_cast<M>(b[i]), static_cast<M>(c[i])));
}

// ---- --run: the same element computed on the device and on the host ----
int g_failures = 0;
int64_t g_checked = 0;

// Sample values of each type (NaN, infinities, signed zeros, large and tiny magnitudes).
template <typename A> std::vector<A> Samples() {
  if constexpr (std::is_same_v<A, bool>) {
    return {false, true};
  } else if constexpr (std::is_integral_v<A>) {
    std::vector<A> v = {A(0), A(1), A(2), A(3), A(5), A(7), A(100), A(127)};
    if constexpr (std::is_signed_v<A>) {
      for (A x : {A(-1), A(-2), A(-7), A(-100), std::numeric_limits<A>::min()}) v.push_back(x);
    }
    v.push_back(std::numeric_limits<A>::max());
    return v;
  } else {
    const double inf = std::numeric_limits<double>::infinity();
    std::vector<A> v;
    for (double d : {0.0, -0.0, 0.25, -0.25, 0.5, -0.5, 0.75, 1.0, -1.0, 1.5, -2.0, 2.5, 3.0, -3.5,
                     6.0, 7.25, -20.5, 30.5, 88.0, -120.0, 1e-3, 1e-6, 1e4, inf, -inf,
                     std::numeric_limits<double>::quiet_NaN()})
      v.push_back(static_cast<A>(d));
    return v;
  }
}

// Within tolerance: exact for integers and bool; floats up to 4 units in their last place
// (device libm vs the host's forms), NaN == NaN.
template <typename R> bool Close(R d, R h) {
  if constexpr (std::is_integral_v<R>) {
    return d == h;
  } else {
    const double x = static_cast<double>(d), y = static_cast<double>(h);
    if (x != x || y != y) return x != x && y != y;
    if (x == y) return true;
    if (std::isinf(x) || std::isinf(y)) return false;
    const double eps = std::is_same_v<R, double> ? 1e-15 : std::is_same_v<R, float> ? 1e-7
                     : std::is_same_v<R, Half> ? 1e-3 : 8e-3;
    return std::abs(x - y) <= 4 * eps * std::max(std::abs(y), 1e-300) + (std::is_same_v<R, double> ? 1e-300 : 1e-30);
  }
}

template <typename T> double AsDouble(T v) { return static_cast<double>(static_cast<OpMath<T>>(v)); }
// (not DTypeName: this links without the library)
template <typename T> const char* TypeName() {
  const char* names[] = {"bool", "int8", "uint8", "int32", "int64", "float16", "bfloat16", "float32", "float64",
                         "complex64", "complex128", "int16"};  // by DType number (Note [DType numbers])
  return names[static_cast<int>(DTypeOf<T>::value)];
}

#define OF_CUDA_OK(expr) do { cudaError_t e = (expr); if (e != cudaSuccess) { \
  std::printf("CUDA error %%s at %%s:%%d\n", cudaGetErrorString(e), __FILE__, __LINE__); std::exit(2); } } while (0)

// (std::unique_ptr<T[]> rather than std::vector: vector<bool> has no data()).
template <typename T> T* ToDevice(const std::unique_ptr<T[]>& v, int64_t n) {
  T* p = nullptr;
  OF_CUDA_OK(cudaMalloc(&p, sizeof(T) * n));
  OF_CUDA_OK(cudaMemcpy(p, v.get(), sizeof(T) * n, cudaMemcpyHostToDevice));
  return p;
}

// Runs f over the operand tuples `args` (arity N) on the device and on the host and compares.
template <int N, typename R, typename A, typename F>
void RunOne(const char* name, const F& f, const std::vector<std::array<A, 3>>& args) {
  using M = OpMath<A>;
  const int64_t n = static_cast<int64_t>(args.size());
  if (n == 0) return;
  std::unique_ptr<A[]> a(new A[n]), b(new A[n]), c(new A[n]);
  for (int64_t i = 0; i < n; ++i) { a[i] = args[i][0]; b[i] = args[i][1]; c[i] = args[i][2]; }
  A *da = ToDevice(a, n), *db = ToDevice(b, n), *dc = ToDevice(c, n);
  R* dout = nullptr;
  OF_CUDA_OK(cudaMalloc(&dout, sizeof(R) * n));
  const int threads = 128, blocks = static_cast<int>((n + threads - 1) / threads);
  if constexpr (N == 1) Unary<R, A><<<blocks, threads>>>(dout, da, n, f);
  if constexpr (N == 2) Binary<R, A><<<blocks, threads>>>(dout, da, db, n, f);
  if constexpr (N == 3) Ternary<R, A><<<blocks, threads>>>(dout, da, db, dc, n, f);
  OF_CUDA_OK(cudaGetLastError());
  std::unique_ptr<R[]> out(new R[n]);
  OF_CUDA_OK(cudaMemcpy(out.get(), dout, sizeof(R) * n, cudaMemcpyDeviceToHost));
  OF_CUDA_OK(cudaFree(da)); OF_CUDA_OK(cudaFree(db)); OF_CUDA_OK(cudaFree(dc)); OF_CUDA_OK(cudaFree(dout));
  int shown = 0;
  for (int64_t i = 0; i < n; ++i) {
    R h;
    if constexpr (N == 1) h = static_cast<R>(f(static_cast<M>(a[i])));
    if constexpr (N == 2) h = static_cast<R>(f(static_cast<M>(a[i]), static_cast<M>(b[i])));
    if constexpr (N == 3) h = static_cast<R>(f(static_cast<M>(a[i]), static_cast<M>(b[i]), static_cast<M>(c[i])));
    ++g_checked;
    if (!Close(out[i], h)) {
      ++g_failures;
      if (shown++ < 3)
        std::printf("MISMATCH %%s [%%s]: f(%%.17g, %%.17g, %%.17g) device %%.17g host %%.17g\n", name,
                    TypeName<A>(), AsDouble(a[i]), AsDouble(b[i]), AsDouble(c[i]),
                    AsDouble(out[i]), AsDouble(h));
    }
  }
}

// kInt: 0, or 1 = integer divisors non-zero, 2 = integer exponents non-negative (kIntCheck).
template <int N, bool kBoolOut, int kInt, typename A, typename F>
void Check(const char* name, const F& f, bool run) {
  using R = std::conditional_t<kBoolOut, bool, A>;
  if (!run) {  // compile: instantiate the kernel (launching it is never reached)
    if constexpr (N == 1) Unary<R, A><<<1, 1>>>(nullptr, nullptr, 0, f);
    if constexpr (N == 2) Binary<R, A><<<1, 1>>>(nullptr, nullptr, nullptr, 0, f);
    if constexpr (N == 3) Ternary<R, A><<<1, 1>>>(nullptr, nullptr, nullptr, nullptr, 0, f);
    return;
  }
  const std::vector<A> s = Samples<A>();
  std::vector<std::array<A, 3>> args;
  auto allowed = [](A b) {
    if constexpr (std::is_integral_v<A> && kInt == 1) return b != A(0);
    else if constexpr (std::is_signed_v<A> && kInt == 2) return !(b < A(0));
    else return true;
  };
  if (N == 1) for (A x : s) args.push_back({x, A(0), A(0)});
  if (N == 2) for (A x : s) for (A y : s) if (allowed(y)) args.push_back({x, y, A(0)});
  if (N == 3) for (A x : s) for (A y : s) for (A z : s) args.push_back({x, y, z});
  RunOne<N, R, A>(name, f, args);
}

template <int N, bool kBoolOut, int kInt, typename F, typename... A>
void CheckTypes(const char* name, const F& f, Types<A...>, bool run) {
  (Check<N, kBoolOut, kInt, A>(name, f, run), ...);
}

}  // namespace oneflow::cuda_check
"""


def functor_structs():
    """Names of the functor structs the headers define (struct XFunctor, OF_FLOAT_UNARY*(X, ...))."""
    names = {}
    paths = [os.path.join(SRC, "kernels", "functors.h")] + sorted(
        os.path.join(SRC, "kernels", "functors", f)
        for f in os.listdir(os.path.join(SRC, "kernels", "functors")) if f.endswith(".h"))
    for p in paths:
        text = open(p).read()
        for m in re.finditer(r"\bstruct (\w+Functor)\b", text):
            names[m.group(1)] = p
        for m in re.finditer(r"^OF_FLOAT_UNARY(?:_C)?\((\w+),", text, re.M):
            names[m.group(1) + "Functor"] = p
    return names


def cpp_default(p):
    """The C++ initialiser of a parameter's signature default ('' for none or None)."""
    d = p.default
    if d is None or d == "None":
        return ""
    return {"True": "true", "False": "false"}.get(d, d)


def family_header(family):
    return os.path.exists(os.path.join(SRC, "kernels", "functors", f"{family}.h"))


def checks():
    """(group -> [(label, functor expression, arity, dtype set, result, functor name, dtypes
    refused by the op's check)], functor structs covered by neither list)."""
    out = {}
    covered = set()
    for e in optable.load():
        op = gen_ops.Op(e)
        if op.kind not in gen_ops.ARITY:
            continue
        n = gen_ops.ARITY[op.kind]
        attrs = op.params[n:]
        # As gen_ops.gen_pointwise: aggregate initialisation with the op's parameters, here
        # their defaults (run: meaningful attributes), else value-initialised.
        args = ", ".join(f"std::remove_cvref_t<{p.cpp_type()}>{{{cpp_default(p)}}}" for p in attrs)
        fam = op.family if family_header(op.family) else "_shared"
        skip = CHECK_REFUSES.get(e.get("check"), [])
        out.setdefault(fam, []).append((op.name, f"{op.functor}{{{args}}}", n, e["dtypes"], e["result"],
                                        op.functor, skip))
        covered.add(op.functor)
    for name, (header, n, dtypes, result, ctor) in HAND_WRITTEN.items():
        if name in covered:
            continue
        args = ", ".join(ctor)
        # With the table ops of the header's family (functors/math.h includes math_shared.h).
        group = {None: "_shared", "math_shared": "math"}.get(header, header)
        out.setdefault(group, []).append((name, f"{name}{{{args}}}", n, dtypes, result, name, []))
        covered.add(name)
    missing = sorted(set(functor_structs()) - covered)
    return out, missing


def header_of(group):
    return [] if group == "_shared" else [f'#include "kernels/functors/{group}.h"']


def gen_cu(group, items):
    lines = [PRELUDE % {"includes": "\n".join(header_of(group))},
             "int main(int argc, char** argv) {",
             "  using namespace oneflow;",
             "  using namespace oneflow::cuda_check;",
             "  const bool run = argc > 1;",
             "  (void)argv;"]
    for label, expr, n, dtypes, result, fname, skip in items:
        types = SETS[dtypes]
        # The dtypes reached at run time: `result: float` ops compute integers in the default
        # float dtype (ComputeDType), `number` refuses bool, an op's `check:` may refuse more. The
        # CPU engine instantiates the others too, so they are compiled, not run.
        ran = [t for t in types if t not in skip and (result != "float" or t in FLOATS)
               and not (dtypes == "number" and t == "bool")]
        rest = [t for t in types if t not in ran]
        head = f"CheckTypes<{n}, {'true' if result == 'bool' else 'false'}, " \
               f"{1 if fname in INT_DIVISOR else 2 if fname in INT_EXPONENT else 0}>(\"{label}\", {expr}, "
        if rest:
            lines.append(f"  {head}Types<{', '.join(rest)}>{{}}, false);")
        lines.append(f"  {head}Types<{', '.join(ran)}>{{}}, run);")
    lines += ['  if (run) std::printf("%s: %lld values checked, %d mismatches\\n", "' + group + '", '
              '(long long)g_checked, g_failures);',
              "  return g_failures ? 1 : 0;", "}", ""]
    return "\n".join(lines)


# Host code reached from device code ("calling a __host__ function from a __host__ __device__
# function is not allowed"; -Werror makes nvcc fail on it too).
HOST_CALL_WARNING = re.compile(r"calling a __host__ function|is not allowed|cannot be called from")


def compile_one(nvcc, cu, obj, arch, link):
    # 186 ("pointless comparison of unsigned integer with zero"): the functors are generic over
    # the integer types (relu's `x < 0` for uint8 too); GCC's -Wall does not warn there either.
    # ccache (as for the build): the test reruns this on every CI run, and the functors rarely
    # change; CCACHE_BASEDIR (main) makes the generated files' paths relative, so clones share it.
    launcher = [shutil.which("ccache")] if shutil.which("ccache") and os.environ.get("CCACHE_DISABLE") != "1" else []
    cmd = launcher + [nvcc, "-std=c++20", "--expt-relaxed-constexpr", f"-arch={arch}", "-diag-suppress", "186",
           "-Werror", "cross-execution-space-call", "-I", SRC]
    cmd += (["-o", obj, cu] if link else ["-c", "-x", "cu", cu, "-o", obj])
    t0 = time.time()
    r = subprocess.run(cmd, capture_output=True, text=True)
    return cmd, r, time.time() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nvcc", default=os.environ.get("NVCC") or shutil.which("nvcc") or "/usr/local/bin/nvcc")
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "cuda_check"))
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--run", action="store_true", help="link executables (run them on a GPU with any argument)")
    a = ap.parse_args()

    groups, missing = checks()
    if missing:
        print("functors neither in the op table nor in HAND_WRITTEN (add them):", ", ".join(missing))
        return 1
    os.makedirs(a.out, exist_ok=True)
    os.environ.setdefault("CCACHE_BASEDIR", os.path.commonpath([os.path.abspath(a.out), ROOT]))
    os.environ.setdefault("CCACHE_DIR", os.path.expanduser("~/.cache/ccache"))
    jobs = []
    for group, items in sorted(groups.items()):
        cu = os.path.join(a.out, f"check_{group}.cu")
        with open(cu, "w") as f:
            f.write(gen_cu(group, items))
        out = os.path.join(a.out, f"check_{group}" + ("" if a.run else ".o"))
        jobs.append((group, cu, out, len(items)))

    t0 = time.time()
    failed = False
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
        futs = {ex.submit(compile_one, a.nvcc, cu, out, a.arch, a.run): (g, cu, k) for g, cu, out, k in jobs}
        for fut in concurrent.futures.as_completed(futs):
            group, cu, k = futs[fut]
            cmd, r, secs = fut.result()
            text = r.stdout + r.stderr
            bad = [ln for ln in text.splitlines() if HOST_CALL_WARNING.search(ln)]
            status = "ok" if r.returncode == 0 and not bad else "FAILED"
            failed |= status != "ok"
            print(f"{status:6} {group:16} {k:3} functors  {secs:5.1f} s  {' '.join(cmd)}")
            if status != "ok" or text.strip():
                print(text)
    print(f"{len(jobs)} files, {sum(k for *_, k in jobs)} functor checks, {time.time() - t0:.1f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
