// Google Benchmark: SoftmaxCrossEntropyWithLogits through the public two-stage API, one
// benchmark per planner variant the shapes select (FullLoad, SplitR, R split across cores, the
// small-C packed rows, C = 1, NCHW, strided gather, in-place, broadcast labels) and per dtype.
// Every iteration is a complete call as a CANN host program makes it: GetWorkspaceSize (plan)
// + aclnnSoftmaxCrossEntropyWithLogits (execute) on the null stream; "ExecuteOnly" rows reuse a
// repeatable executor to separate the planning cost. Buffers are allocated and written before
// timing, and one untimed call warms caches and the thread pool.
//   bench_sce [--benchmark_filter=REGEX] [google benchmark flags]
// Threads: ACLNN_PORTABLE_NUM_THREADS (default: every CPU this process may use).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "bench_common.h"

namespace {

using bench::Buffer;
using bench::DType;

struct SceShape {
  const char* variant;  // what the shape exercises
  bool nchw;
  int64_t dims[4];
  bool labels_broadcast = false;
  int64_t row_stride = 0;  // > C: padded rows (non-contiguous views)
  bool inplace = false;
};

const SceShape kShapes[] = {
    {"FullLoad", false, {4096, 1000}},
    {"FullLoad", false, {65536, 1000}},
    {"SplitR", false, {1024, 32000}},
    {"SplitR", false, {64, 131072}},
    {"SplitAcrossCores", false, {4, 1048576}},
    {"SmallC", false, {65536, 10}},
    {"SmallC", false, {1048576, 2}},
    // Packed rows with C read at run time (see ScePackedTakes), and kRows just past them.
    {"WideSmallC", false, {65536, 24}},
    {"WideSmallC", false, {65536, 33}},
    {"WideSmallC", false, {65536, 63}},
    {"WideSmallC", false, {65536, 64}},
    // kRows 16 rows at a time (FullLoadRowBlocks: fp32 C <= 80, 16-bit C <= 192; fp32 C = 100 and
    // 160 one row at a time).
    {"RowBlocks", false, {65536, 80}},
    {"RowBlocks", false, {16384, 100}},
    {"RowBlocks", false, {16384, 160}},
    {"C1", false, {1048576, 1}},
    {"NCHW", true, {8, 19, 256, 256}},
    {"Strided", false, {4096, 1000}, false, 1024},
    {"InPlace", false, {4096, 1000}, false, 0, true},
    {"LabelsBroadcast", false, {65536, 1000}, true},
    {"Latency", false, {16, 4}},
    // In L2: the kernels' compute speed without the memory system (ns per element).
    {"InCache", false, {64, 1000}},
    {"InCache", false, {2048, 10}},
    {"InCache", false, {16384, 2}},
    {"InCache", true, {1, 19, 64, 64}},
};

// The buffers of the last case, kept across the repeated calls Google Benchmark makes while it
// sizes the iteration count (allocating and touching per call would dominate big shapes).
struct SceFixture {
  std::string key;
  Buffer features, labels, loss, backprop, workspace;
  std::unique_ptr<bench::SceTensors> tensors;
  aclnnStatus plan_status = ACLNN_SUCCESS;
  std::string plan_error;
};

SceFixture& Prepare(const SceShape& s, DType t) {
  static SceFixture fx;
  const std::string key = std::string(s.variant) + std::to_string(s.dims[0]) + "x" +
                          std::to_string(s.dims[1]) + bench::Name(t);
  if (fx.key == key) return fx;
  fx.tensors.reset();
  fx = SceFixture();  // frees the previous case first
  fx.key = key;
  const int64_t rows = s.nchw ? s.dims[0] * s.dims[2] * s.dims[3] : s.dims[0];
  const int64_t classes = s.dims[1];
  const int64_t rs = s.row_stride > 0 ? s.row_stride : classes;
  const size_t es = bench::ElementSize(t);
  const size_t matrix = static_cast<size_t>(rows) * rs;
  const size_t label_elems = s.labels_broadcast ? static_cast<size_t>(rs) : matrix;
  fx.features = Buffer(matrix * es);
  fx.labels = Buffer(label_elems * es);
  fx.loss = Buffer(static_cast<size_t>(rows) * es);
  if (!s.inplace) fx.backprop = Buffer(matrix * es);
  bench::FillUniform(fx.features.data(), matrix, t, -4.f, 4.f, 1);
  bench::FillUniform(fx.labels.data(), label_elems, t, 0.f, 2.f / static_cast<float>(classes), 2);
  fx.tensors = std::make_unique<bench::SceTensors>(
      t, s.nchw, s.dims, s.labels_broadcast, fx.features.data(), fx.labels.data(), fx.loss.data(),
      s.inplace ? fx.features.data() : fx.backprop.data(), s.row_stride);
  uint64_t ws = 0;
  fx.plan_status = fx.tensors->WorkspaceSize(&ws);
  if (fx.plan_status != ACLNN_SUCCESS) {
    fx.plan_error = aclGetRecentErrMsg();
    return fx;
  }
  fx.workspace = Buffer(ws + 64);
  fx.tensors->PlanAndRun(fx.workspace.data(), fx.workspace.size());  // warm-up
  return fx;
}

void SetCounters(benchmark::State& state, const SceShape& s, DType t) {
  const int64_t rows = s.nchw ? s.dims[0] * s.dims[2] * s.dims[3] : s.dims[0];
  const int64_t classes = s.dims[1];
  const int64_t label_rows = s.labels_broadcast ? 1 : rows;
  state.SetItemsProcessed(state.iterations() * rows * classes);  // elements of features
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() *
                                               bench::SceBytes(rows, classes, label_rows, t)));
}

