// Google Benchmark: mhc_post, mhc_pre and mhc_post_backward through the C entry points of
// mhc/mhc.h (blockDim 0, null stream), for every dtype and the shapes of issue 5 (which select
// both planner strategies: small rows that stay in cache, and streams larger than the caches).
// Buffers are allocated and written before timing; one untimed call warms up.
//   bench_mhc [--benchmark_filter=REGEX] [google benchmark flags]
// Threads: ACLNN_PORTABLE_NUM_THREADS (default: every CPU this process may use).
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "bench_common.h"

namespace {

using bench::Buffer;
using bench::DType;
using bench::MhcOp;

struct MhcShape {
  int64_t b, s, d, n;
  std::vector<DType> dtypes;
};

const std::vector<DType> kAll = {DType::kF32, DType::kBF16, DType::kF16};
const MhcShape kShapes[] = {
    {4, 512, 256, 4, kAll},    {8, 1024, 512, 4, kAll},   {16, 2048, 1024, 4, kAll},
    {32, 2048, 1024, 4, kAll}, {16, 64, 4096, 4, kAll},   {4, 512, 1024, 4, kAll},
    {8, 256, 512, 4, kAll},    {16, 1024, 1024, 4, kAll}, {1, 8192, 7168, 4, {DType::kBF16}},
    {2, 4096, 4096, 8, kAll},  {2, 64, 256, 4, kAll},     {4, 32, 128, 8, kAll},
};

// Buffers of the last case, reused while Google Benchmark sizes the iteration count.
struct MhcFixture {
  std::string key;
  Buffer big, small, grad_input, h, grad_h;  // big: N streams; small, grad_input: one stream
};

MhcFixture& Prepare(MhcOp op, const MhcShape& s, DType t) {
  static MhcFixture fx;
  const std::string key = std::to_string(static_cast<int>(op)) + "/" + std::to_string(s.b) + "," +
                          std::to_string(s.s) + "," + std::to_string(s.d) + "," + std::to_string(s.n) +
                          bench::Name(t);
  if (fx.key == key) return fx;
  fx = MhcFixture();
  fx.key = key;
  const size_t es = bench::ElementSize(t);
  const size_t x = static_cast<size_t>(s.b) * s.s * s.d;
  fx.big = Buffer(x * s.n * es);
  fx.small = Buffer(x * es);
  fx.h = Buffer(static_cast<size_t>(s.n) * bench::MhcWeightSize(t));
  fx.grad_h = Buffer(static_cast<size_t>(s.n) * 4);
  if (op == MhcOp::kBackward) fx.grad_input = Buffer(x * es);
  bench::FillUniform(fx.big.data(), x * s.n, t, -1.f, 1.f, 3);
  bench::FillUniform(fx.small.data(), x, t, -1.f, 1.f, 4);
  bench::FillUniform(fx.h.data(), s.n, t == DType::kF16 ? DType::kF16 : DType::kF32, 0.25f, 1.f, 5);
  return fx;
}

void RunOnce(MhcOp op, const MhcShape& s, DType t, MhcFixture& fx) {
  switch (op) {
    case MhcOp::kPost:
      bench::MhcForward(op, t)(0, nullptr, fx.small.data(), fx.h.data(), fx.big.data(), s.b, s.s, s.d, s.n);
      break;
    case MhcOp::kPre:
      bench::MhcForward(op, t)(0, nullptr, fx.big.data(), fx.h.data(), fx.small.data(), s.b, s.s, s.d, s.n);
      break;
    case MhcOp::kBackward:  // grad_out = big, input = small
      bench::MhcBackward(t)(0, nullptr, fx.big.data(), fx.small.data(), fx.h.data(),
                            fx.grad_input.data(), fx.grad_h.data(), s.b, s.s, s.d, s.n);
      break;
  }
}

void BM_Mhc(benchmark::State& state, MhcOp op, MhcShape s, DType t) {
  if (!bench::HaveMhc(op, t)) return state.SkipWithError("operator not built into the library");
  MhcFixture& fx = Prepare(op, s, t);
  RunOnce(op, s, t, fx);  // warm-up
  for (auto _ : state) {
    RunOnce(op, s, t, fx);
    benchmark::ClobberMemory();
  }
  const int64_t elems = s.b * s.s * s.d * s.n;  // elements of the N-stream side
  state.SetItemsProcessed(state.iterations() * elems);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bench::MhcBytes(op, s.b, s.s, s.d, s.n, t)));
}

const bool kRegistered = [] {
  aclInit(nullptr);
  for (MhcOp op : {MhcOp::kPost, MhcOp::kPre, MhcOp::kBackward})
    for (const MhcShape& s : kShapes)
      for (DType t : s.dtypes) {
        const std::string name = std::string(bench::Name(op)) + "/" + bench::Name(t) + "/B" +
                                 std::to_string(s.b) + "_S" + std::to_string(s.s) + "_D" +
                                 std::to_string(s.d) + "_N" + std::to_string(s.n);
        benchmark::RegisterBenchmark(name.c_str(), BM_Mhc, op, s, t)
            ->MinWarmUpTime(0.05)->Unit(benchmark::kMicrosecond)->UseRealTime();
      }
  return true;
}();

}  // namespace

BENCHMARK_MAIN();
