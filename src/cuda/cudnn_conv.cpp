// cuDNN convolutions (the CUDA kernels of kernels/conv.h; switches in cuda/conv.h). A ConvGeom
// becomes cuDNN's descriptors: tensors [n, c, spatial]
// with at least two spatial dims (1-d convolutions get a trailing 1, as ConvGeom's unused dims),
// the filter [cy, cx / groups, k...], symmetric padding, a group count. The algorithm is chosen
// once per geometry (Note [cuDNN algorithm choice]); its workspace comes from the caching allocator. float32
// uses TF32 tensor cores only when allowed (flow.backends.cudnn.allow_tf32); 16-bit floats
// accumulate in float.
#include "cuda/conv.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

#include "cuda/runtime.h"
#include "kernels/conv.h"
#include "ops/copy.h"
#include "decl/empty.h"

#ifdef ONEFLOW_WITH_CUDNN
#include <cudnn.h>
#endif

namespace oneflow::cuda {

namespace {
std::atomic<bool> allow_tf32{true};
}  // namespace

void SetCudnnAllowTF32(bool allow) { allow_tf32 = allow; }
bool CudnnAllowTF32() { return allow_tf32; }

#ifndef ONEFLOW_WITH_CUDNN

int CudnnVersion() { return -1; }
void SetCudnnBenchmark(bool on) { (void)on; }
bool CudnnBenchmark() { return false; }
void SetCudnnDeterministic(bool on) { (void)on; }
bool CudnnDeterministic() { return false; }

// Without cuDNN no convolution kernel is registered: CUDA convolutions take the registry's host
// fallback (Note [Kernel registry]).
void RegisterConvKernels() {}

#else

namespace {

#define OF_CUDNN_CHECK(expr)                                                                    \
  do {                                                                                          \
    cudnnStatus_t of_st_ = (expr);                                                              \
    OF_CHECK(of_st_ == CUDNN_STATUS_SUCCESS) << "cuDNN error: " << cudnnGetErrorString(of_st_) \
                                             << " (" #expr ")";                                \
  } while (0)

// One handle per device, bound to the device's stream.
cudnnHandle_t Handle(int device) {
  static std::mutex mu;
  static std::vector<cudnnHandle_t> handles;
  std::lock_guard<std::mutex> lock(mu);
  if (handles.empty()) handles.resize(DeviceCount(), nullptr);
  if (!handles[device]) {
    DeviceGuard guard(device);
    OF_CUDNN_CHECK(cudnnCreate(&handles[device]));
    OF_CUDNN_CHECK(cudnnSetStream(handles[device], static_cast<cudaStream_t>(Stream(device))));
  }
  return handles[device];
}

cudnnDataType_t DataType(DType t, int device) {
  switch (t) {
    case DType::kFloat32: return CUDNN_DATA_FLOAT;
    case DType::kFloat64: return CUDNN_DATA_DOUBLE;
    case DType::kFloat16: return CUDNN_DATA_HALF;
    case DType::kBFloat16: return CUDNN_DATA_BFLOAT16;
    default:  // the registration's dtypes (RegisterConvKernels) keep every other dtype away
      OF_ASSERT(false) << "cuDNN convolution of " << DTypeName(t) << " on device " << device;
      __builtin_unreachable();
  }
}

// The descriptors of one convolution relation y = conv(x, w), freed with it.
struct Descs {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr, bias = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnDataType_t dt;
  bool fma_only = false;  // float32 without TF32 (flow.backends.cudnn.allow_tf32 = False)

