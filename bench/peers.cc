// libaclnn_bench_peers: the C side of bench/compare. Python (ctypes) owns every buffer (torch
// tensors, preallocated and touched); the functions here time ours through the public API, the
// oneDNN softmax forward and a multi-threaded memcpy on those same buffers, in tight loops with
// no Python in between. Each timing call returns the seconds spent in `iters` calls (< 0: error,
// with the text in bp_last_error()).
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "bench_common.h"

#if ACLNN_BENCH_HAVE_DNNL
#include <dnnl.hpp>
#endif

namespace {

thread_local std::string g_error;
int g_threads = 1;

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double Fail(const std::string& msg) {
  g_error = msg;
  return -1.0;
}

struct SceCase {
  bench::DType dtype;
  bool nchw;
  int64_t dims[4];
  bool labels_broadcast;
  void* features;
  void* backprop;
  std::unique_ptr<bench::SceTensors> tensors;  // ours
  std::vector<uint8_t> workspace;
  uint64_t workspace_size = 0;
#if ACLNN_BENCH_HAVE_DNNL
  std::unique_ptr<dnnl::engine> engine;
  std::unique_ptr<dnnl::stream> stream;
  std::unique_ptr<dnnl::softmax_forward> softmax;
  std::unique_ptr<dnnl::memory> src, dst;
  std::string dnnl_error;
#endif
};

}  // namespace

