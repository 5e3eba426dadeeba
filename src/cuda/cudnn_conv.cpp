// cuDNN convolutions (cuda/conv.h). A ConvGeom becomes cuDNN's descriptors: tensors [n, c, spatial]
// with at least two spatial dims (1-d convolutions get a trailing 1, as ConvGeom's unused dims),
// the filter [cy, cx / groups, k...], symmetric padding, a group count. The algorithm is cuDNN's
// heuristic first choice that fits; its workspace comes from the caching allocator. float32
// uses TF32 tensor cores only when allowed (flow.backends.cudnn.allow_tf32); 16-bit floats
// accumulate in float.
#include "cuda/conv.h"

#include <atomic>
#include <mutex>
#include <vector>

#include "cuda/runtime.h"
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

void ConvForward(const ConvGeom&, const Tensor&, const Tensor&, const Tensor&, const Tensor&) {
  OF_THROW(kNotImplemented) << "convolutions of CUDA tensors need cuDNN, which this build did not find";
}
void ConvBackwardData(const ConvGeom& g, const Tensor&, const Tensor&, const Tensor&) {
  ConvForward(g, Tensor(), Tensor(), Tensor(), Tensor());
}
void ConvBackwardWeight(const ConvGeom& g, const Tensor&, const Tensor&, const Tensor&) {
  ConvForward(g, Tensor(), Tensor(), Tensor(), Tensor());
}

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

cudnnDataType_t DataType(DType t) {
  switch (t) {
    case DType::kFloat32: return CUDNN_DATA_FLOAT;
    case DType::kFloat64: return CUDNN_DATA_DOUBLE;
    case DType::kFloat16: return CUDNN_DATA_HALF;
    case DType::kBFloat16: return CUDNN_DATA_BFLOAT16;
    default:
      OF_THROW(kNotImplemented) << "convolution of " << DTypeName(t)
                                << " CUDA tensors is not implemented (cuDNN takes floating point tensors)";
  }
}

// The descriptors of one convolution relation y = conv(x, w), freed with it.
struct Descs {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr, bias = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnDataType_t dt;

  Descs(const ConvGeom& g, DType dtype) : dt(DataType(dtype)) {
    const int sd = g.k < 2 ? 2 : g.k, nd = sd + 2;  // spatial dims as cuDNN sees them
    OF_CHECK(g.n < (int64_t(1) << 31) && g.cx < (int64_t(1) << 31) && g.cy < (int64_t(1) << 31))
        << "convolution: a dimension is too large for cuDNN";
    std::vector<int> xd = {int(g.n), int(g.cx)}, yd = {int(g.n), int(g.cy)}, wd = {int(g.cy), int(g.cx / g.groups)};
    std::vector<int> pad, stride, dil;
    for (int d = 0; d < sd; ++d) {
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
    const bool fma_only = dt == CUDNN_DATA_FLOAT && !allow_tf32;
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

// The first heuristic choice whose status is a success (cuDNN sorts them by expected speed).
template <typename Perf>
auto FirstOk(const Perf* p, int n, const char* what) -> decltype(p[0].algo) {
  for (int i = 0; i < n; ++i)
    if (p[i].status == CUDNN_STATUS_SUCCESS) return p[i].algo;
  OF_THROW(kRuntime) << what << ": cuDNN has no algorithm for this convolution";
}

constexpr int kMaxAlgos = 8;

}  // namespace

int CudnnVersion() { return static_cast<int>(cudnnGetVersion()); }

void ConvForward(const ConvGeom& g, const Tensor& x, const Tensor& w, const Tensor& bias, const Tensor& y) {
  const int dev = y.device().index;
  DeviceGuard guard(dev);
  cudnnHandle_t h = Handle(dev);
  Descs d(g, y.dtype());
  cudnnConvolutionFwdAlgoPerf_t perf[kMaxAlgos];
  int found = 0;
  OF_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(h, d.x, d.w, d.conv, d.y, kMaxAlgos, &found, perf));
  const cudnnConvolutionFwdAlgo_t algo = FirstOk(perf, found, "conv");
  size_t bytes = 0;
  OF_CUDNN_CHECK(cudnnGetConvolutionForwardWorkspaceSize(h, d.x, d.w, d.conv, d.y, algo, &bytes));
  const Tensor ws = Workspace(bytes, y.device());
  OF_CUDNN_CHECK(cudnnConvolutionForward(h, kOne.of(d.dt), d.x, x.raw_ptr(), d.w, w.raw_ptr(), d.conv, algo,
                                         WorkspacePtr(ws), bytes, kZero.of(d.dt), d.y, y.raw_ptr()));
  if (bias.defined()) {
    OF_CUDNN_CHECK(cudnnCreateTensorDescriptor(&d.bias));
    std::vector<int> bd(g.k < 2 ? 4 : g.k + 2, 1);
    bd[1] = int(g.cy);
    d.SetContiguous(d.bias, bd);
    OF_CUDNN_CHECK(cudnnAddTensor(h, kOne.of(d.dt), d.bias, bias.raw_ptr(), kOne.of(d.dt), d.y, y.raw_ptr()));
  }
}

void ConvBackwardData(const ConvGeom& g, const Tensor& dy, const Tensor& w, const Tensor& dx) {
  const int dev = dx.device().index;
  DeviceGuard guard(dev);
  cudnnHandle_t h = Handle(dev);
  Descs d(g, dx.dtype());
  cudnnConvolutionBwdDataAlgoPerf_t perf[kMaxAlgos];
  int found = 0;
  OF_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(h, d.w, d.y, d.conv, d.x, kMaxAlgos, &found, perf));
  const cudnnConvolutionBwdDataAlgo_t algo = FirstOk(perf, found, "conv backward (input)");
  size_t bytes = 0;
  OF_CUDNN_CHECK(cudnnGetConvolutionBackwardDataWorkspaceSize(h, d.w, d.y, d.conv, d.x, algo, &bytes));
  const Tensor ws = Workspace(bytes, dx.device());
  OF_CUDNN_CHECK(cudnnConvolutionBackwardData(h, kOne.of(d.dt), d.w, w.raw_ptr(), d.y, dy.raw_ptr(), d.conv, algo,
                                              WorkspacePtr(ws), bytes, kZero.of(d.dt), d.x, dx.raw_ptr()));
}

void ConvBackwardWeight(const ConvGeom& g, const Tensor& x, const Tensor& dy, const Tensor& dw) {
  const int dev = dw.device().index;
  DeviceGuard guard(dev);
  cudnnHandle_t h = Handle(dev);
  Descs d(g, dw.dtype());
  cudnnConvolutionBwdFilterAlgoPerf_t perf[kMaxAlgos];
  int found = 0;
  OF_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, d.x, d.y, d.conv, d.w, kMaxAlgos, &found, perf));
  const cudnnConvolutionBwdFilterAlgo_t algo = FirstOk(perf, found, "conv backward (weight)");
  size_t bytes = 0;
  OF_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterWorkspaceSize(h, d.x, d.y, d.conv, d.w, algo, &bytes));
  const Tensor ws = Workspace(bytes, dw.device());
  OF_CUDNN_CHECK(cudnnConvolutionBackwardFilter(h, kOne.of(d.dt), d.x, x.raw_ptr(), d.y, dy.raw_ptr(), d.conv,
                                                algo, WorkspacePtr(ws), bytes, kZero.of(d.dt), d.w, dw.raw_ptr()));
}

#endif  // ONEFLOW_WITH_CUDNN

}  // namespace oneflow::cuda