  Descs(const ConvGeom& g, DType dtype, int device) : dt(DataType(dtype, device)) {
    // Spatial dims as cuDNN sees them: ConvGeom right-aligns the k dims in its 3 slots (unused
    // leading slots are 1), so cuDNN's sd dims are the last sd slots; a 1-d convolution is a 2-d
    // one over [1, L].
    const int sd = g.k < 2 ? 2 : g.k, nd = sd + 2, first = 3 - sd;
    OF_CHECK(g.n < (int64_t(1) << 31) && g.cx < (int64_t(1) << 31) && g.cy < (int64_t(1) << 31))
        << "convolution: a dimension is too large for cuDNN";
    std::vector<int> xd = {int(g.n), int(g.cx)}, yd = {int(g.n), int(g.cy)}, wd = {int(g.cy), int(g.cx / g.groups)};
    std::vector<int> pad, stride, dil;
    for (int d = first; d < 3; ++d) {
      xd.push_back(int(g.xs[d]));
      yd.push_back(int(g.ys[d]));
      wd.push_back(int(g.ks[d]));
      pad.push_back(int(g.pad[d]));
      stride.push_back(int(g.stride[d]));
      dil.push_back(int(g.dil[d]));
    }
    OF_CUDNN_CHECK(cudnnCreateTensorDescriptor(&x));
    OF_CUDNN_CHECK(cudnnCreateTensorDescriptor(&y));
    OF_CUDNN_CHECK(cudnnCreateFilterDescriptor(&w));
    OF_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&conv));
    SetContiguous(x, xd);
    SetContiguous(y, yd);
    OF_CUDNN_CHECK(cudnnSetFilterNdDescriptor(w, dt, CUDNN_TENSOR_NCHW, nd, wd.data()));
    const cudnnDataType_t compute = dt == CUDNN_DATA_DOUBLE ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
    OF_CUDNN_CHECK(cudnnSetConvolutionNdDescriptor(conv, sd, pad.data(), stride.data(), dil.data(),
                                                   CUDNN_CROSS_CORRELATION, compute));
    OF_CUDNN_CHECK(cudnnSetConvolutionGroupCount(conv, int(g.groups)));
    fma_only = dt == CUDNN_DATA_FLOAT && !allow_tf32;
    OF_CUDNN_CHECK(cudnnSetConvolutionMathType(conv, fma_only ? CUDNN_FMA_MATH : CUDNN_DEFAULT_MATH));
  }
  void SetContiguous(cudnnTensorDescriptor_t d, const std::vector<int>& dims) {
    std::vector<int> st(dims.size());
    int64_t s = 1;
    for (int i = int(dims.size()) - 1; i >= 0; --i) {
      st[i] = int(s);
      s *= dims[i];
    }
    OF_CUDNN_CHECK(cudnnSetTensorNdDescriptor(d, dt, int(dims.size()), dims.data(), st.data()));
  }
  ~Descs() {
    if (x) cudnnDestroyTensorDescriptor(x);
    if (y) cudnnDestroyTensorDescriptor(y);
    if (bias) cudnnDestroyTensorDescriptor(bias);
    if (w) cudnnDestroyFilterDescriptor(w);
    if (conv) cudnnDestroyConvolutionDescriptor(conv);
  }
};

// A device workspace of `bytes` (none for 0).
Tensor Workspace(size_t bytes, const Device& dev) {
  if (bytes == 0) return Tensor();
  return Empty(DimVector{static_cast<int64_t>(bytes)}, DType::kUInt8, dev);
}
void* WorkspacePtr(const Tensor& ws) { return ws.defined() ? ws.raw_ptr() : nullptr; }

// alpha / beta of cuDNN calls: double for double data, else float.
struct Scale {
  float f;
  double d;
  const void* of(cudnnDataType_t dt) const { return dt == CUDNN_DATA_DOUBLE ? static_cast<const void*>(&d) : &f; }
};
constexpr Scale kOne{1.0f, 1.0}, kZero{0.0f, 0.0};

// Note [cuDNN algorithm choice]: each direction of a convolution picks its algorithm once per
// geometry (dtype, device, sizes, math mode and the two switches below are the key), so repeated
// calls skip cuDNN's heuristic query. flow.backends.cudnn.benchmark = True (as in PyTorch) times
// the candidates on the call's own buffers with cudnnFind*AlgorithmEx (outputs are written with
// beta = 0, so the trial runs are harmless) and keeps the fastest; otherwise the heuristic's
// first choice that succeeds. flow.backends.cudnn.deterministic = True keeps only algorithms
// cuDNN marks deterministic. The trial workspace is the largest one a candidate asks for, at most
// kMaxTrialWorkspace; a candidate needing more is skipped.
std::atomic<bool> benchmark{false}, deterministic{false};
constexpr int kMaxAlgos = 16;
constexpr size_t kMaxTrialWorkspace = size_t(1) << 30;

