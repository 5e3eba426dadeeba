// FFTW glue (Note [FFTW plans]): the guru64 interface describes a transform over any dims of a
// strided tensor with the remaining dims as a batch ("howmany"), so no transposes are needed.
#include "kernels/fft.h"

#include <fftw3.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "core/parallel.h"
#include "ops/copy.h"

namespace oneflow {

namespace {

// Note [FFTW plans]: FFTW's planner is not thread-safe (executing a plan is), so every
// planner call holds one mutex. Plans are cached by geometry (kind, precision, sizes,
// strides, data alignment, thread count) for the life of the process and run with the
// new-array execute functions on each call's own buffers. Planning uses FFTW_ESTIMATE on the
// call's buffers (it never writes them) or FFTW_MEASURE, which times candidate plans once per
// geometry on scratch buffers (it overwrites its arrays): see MeasurePlans and Note [Choosing
// among measured plans].
std::mutex& PlannerMutex() {
  static std::mutex m;
  return m;
}

// ONEFLOW_FFTW_PLANNER: "estimate", "measure", or "auto" (default): measure transforms of at
// least kMeasureMin elements (measured on bench_fft.py: FFTW_ESTIMATE's plan for a 1024x1024
// complex fft2 ran 5x slower than the measured one), estimate small ones (planning then costs
// more than the transform saves).
constexpr int64_t kMeasureMin = int64_t{1} << 16;
bool MeasurePlans(int64_t work) {
  static const int mode = [] {
    const char* v = std::getenv("ONEFLOW_FFTW_PLANNER");
    const std::string m = v ? v : "auto";
    return m == "estimate" ? 0 : m == "measure" ? 1 : 2;
  }();
  return mode == 1 || (mode == 2 && work >= kMeasureMin);
}

// Note [FFTW wisdom]: a measured plan of a large transform costs seconds (2^20 points: about
// 5 s), so what the planner learnt is kept on disk and read back by later processes: a geometry
// measured once on this machine then plans at once. ONEFLOW_FFTW_WISDOM is the file prefix
// (default $XDG_CACHE_HOME, else ~/.cache, + /oneflow/fftw_wisdom; "" or "0" turns it off); one
// file per precision. Files are written whole to a temporary name and renamed, so a reader never
// sees half a file; a missing, unreadable or foreign file (another FFTW version) is ignored.
std::string WisdomPrefix() {
  static const std::string prefix = [] {
    if (const char* v = std::getenv("ONEFLOW_FFTW_WISDOM")) return std::string(std::strcmp(v, "0") ? v : "");
    std::string dir;
    if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) dir = x;
    else if (const char* h = std::getenv("HOME"); h && *h) dir = std::string(h) + "/.cache";
    else return std::string();
    return dir + "/oneflow/fftw_wisdom";
  }();
  return prefix;
}

template <typename A>
void LoadWisdomOnce() {  // under PlannerMutex()
  static bool done = false;
  if (done) return;
  done = true;
  const std::string p = WisdomPrefix();
  if (!p.empty()) A::ImportWisdom((p + "_" + A::kWisdomSuffix).c_str());
}

template <typename A>
void SaveWisdom() {  // under PlannerMutex()
  const std::string p = WisdomPrefix();
  if (p.empty()) return;
  const std::string path = p + "_" + A::kWisdomSuffix;
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  const std::string tmp = path + ".tmp" + std::to_string(::getpid());
  if (A::ExportWisdom(tmp.c_str())) std::rename(tmp.c_str(), path.c_str());
  else std::remove(tmp.c_str());
}

enum class Kind : int { kC2C, kR2C, kC2R };

struct Key {
  std::vector<int64_t> v;
  bool operator<(const Key& o) const { return v < o.v; }
};

// One precision's FFTW API (fftwf_* for float, fftw_* for double).
template <typename V> struct Api;
template <> struct Api<float> {
  using Plan = fftwf_plan;
  using Cpx = fftwf_complex;
  using Dim = fftw_iodim64;
  static Plan C2C(int r, const Dim* d, int hr, const Dim* hd, void* in, void* out, int sign, unsigned f) {
    return fftwf_plan_guru64_dft(r, d, hr, hd, (Cpx*)in, (Cpx*)out, sign, f);
  }
  static Plan R2C(int r, const Dim* d, int hr, const Dim* hd, void* in, void* out, unsigned f) {
    return fftwf_plan_guru64_dft_r2c(r, d, hr, hd, (float*)in, (Cpx*)out, f);
  }
  static Plan C2R(int r, const Dim* d, int hr, const Dim* hd, void* in, void* out, unsigned f) {
    return fftwf_plan_guru64_dft_c2r(r, d, hr, hd, (Cpx*)in, (float*)out, f);
  }
  static void Exec(Kind k, Plan p, void* in, void* out) {
    if (k == Kind::kC2C) fftwf_execute_dft(p, (Cpx*)in, (Cpx*)out);
    else if (k == Kind::kR2C) fftwf_execute_dft_r2c(p, (float*)in, (Cpx*)out);
    else fftwf_execute_dft_c2r(p, (Cpx*)in, (float*)out);
  }
  static void Threads(int n) {
    static std::once_flag once;
    std::call_once(once, [] { fftwf_init_threads(); });
    fftwf_plan_with_nthreads(n);
  }
  static int Alignment(const void* p) { return fftwf_alignment_of((float*)p); }
  static void* Malloc(size_t n) { return fftwf_malloc(n); }
  static constexpr const char* kWisdomSuffix = "f";
  static bool ImportWisdom(const char* f) { return fftwf_import_wisdom_from_filename(f) != 0; }
  static bool ExportWisdom(const char* f) { return fftwf_export_wisdom_to_filename(f) != 0; }
  static void Free(void* p) { fftwf_free(p); }
  static void Destroy(Plan p) { fftwf_destroy_plan(p); }
  static std::string WisdomString() {
    char* s = fftwf_export_wisdom_to_string();  // malloc'd by FFTW
    std::string r = s ? s : "";
    std::free(s);
    return r;
  }
  static void SetWisdom(const std::string& w) {
    fftwf_forget_wisdom();
    if (!w.empty()) fftwf_import_wisdom_from_string(w.c_str());
  }
};
template <> struct Api<double> {
  using Plan = fftw_plan;
  using Cpx = fftw_complex;
  using Dim = fftw_iodim64;
  static Plan C2C(int r, const Dim* d, int hr, const Dim* hd, void* in, void* out, int sign, unsigned f) {
    return fftw_plan_guru64_dft(r, d, hr, hd, (Cpx*)in, (Cpx*)out, sign, f);
  }
  static Plan R2C(int r, const Dim* d, int hr, const Dim* hd, void* in, void* out, unsigned f) {
    return fftw_plan_guru64_dft_r2c(r, d, hr, hd, (double*)in, (Cpx*)out, f);
  }
  static Plan C2R(int r, const Dim* d, int hr, const Dim* hd, void* in, void* out, unsigned f) {
    return fftw_plan_guru64_dft_c2r(r, d, hr, hd, (Cpx*)in, (double*)out, f);
  }
  static void Exec(Kind k, Plan p, void* in, void* out) {
    if (k == Kind::kC2C) fftw_execute_dft(p, (Cpx*)in, (Cpx*)out);
    else if (k == Kind::kR2C) fftw_execute_dft_r2c(p, (double*)in, (Cpx*)out);
    else fftw_execute_dft_c2r(p, (Cpx*)in, (double*)out);
  }
  static void Threads(int n) {
    static std::once_flag once;
    std::call_once(once, [] { fftw_init_threads(); });
    fftw_plan_with_nthreads(n);
  }
  static int Alignment(const void* p) { return fftw_alignment_of((double*)p); }
  static void* Malloc(size_t n) { return fftw_malloc(n); }
  static constexpr const char* kWisdomSuffix = "d";
  static bool ImportWisdom(const char* f) { return fftw_import_wisdom_from_filename(f) != 0; }
  static bool ExportWisdom(const char* f) { return fftw_export_wisdom_to_filename(f) != 0; }
  static void Free(void* p) { fftw_free(p); }
  static void Destroy(Plan p) { fftw_destroy_plan(p); }
  static std::string WisdomString() {
    char* s = fftw_export_wisdom_to_string();  // malloc'd by FFTW
    std::string r = s ? s : "";
    std::free(s);
    return r;
  }
  static void SetWisdom(const std::string& w) {
    fftw_forget_wisdom();
    if (!w.empty()) fftw_import_wisdom_from_string(w.c_str());
  }
};

// One transform's shape for FFTW: transform dims (the halved one last) and batch dims as
// iodims (n, input stride, output stride in elements of each array's type).
struct Geometry {
  Kind kind;
  int sign;
  std::vector<fftw_iodim64> d, h;
};

// Bytes an operand spans (in units of its element, `elem` bytes).
size_t Extent(const Geometry& g, bool in, size_t elem) {
  int64_t last = 0;
  for (const auto& x : g.d) last += (x.n - 1) * (in ? x.is : x.os);
  for (const auto& x : g.h) last += (x.n - 1) * (in ? x.is : x.os);
  return static_cast<size_t>(last + 1) * elem;
}

template <typename A>
typename A::Plan PlanOn(const Geometry& g, void* in, void* out, unsigned flags) {
  // c2r always runs on a private copy of its input (FftC2rKernel), so FFTW may overwrite it.
  flags |= g.kind == Kind::kC2R ? FFTW_DESTROY_INPUT : FFTW_PRESERVE_INPUT;
  const int r = static_cast<int>(g.d.size()), hr = static_cast<int>(g.h.size());
  if (g.kind == Kind::kC2C) return A::C2C(r, g.d.data(), hr, g.h.data(), in, out, g.sign, flags);
  if (g.kind == Kind::kR2C) return A::R2C(r, g.d.data(), hr, g.h.data(), in, out, flags);
  return A::C2R(r, g.d.data(), hr, g.h.data(), in, out, flags);
}

// Note [Choosing among measured plans]: FFTW_MEASURE picks a plan from timings taken once, and
// the shared machines we run on drift in speed by up to 2x within seconds, so two measurements
// of one geometry can pick plans far apart: six measured plans of a 2^20 complex fft, timed in
// turn in one process, ran 7.4 to 8.6 ms, and four of a 1024x1024 rfft2 2.5 to 3.1 ms. So a new
// geometry is measured several times, each time from the same prior wisdom; the candidates are
// then run in turn, round after round (drift hits them alike), and the one of least median time
// is kept. Its wisdom is the one kept and saved, so later processes get that plan at once.
// Planning stops adding candidates when the next would take the total past kCandidateBudget
// (always two, unless the first alone took longer than that): a 2^20 fft (about 5 s a
// measurement on the 2-core machines) gets two, a 1024x1024 fft2 (about 1 s) four.
constexpr int kMaxCandidates = 4;
constexpr double kCandidateBudget = 6.0;  // seconds
constexpr int kTimingRounds = 15;

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

// A measured plan (under PlannerMutex()), on scratch buffers: measuring overwrites its arrays.
template <typename A>
typename A::Plan MeasuredPlan(const Geometry& g, size_t in_bytes, size_t out_bytes) {
  using Plan = typename A::Plan;
  LoadWisdomOnce<A>();
  struct Scratch {
    void* p;
    explicit Scratch(size_t n) : p(A::Malloc(n)) { if (p) std::memset(p, 0, n); }
    ~Scratch() { A::Free(p); }
  } in(in_bytes), out(out_bytes);
  if (!in.p || !out.p) return nullptr;
  if (Plan p = PlanOn<A>(g, in.p, out.p, FFTW_MEASURE | FFTW_WISDOM_ONLY)) return p;  // chosen before

  const std::string prior = A::WisdomString();
  std::vector<Plan> plans;
  std::vector<std::string> wisdom;
  const auto start = std::chrono::steady_clock::now();
  double first = 0;
  while (static_cast<int>(plans.size()) < kMaxCandidates) {
    if (!plans.empty()) {
      const double spent = Seconds(start);
      if (plans.size() >= 2 ? spent + first > kCandidateBudget : first > kCandidateBudget) break;
      A::SetWisdom(prior);  // measure afresh, not from the last candidate's wisdom
    }
    Plan p = PlanOn<A>(g, in.p, out.p, FFTW_MEASURE);
    if (!p) break;
    if (plans.empty()) first = Seconds(start);
    plans.push_back(p);
    wisdom.push_back(A::WisdomString());
  }
  if (plans.empty()) return nullptr;
  size_t best = 0;
  if (plans.size() > 1) {
    // Zeroed inputs: a transform's time does not depend on its values (no denormals here).
    std::memset(in.p, 0, in_bytes);
    std::vector<std::vector<double>> times(plans.size());
    for (int r = -1; r < kTimingRounds; ++r) {  // round -1 warms the caches up, untimed
      for (size_t i = 0; i < plans.size(); ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        A::Exec(g.kind, plans[i], in.p, out.p);
        if (r >= 0) times[i].push_back(Seconds(t0));
      }
    }
    std::vector<double> median(plans.size());
    for (size_t i = 0; i < plans.size(); ++i) {
      std::nth_element(times[i].begin(), times[i].begin() + kTimingRounds / 2, times[i].end());
      median[i] = times[i][kTimingRounds / 2];
    }
    best = std::min_element(median.begin(), median.end()) - median.begin();
    for (size_t i = 0; i < plans.size(); ++i)
      if (i != best) A::Destroy(plans[i]);
    A::SetWisdom(wisdom[best]);
  }
  SaveWisdom<A>();
  return plans[best];
}

template <typename V>
void Run(Kind kind, const Tensor& in, const Tensor& out, const DimVector& dims, bool forward,
         double scale, int64_t n_last) {
  if (out.numel() == 0 || out.device().type == DeviceType::kMeta) return;
  using A = Api<V>;
  const int nd = in.dim();
  bool is_dim[kMaxDims] = {false};
  Geometry g{kind, forward ? FFTW_FORWARD : FFTW_BACKWARD, {}, {}};
  for (int64_t x : dims) {
    is_dim[x] = true;
    // `n_last`: the halved dim's logical size (the real signal length for r2c/c2r).
    const int64_t n = (x == dims.back() && kind != Kind::kC2C) ? n_last : in.sizes()[x];
    g.d.push_back({n, in.strides()[x], out.strides()[x]});
  }
  for (int i = 0; i < nd; ++i)
    if (!is_dim[i] && in.sizes()[i] != 1) g.h.push_back({in.sizes()[i], in.strides()[i], out.strides()[i]});
  void* ip = in.raw_data();
  void* op = out.raw_data();
  const int64_t work = std::max(in.numel(), out.numel());
  const int threads = work >= (int64_t{1} << 15) ? GetNumThreads() : 1;
  const int ai = A::Alignment(static_cast<V*>(ip)), ao = A::Alignment(static_cast<V*>(op));
  Key key;
  key.v = {static_cast<int64_t>(kind), sizeof(V), g.sign, threads, ai, ao, (int64_t)g.d.size(), (int64_t)g.h.size()};
  for (const auto& x : g.d) key.v.insert(key.v.end(), {x.n, x.is, x.os});
  for (const auto& x : g.h) key.v.insert(key.v.end(), {x.n, x.is, x.os});

  using Plan = typename A::Plan;
  static std::map<Key, Plan> cache;  // guarded by PlannerMutex()
  Plan plan = nullptr;
  {
    std::lock_guard<std::mutex> lock(PlannerMutex());
    auto it = cache.find(key);
    if (it != cache.end()) {
      plan = it->second;
    } else {
      A::Threads(threads);
      const size_t ein = sizeof(V) * (kind == Kind::kR2C ? 1 : 2);
      const size_t eout = sizeof(V) * (kind == Kind::kC2R ? 1 : 2);
      if (MeasurePlans(work) && ai == 0 && ao == 0)
        plan = MeasuredPlan<A>(g, Extent(g, true, ein), Extent(g, false, eout));
      else
        plan = PlanOn<A>(g, ip, op, FFTW_ESTIMATE);  // ESTIMATE never touches the arrays
      OF_CHECK(plan) << "FFTW could not plan this transform";
      cache.emplace(key, plan);
    }
  }
  A::Exec(kind, plan, ip, op);
  if (scale != 1.0) {
    // The normalisation, in place over the (contiguous) output.
    const int64_t n = out.numel() * (kind == Kind::kC2R ? 1 : 2);
    V* p = static_cast<V*>(op);
    const V s = static_cast<V>(scale);
    ParallelFor(0, n, kGrainSize, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) p[i] *= s;
    });
  }
}