void BM_PlanAndExecute(benchmark::State& state, SceShape s, DType t) {
  if (!bench::HaveSce()) return state.SkipWithError("operator not built into the library");
  SceFixture& fx = Prepare(s, t);
  if (fx.plan_status != ACLNN_SUCCESS)
    return state.SkipWithError(("not supported: " + fx.plan_error).c_str());
  for (auto _ : state) {
    if (fx.tensors->PlanAndRun(fx.workspace.data(), fx.workspace.size()) != ACLNN_SUCCESS)
      return state.SkipWithError(aclGetRecentErrMsg());
  }
  SetCounters(state, s, t);
}

// Execute only: one repeatable executor planned before timing.
void BM_ExecuteOnly(benchmark::State& state, SceShape s, DType t) {
  if (!bench::HaveSce()) return state.SkipWithError("operator not built into the library");
  SceFixture& fx = Prepare(s, t);
  if (fx.plan_status != ACLNN_SUCCESS)
    return state.SkipWithError(("not supported: " + fx.plan_error).c_str());
  uint64_t ws = 0;
  aclOpExecutor* exec = nullptr;
  const bench::SceTensors& x = *fx.tensors;
  if (aclnnSoftmaxCrossEntropyWithLogitsGetWorkspaceSize(x.features, x.labels, x.loss, x.backprop, &ws,
                                                         &exec) != ACLNN_SUCCESS ||
      aclSetAclOpExecutorRepeatable(exec) != ACLNN_SUCCESS)
    return state.SkipWithError(aclGetRecentErrMsg());
  for (auto _ : state) {
    if (aclnnSoftmaxCrossEntropyWithLogits(ws ? fx.workspace.data() : nullptr, ws, exec, nullptr) !=
        ACLNN_SUCCESS) {
      state.SkipWithError(aclGetRecentErrMsg());
      break;
    }
  }
  aclDestroyAclOpExecutor(exec);
  SetCounters(state, s, t);
}

std::string ShapeName(const SceShape& s) {
  char buf[128];
  int n = s.nchw ? std::snprintf(buf, sizeof buf, "[%lld,%lld,%lld,%lld]", (long long)s.dims[0],
                                 (long long)s.dims[1], (long long)s.dims[2], (long long)s.dims[3])
                 : std::snprintf(buf, sizeof buf, "[%lld,%lld]", (long long)s.dims[0], (long long)s.dims[1]);
  if (s.labels_broadcast) std::snprintf(buf + n, sizeof buf - n, "_labels[1,%lld]", (long long)s.dims[1]);
  if (s.row_stride) std::snprintf(buf + n, sizeof buf - n, "_rowstride%lld", (long long)s.row_stride);
  return buf;
}

const bool kRegistered = [] {
  aclInit(nullptr);
  for (DType t : {DType::kF32, DType::kBF16, DType::kF16}) {
    for (const SceShape& s : kShapes) {
      const std::string base = std::string("SCE/") + s.variant + "/" + bench::Name(t) + "/" + ShapeName(s);
      auto* b = benchmark::RegisterBenchmark((base + "/PlanExecute").c_str(), BM_PlanAndExecute, s, t);
      b->MinWarmUpTime(0.05)->Unit(benchmark::kMicrosecond)->UseRealTime();
      if (std::string(s.variant) == "Latency") {
        b->Unit(benchmark::kNanosecond)->Repetitions(5)->ReportAggregatesOnly(true);
        benchmark::RegisterBenchmark((base + "/ExecuteOnly").c_str(), BM_ExecuteOnly, s, t)
            ->MinWarmUpTime(0.05)->Unit(benchmark::kNanosecond)->UseRealTime()
            ->Repetitions(5)->ReportAggregatesOnly(true);
      }
    }
  }
  return true;
}();

}  // namespace

BENCHMARK_MAIN();