struct Choice {
  int algo = 0;
  size_t bytes = 0;
};

template <typename Perf>
bool Usable(const Perf& p, size_t max_bytes) {
  return p.status == CUDNN_STATUS_SUCCESS && p.memory <= max_bytes &&
         (!deterministic.load() || p.determinism == CUDNN_DETERMINISTIC);
}

// One direction's cuDNN calls; a, b are its inputs and out its output, in the order cuDNN takes them.
struct Forward {
  using Perf = cudnnConvolutionFwdAlgoPerf_t;
  static constexpr const char* kWhat = "conv";
  static void Heuristic(cudnnHandle_t h, const Descs& d, int* n, Perf* p) {
    OF_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(h, d.x, d.w, d.conv, d.y, kMaxAlgos, n, p));
  }
  static void Find(cudnnHandle_t h, const Descs& d, void* a, void* b, void* out, void* ws, size_t bytes, int* n,
                   Perf* p) {
    OF_CUDNN_CHECK(cudnnFindConvolutionForwardAlgorithmEx(h, d.x, a, d.w, b, d.conv, d.y, out, kMaxAlgos, n, p,
                                                          ws, bytes));
  }
  static void Run(cudnnHandle_t h, const Descs& d, Choice c, void* a, void* b, void* out, void* ws) {
    OF_CUDNN_CHECK(cudnnConvolutionForward(h, kOne.of(d.dt), d.x, a, d.w, b, d.conv,
                                           static_cast<cudnnConvolutionFwdAlgo_t>(c.algo), ws, c.bytes,
                                           kZero.of(d.dt), d.y, out));
  }
};

struct BackwardData {
  using Perf = cudnnConvolutionBwdDataAlgoPerf_t;
  static constexpr const char* kWhat = "conv backward (input)";
  static void Heuristic(cudnnHandle_t h, const Descs& d, int* n, Perf* p) {
    OF_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(h, d.w, d.y, d.conv, d.x, kMaxAlgos, n, p));
  }
  static void Find(cudnnHandle_t h, const Descs& d, void* a, void* b, void* out, void* ws, size_t bytes, int* n,
                   Perf* p) {
    OF_CUDNN_CHECK(cudnnFindConvolutionBackwardDataAlgorithmEx(h, d.w, a, d.y, b, d.conv, d.x, out, kMaxAlgos, n,
                                                               p, ws, bytes));
  }
  static void Run(cudnnHandle_t h, const Descs& d, Choice c, void* a, void* b, void* out, void* ws) {
    OF_CUDNN_CHECK(cudnnConvolutionBackwardData(h, kOne.of(d.dt), d.w, a, d.y, b, d.conv,
                                                static_cast<cudnnConvolutionBwdDataAlgo_t>(c.algo), ws, c.bytes,
                                                kZero.of(d.dt), d.x, out));
  }
};

struct BackwardFilter {
  using Perf = cudnnConvolutionBwdFilterAlgoPerf_t;
  static constexpr const char* kWhat = "conv backward (weight)";
  static void Heuristic(cudnnHandle_t h, const Descs& d, int* n, Perf* p) {
    OF_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, d.x, d.y, d.conv, d.w, kMaxAlgos, n, p));
  }
  static void Find(cudnnHandle_t h, const Descs& d, void* a, void* b, void* out, void* ws, size_t bytes, int* n,
                   Perf* p) {
    OF_CUDNN_CHECK(cudnnFindConvolutionBackwardFilterAlgorithmEx(h, d.x, a, d.y, b, d.conv, d.w, out, kMaxAlgos,
                                                                 n, p, ws, bytes));
  }
  static void Run(cudnnHandle_t h, const Descs& d, Choice c, void* a, void* b, void* out, void* ws) {
    OF_CUDNN_CHECK(cudnnConvolutionBackwardFilter(h, kOne.of(d.dt), d.x, a, d.y, b, d.conv,
                                                  static_cast<cudnnConvolutionBwdFilterAlgo_t>(c.algo), ws,
                                                  c.bytes, kZero.of(d.dt), d.w, out));
  }
};