template <typename F>
void ByPrecision(DType t, F&& f) {
  if (t == DType::kComplex128 || t == DType::kFloat64) f(Tag<double>{});
  else f(Tag<float>{});
}

void FftC2cCpu(const Tensor& in, const Tensor& out, const DimVector& dims, bool forward, double scale) {
  ByPrecision(in.dtype(), [&](auto tag) {
    Run<typename decltype(tag)::type>(Kind::kC2C, in, out, dims, forward, scale, 0);
  });
}

void FftR2cCpu(const Tensor& in, const Tensor& out, const DimVector& dims, double scale) {
  ByPrecision(in.dtype(), [&](auto tag) {
    Run<typename decltype(tag)::type>(Kind::kR2C, in, out, dims, true, scale, in.sizes()[dims.back()]);
  });
}

void FftC2rCpu(const Tensor& in, const Tensor& out, const DimVector& dims, double scale) {
  // FFTW's c2r overwrites its input: run it on a private contiguous copy.
  Tensor tmp = Empty(in.sizes(), in.dtype(), in.device());
  CopyInto(tmp, in);
  ByPrecision(in.dtype(), [&](auto tag) {
    Run<typename decltype(tag)::type>(Kind::kC2R, tmp, out, dims, false, scale, out.sizes()[dims.back()]);
  });
}