extern "C" {

const char* bp_last_error() { return g_error.c_str(); }

// Threads for every peer that runs on OpenMP (oneDNN, memcpy; torch shares the same libgomp).
// Ours reads ACLNN_PORTABLE_NUM_THREADS, which bench/compare sets to the same number.
int bp_init(int threads) {
  g_threads = threads > 0 ? threads : 1;
  omp_set_num_threads(g_threads);
  aclInit(nullptr);
  return 0;
}

int bp_have_sce() { return bench::HaveSce() ? 1 : 0; }
int bp_have_mhc(int op, int dtype) {
  return bench::HaveMhc(static_cast<bench::MhcOp>(op), static_cast<bench::DType>(dtype)) ? 1 : 0;
}
int bp_have_dnnl() { return ACLNN_BENCH_HAVE_DNNL; }
const char* bp_dnnl_version() {
#if ACLNN_BENCH_HAVE_DNNL
  static std::string v;
  const dnnl_version_t* ver = dnnl_version();
  v = std::to_string(ver->major) + "." + std::to_string(ver->minor) + "." + std::to_string(ver->patch) +
      " (cpu runtime " + (ver->cpu_runtime == DNNL_RUNTIME_OMP ? "OpenMP" : "other") + ")";
  return v.c_str();
#else
  return "not built";
#endif
}

// An SCE case over caller buffers. dims: ND {rows, classes}, NCHW {n, c, h, w}. Returns null on
// error. Ours' status at planning (e.g. a broadcast the op rejects) is in *ours_status.
void* bp_sce_create(int dtype, int nchw, const int64_t* dims, int labels_broadcast, void* features,
                    void* labels, void* loss, void* backprop, int* ours_status) {
  auto c = std::make_unique<SceCase>();
  c->dtype = static_cast<bench::DType>(dtype);
  c->nchw = nchw != 0;
  std::copy(dims, dims + (c->nchw ? 4 : 2), c->dims);
  c->labels_broadcast = labels_broadcast != 0;
  c->features = features;
  c->backprop = backprop;
  *ours_status = -1;
  if (bench::HaveSce()) {
    try {
      c->tensors = std::make_unique<bench::SceTensors>(c->dtype, c->nchw, c->dims, c->labels_broadcast,
                                                       features, labels, loss, backprop);
    } catch (const std::exception& e) {
      g_error = e.what();
      return nullptr;
    }
    *ours_status = c->tensors->WorkspaceSize(&c->workspace_size);
    if (*ours_status == ACLNN_SUCCESS) {
      c->workspace.assign(c->workspace_size + 64, 1);  // touched
    } else {
      g_error = aclGetRecentErrMsg();
      c->tensors.reset();
    }
  }
#if ACLNN_BENCH_HAVE_DNNL
  try {
    using dt = dnnl::memory::data_type;
    using tag = dnnl::memory::format_tag;
    const dt t = c->dtype == bench::DType::kF32 ? dt::f32 : (c->dtype == bench::DType::kF16 ? dt::f16 : dt::bf16);
    dnnl::memory::dims md_dims = c->nchw ? dnnl::memory::dims{dims[0], dims[1], dims[2], dims[3]}
                                         : dnnl::memory::dims{dims[0], dims[1]};
    dnnl::memory::desc md(md_dims, t, c->nchw ? tag::nchw : tag::ab);
    c->engine = std::make_unique<dnnl::engine>(dnnl::engine::kind::cpu, 0);
    c->stream = std::make_unique<dnnl::stream>(*c->engine);
    dnnl::softmax_forward::desc desc(dnnl::prop_kind::forward_inference, md, 1);
    dnnl::softmax_forward::primitive_desc pd(desc, *c->engine);
    c->softmax = std::make_unique<dnnl::softmax_forward>(pd);
    c->src = std::make_unique<dnnl::memory>(md, *c->engine, features);
    c->dst = std::make_unique<dnnl::memory>(md, *c->engine, backprop);
  } catch (const dnnl::error& e) {
    c->softmax.reset();
    c->dnnl_error = std::string("oneDNN: ") + e.what();
  }
#endif
  return c.release();
}

void bp_sce_destroy(void* h) { delete static_cast<SceCase*>(h); }

// Ours: plan (GetWorkspaceSize) + execute on the null stream, every iteration.
double bp_sce_ours(void* h, int64_t iters) {
  auto* c = static_cast<SceCase*>(h);
  if (!c->tensors) return Fail("ours: not available");
  const double t0 = Now();
  for (int64_t i = 0; i < iters; ++i) {
    const aclnnStatus st = c->tensors->PlanAndRun(c->workspace.data(), c->workspace.size());
    if (st != ACLNN_SUCCESS) return Fail(std::string("ours failed: ") + aclGetRecentErrMsg());
  }
  return Now() - t0;
}

// Per-call latencies (ns) of plan + execute, for the [16,4] row; returns 0 or -1.
double bp_sce_ours_latency(void* h, int64_t calls, double* out_ns) {
  auto* c = static_cast<SceCase*>(h);
  if (!c->tensors) return Fail("ours: not available");
  for (int64_t i = 0; i < calls; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    const aclnnStatus st = c->tensors->PlanAndRun(c->workspace.data(), c->workspace.size());
    const auto t1 = std::chrono::steady_clock::now();
    if (st != ACLNN_SUCCESS) return Fail(std::string("ours failed: ") + aclGetRecentErrMsg());
    out_ns[i] = std::chrono::duration<double, std::nano>(t1 - t0).count();
  }
  return 0;
}

// oneDNN softmax forward (inference, axis = classes), features -> backprop buffer.
double bp_sce_dnnl(void* h, int64_t iters) {
  auto* c = static_cast<SceCase*>(h);
#if ACLNN_BENCH_HAVE_DNNL
  if (!c->softmax) return Fail(c->dnnl_error);
  const std::unordered_map<int, dnnl::memory> args = {{DNNL_ARG_SRC, *c->src}, {DNNL_ARG_DST, *c->dst}};
  const double t0 = Now();
  for (int64_t i = 0; i < iters; ++i) c->softmax->execute(*c->stream, args);
  c->stream->wait();
  return Now() - t0;
#else
  (void)c;
  (void)iters;
  return Fail("oneDNN: not built (libdnnl-dev missing)");
#endif
}

double bp_sce_dnnl_latency(void* h, int64_t calls, double* out_ns) {
  auto* c = static_cast<SceCase*>(h);
#if ACLNN_BENCH_HAVE_DNNL
  if (!c->softmax) return Fail(c->dnnl_error);
  const std::unordered_map<int, dnnl::memory> args = {{DNNL_ARG_SRC, *c->src}, {DNNL_ARG_DST, *c->dst}};
  for (int64_t i = 0; i < calls; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    c->softmax->execute(*c->stream, args);
    c->stream->wait();
    out_ns[i] = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
  }
  return 0;
#else
  (void)c; (void)calls; (void)out_ns;
  return Fail("oneDNN: not built (libdnnl-dev missing)");
#endif
}

// mHC through the C entry points (blockDim 0 = automatic, null stream).
// op 0 post, 1 pre: a = input, b = h, c = output. op 2 backward: a = grad_out, b = input,
// c = h, d = grad_input, e = grad_h.
double bp_mhc(int op, int dtype, void* a, void* b, void* c, void* d, void* e, int64_t batch,
              int64_t seq, int64_t dim, int64_t n, int64_t iters) {
  const auto o = static_cast<bench::MhcOp>(op);
  const auto t = static_cast<bench::DType>(dtype);
  if (!bench::HaveMhc(o, t)) return Fail("ours: not built");
  auto* A = static_cast<uint8_t*>(a);
  auto* B = static_cast<uint8_t*>(b);
  auto* C = static_cast<uint8_t*>(c);
  aclGetRecentErrMsg();
  const double t0 = Now();
  if (o == bench::MhcOp::kBackward) {
    const bench::MhcBwdFn fn = bench::MhcBackward(t);
    for (int64_t i = 0; i < iters; ++i)
      fn(0, nullptr, A, B, C, static_cast<uint8_t*>(d), static_cast<uint8_t*>(e), batch, seq, dim, n);
  } else {
    const bench::MhcFwdFn fn = bench::MhcForward(o, t);
    for (int64_t i = 0; i < iters; ++i) fn(0, nullptr, A, B, C, batch, seq, dim, n);
  }
  return Now() - t0;
}

// The roofline: `bytes` copied from src to dst by the same number of threads (OpenMP), each a
// contiguous 64-byte-aligned slice with glibc memcpy. It reads and writes `bytes` each, so an op
// moving R + W bytes is compared with a copy of (R + W) / 2.
double bp_memcpy(void* dst, const void* src, size_t bytes, int64_t iters) {
  auto* d = static_cast<uint8_t*>(dst);
  const auto* s = static_cast<const uint8_t*>(src);
  const int threads = bytes < (64u << 10) ? 1 : g_threads;
  const double t0 = Now();
  for (int64_t i = 0; i < iters; ++i) {
#pragma omp parallel num_threads(threads)
    {
      const size_t nt = static_cast<size_t>(omp_get_num_threads());
      const size_t me = static_cast<size_t>(omp_get_thread_num());
      const size_t chunk = (bytes / nt + 63) / 64 * 64;
      const size_t begin = std::min(bytes, me * chunk);
      const size_t end = std::min(bytes, begin + chunk);
      if (end > begin) std::memcpy(d + begin, s + begin, end - begin);
    }
  }
  return Now() - t0;
}

}  // extern "C"