std::vector<int64_t> CacheKey(int dir, int dev, const Descs& d, const ConvGeom& g) {
  std::vector<int64_t> k = {dir, dev, int64_t(d.dt), int64_t(d.fma_only), int64_t(benchmark.load()),
                            int64_t(deterministic.load()), g.k, g.n, g.cx, g.cy, g.groups};
  for (int i = 0; i < 3; ++i) k.insert(k.end(), {g.xs[i], g.ys[i], g.ks[i], g.stride[i], g.pad[i], g.dil[i]});
  return k;
}

template <typename Ops>
Choice Search(cudnnHandle_t h, const Descs& d, const Device& dev, void* a, void* b, void* out) {
  typename Ops::Perf perf[kMaxAlgos];
  int found = 0;
  Ops::Heuristic(h, d, &found, perf);
  if (benchmark.load()) {
    size_t trial = 0;
    for (int i = 0; i < found; ++i)
      if (Usable(perf[i], kMaxTrialWorkspace)) trial = std::max(trial, perf[i].memory);
    Tensor ws;
    try {
      ws = Workspace(trial, dev);
    } catch (const Error&) {  // no memory for the trials: the heuristic's choice instead
      trial = SIZE_MAX;
    }
    if (trial != SIZE_MAX) {
      int timed = 0;
      typename Ops::Perf times[kMaxAlgos];
      Ops::Find(h, d, a, b, out, WorkspacePtr(ws), trial, &timed, times);  // sorted by time
      for (int i = 0; i < timed; ++i)
        if (Usable(times[i], trial)) return {int(times[i].algo), times[i].memory};
    }
  }
  for (int i = 0; i < found; ++i)  // sorted by expected speed
    if (Usable(perf[i], SIZE_MAX)) return {int(perf[i].algo), perf[i].memory};
  OF_THROW(kRuntime) << Ops::kWhat << ": cuDNN has no " << (deterministic.load() ? "deterministic " : "")
                     << "algorithm for this convolution";
  return {};
}

// Chooses (cached) and runs one direction.
template <typename Ops>
void RunConv(int dir, const ConvGeom& g, const Tensor& out, const Descs& d, void* a, void* b) {
  static std::mutex mu;
  static std::map<std::vector<int64_t>, Choice> cache;
  const int dev = out.device().index;
  cudnnHandle_t h = Handle(dev);
  const std::vector<int64_t> key = CacheKey(dir, dev, d, g);
  Choice c;
  bool known = false;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find(key);
    if (it != cache.end()) c = it->second, known = true;
  }
  if (!known) {
    c = Search<Ops>(h, d, out.device(), a, b, out.raw_ptr());
    std::lock_guard<std::mutex> lock(mu);
    cache.emplace(key, c);
  }
  const Tensor ws = Workspace(c.bytes, out.device());
  Ops::Run(h, d, c, a, b, out.raw_ptr(), WorkspacePtr(ws));
}

// Transposed convolutions whose output_padding reaches the stride (allowed when the dilation
// exceeds it) have more x positions past the last window than cuDNN's size rule
// ys = floor((xs + 2 pad - dil (ks - 1) - 1) / stride) + 1 admits. f = (pad - PadR) / stride
// zero rows appended to y per dim make the sizes agree: they add nothing to dx or dw, and their
// forward outputs are dropped. Returns whether any dim needed them.
bool WidenY(const ConvGeom& g, ConvGeom* wide) {
  *wide = g;
  bool any = false;
  for (int d = 0; d < 3; ++d) {
    const int64_t over = g.pad[d] - g.PadR(d);
    if (over < g.stride[d]) continue;
    wide->ys[d] += over / g.stride[d];
    any = true;
  }
  return any;
}

// y's rows as a view of the widened buffer (right-aligned slots, as ConvGeom keeps them).
Tensor YRows(const Tensor& wide, const Tensor& y) { return MakeView(wide, y.sizes(), wide.strides(), 0); }

Tensor WideY(const ConvGeom& wide, const Tensor& y) {
  DimVector sizes = y.sizes();
  for (size_t i = 2; i < sizes.size(); ++i) sizes[i] = wide.ys[3 - (sizes.size() - 2) + (i - 2)];
  return Empty(sizes, y.dtype(), y.device());
}