// The CPU kernels in the registry (Note [Kernel registry]); the entries below reach them.
const bool kRegistered = [] {
  kernels::RegisterKernel<kernels::FftC2cKernel>(DeviceType::kCPU, &FftC2cCpu);
  kernels::RegisterKernel<kernels::FftR2cKernel>(DeviceType::kCPU, &FftR2cCpu);
  kernels::RegisterKernel<kernels::FftC2rKernel>(DeviceType::kCPU, &FftC2rCpu);
  return true;
}();

}  // namespace

// CUDA: cuFFT (Note [cuFFT transforms]); none registered in a build without it. Meta tensors (the
// FFT ops' meta inference reaches here) have nothing to transform.
void FftC2cKernel(const Tensor& in, const Tensor& out, const DimVector& dims, bool forward, double scale) {
  if (out.device().type == DeviceType::kMeta) return;
  kernels::CallKernel<kernels::FftC2cKernel>(out.device(), in, out, dims, forward, scale);
}
void FftR2cKernel(const Tensor& in, const Tensor& out, const DimVector& dims, double scale) {
  if (out.device().type == DeviceType::kMeta) return;
  kernels::CallKernel<kernels::FftR2cKernel>(out.device(), in, out, dims, scale);
}
void FftC2rKernel(const Tensor& in, const Tensor& out, const DimVector& dims, double scale) {
  if (out.device().type == DeviceType::kMeta) return;
  kernels::CallKernel<kernels::FftC2rKernel>(out.device(), in, out, dims, scale);
}

}  // namespace oneflow