// dy with the zero rows of WidenY appended, when g needs them (else dy itself).
Tensor PaddedDy(const ConvGeom& g, const Tensor& dy, ConvGeom* wg) {
  if (!WidenY(g, wg)) return dy;
  const Tensor wide = WideY(*wg, dy);
  FillWith(wide, Scalar(0));
  CopyInto(YRows(wide, dy), dy);
  return wide;
}

}  // namespace

void SetCudnnBenchmark(bool on) { benchmark = on; }
bool CudnnBenchmark() { return benchmark; }
void SetCudnnDeterministic(bool on) { deterministic = on; }
bool CudnnDeterministic() { return deterministic; }

int CudnnVersion() { return static_cast<int>(cudnnGetVersion()); }

namespace {

void CudnnForward(const ConvGeom& g, const Tensor& x, const Tensor& w, const Tensor& bias, const Tensor& y) {
  DeviceGuard guard(y.device().index);
  ConvGeom wg;
  if (WidenY(g, &wg)) {
    const Tensor wide = WideY(wg, y);
    CudnnForward(wg, x, w, bias, wide);
    CopyInto(y, YRows(wide, y));
    return;
  }
  Descs d(g, y.dtype(), y.device().index);
  RunConv<Forward>(0, g, y, d, x.raw_ptr(), w.raw_ptr());
  if (bias.defined()) {
    OF_CUDNN_CHECK(cudnnCreateTensorDescriptor(&d.bias));
    std::vector<int> bd(g.k < 2 ? 4 : g.k + 2, 1);
    bd[1] = int(g.cy);
    d.SetContiguous(d.bias, bd);
    OF_CUDNN_CHECK(cudnnAddTensor(Handle(y.device().index), kOne.of(d.dt), d.bias, bias.raw_ptr(), kOne.of(d.dt),
                                  d.y, y.raw_ptr()));
  }
}

void CudnnBackwardData(const ConvGeom& g, const Tensor& dy, const Tensor& w, const Tensor& dx) {
  DeviceGuard guard(dx.device().index);
  ConvGeom wg;
  const Tensor dyw = PaddedDy(g, dy, &wg);
  Descs d(wg, dx.dtype(), dx.device().index);
  RunConv<BackwardData>(1, wg, dx, d, w.raw_ptr(), dyw.raw_ptr());
}

void CudnnBackwardWeight(const ConvGeom& g, const Tensor& x, const Tensor& dy, const Tensor& dw) {
  DeviceGuard guard(dw.device().index);
  ConvGeom wg;
  const Tensor dyw = PaddedDy(g, dy, &wg);
  Descs d(wg, dw.dtype(), dw.device().index);
  RunConv<BackwardFilter>(2, wg, dw, d, x.raw_ptr(), dyw.raw_ptr());
}

void CudnnBackwardWeightOrZero(const ConvGeom& g, const Tensor& x, const Tensor& dy, const Tensor& dw) {
  if (dy.numel() == 0) return FillWith(dw, Scalar(0));  // an empty batch: no contribution
  CudnnBackwardWeight(g, x, dy, dw);
}

}  // namespace

// Note [Kernel registry]: called once by cuda::RegisterKernels (cuda/registry.cpp).
void RegisterConvKernels() {
  // cuDNN convolves floating-point tensors only (DataType): integer convolutions run on host
  // copies, decided by the registry (Note [Kernel registry]).
  const kernels::DTypeSet f = kernels::kFloatingDTypes;
  kernels::RegisterKernel<kernels::ConvForwardKernel>(DeviceType::kCUDA, &CudnnForward, f);
  kernels::RegisterKernel<kernels::ConvBackwardDataKernel>(DeviceType::kCUDA, &CudnnBackwardData, f);
  kernels::RegisterKernel<kernels::ConvBackwardWeightKernel>(DeviceType::kCUDA, &CudnnBackwardWeightOrZero, f);
}

#endif  // ONEFLOW_WITH_CUDNN

}  // namespace oneflow::cuda
