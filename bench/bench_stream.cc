// Google Benchmark: what this machine's memory moves for the traffic mixes of the operators,
// next to the glibc memcpy that bench/compare uses as its roofline. A copy is one read stream
// and one write stream; SCE reads two streams (features, labels) and writes one, mhc_pre and
// the backward read N (+ 1) and write one, mhc_post reads one and writes N (WriteK: the same
// writes without the read). The kernels here do the least arithmetic that touches every byte,
// with non-temporal stores on x86-64 (as the
// library's kernels use beyond the last-level cache), so they bound what a kernel with that
// traffic can reach; the "% of roofline" of bench/compare can exceed 100 % where memcpy is
// slower than such a kernel.
//   bench_stream [--benchmark_filter=REGEX]     threads: OMP_NUM_THREADS (default: all CPUs)
// Every stream is 64 MiB (beyond the caches), allocated and written before timing.
// Vectors wider than the baseline ISA pass between inlined helpers only.
#pragma GCC diagnostic ignored "-Wpsabi"
#include <benchmark/benchmark.h>
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "bench_common.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace {

constexpr size_t kStreamFloats = size_t{16} << 20;  // 64 MiB per stream
constexpr size_t kBlock = 4096;                     // floats per block of a thread's slice

// 16 floats (GCC / Clang vector extension). The loops are compiled for AVX-512, AVX2 and
// baseline x86-64 and picked at load time (target_clones): with 16-byte SSE2 loads the
// many-stream reads were ~25 % slower (fewer lines in flight), which would understate the bound.
typedef float V16 __attribute__((vector_size(64)));
#if defined(__x86_64__)
#define BENCH_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define BENCH_CLONES
#endif
inline V16 Get16(const float* p) {
  V16 v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
// o[0..16) = v, non-temporal where the ISA has it (o is 16-byte aligned).
inline void Put16(float* o, const V16& v) {
#if defined(__x86_64__)
  alignas(64) float t[16];
  std::memcpy(t, &v, sizeof(v));
  for (int i = 0; i < 16; i += 4) _mm_stream_ps(o + i, _mm_load_ps(t + i));
#else
  std::memcpy(o, &v, sizeof(v));
#endif
}
inline void Fence() {
#if defined(__x86_64__)
  _mm_sfence();
#endif
}

// Runs body(begin, end) on every OpenMP thread over a 64-byte-aligned slice of [0, n).
template <typename Body>
void Slices(size_t n, Body body) {
#pragma omp parallel
  {
    const size_t t = static_cast<size_t>(omp_get_thread_num()), nt = static_cast<size_t>(omp_get_num_threads());
    const size_t b = n * t / nt / 16 * 16, e = t + 1 == nt ? n : n * (t + 1) / nt / 16 * 16;
    body(b, e);
    Fence();
  }
}

struct Buffers {
  bench::Buffer in, out;
  Buffers(size_t inStreams, size_t outStreams)
      : in(inStreams * kStreamFloats * sizeof(float)), out(outStreams * kStreamFloats * sizeof(float)) {
    // Non-zero data: a hypervisor may back pages of zeros with one shared page.
    float* p = reinterpret_cast<float*>(in.data());
    for (size_t i = 0; i < inStreams * kStreamFloats; ++i) p[i] = static_cast<float>(i % 1000) * 0.001f;
    std::memset(out.data(), 1, out.size());
  }
  const float* In(size_t s) const { return reinterpret_cast<const float*>(in.data()) + s * kStreamFloats; }
  float* Out(size_t s) { return reinterpret_cast<float*>(out.data()) + s * kStreamFloats; }
};

void Report(benchmark::State& state, size_t streams) {
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * streams * kStreamFloats * sizeof(float)));
}

// glibc memcpy, one slice per thread: bench/compare's roofline.
void BM_Memcpy(benchmark::State& state) {
  Buffers b(1, 1);
  auto run = [&] {
    Slices(kStreamFloats, [&](size_t lo, size_t hi) {
      std::memcpy(b.Out(0) + lo, b.In(0) + lo, (hi - lo) * sizeof(float));
    });
  };
  run();
  for (auto _ : state) run();
  Report(state, 2);
}

// out[i] = sum_s in[s][i] for i in [lo, hi).
BENCH_CLONES void SumStreams(const float* const* in, size_t K, float* out, size_t lo, size_t hi) {
  for (size_t i = lo; i < hi; i += 16) {
    V16 acc = Get16(in[0] + i);
    for (size_t s = 1; s < K; ++s) acc += Get16(in[s] + i);
    Put16(out + i, acc);
  }
}

// out[s][i] = in[i] * (s + 1) for s < K, block by block (as mhc_post does) over [lo, hi).
BENCH_CLONES void ScaleToStreams(const float* in, float* const* out, size_t K, size_t lo, size_t hi) {
  for (size_t c = lo; c < hi; c += kBlock)
    for (size_t s = 0; s < K; ++s) {
      const float h = static_cast<float>(s + 1);
      for (size_t i = c; i < std::min(hi, c + kBlock); i += 16) Put16(out[s] + i, Get16(in + i) * h);
    }
}

// K read streams, one written (K = 2: SCE's row path; K = N, N + 1: mhc_pre, the backward).
void BM_ReadKWrite1(benchmark::State& state) {
  const size_t K = static_cast<size_t>(state.range(0));
  Buffers b(K, 1);
  std::vector<const float*> in(K);
  for (size_t s = 0; s < K; ++s) in[s] = b.In(s);
  auto run = [&] { Slices(kStreamFloats, [&](size_t lo, size_t hi) { SumStreams(in.data(), K, b.Out(0), lo, hi); }); };
  run();
  for (auto _ : state) run();
  Report(state, K + 1);
}

// One read stream, K written (mhc_post).
void BM_Read1WriteK(benchmark::State& state) {
  const size_t K = static_cast<size_t>(state.range(0));
  Buffers b(1, K);
  std::vector<float*> out(K);
  for (size_t s = 0; s < K; ++s) out[s] = b.Out(s);
  auto run = [&] { Slices(kStreamFloats, [&](size_t lo, size_t hi) { ScaleToStreams(b.In(0), out.data(), K, lo, hi); }); };
  run();
  for (auto _ : state) run();
  Report(state, K + 1);
}

// K streams written, nothing read: the write bandwidth alone. mhc_post writes N bytes for each
// byte it reads; where Read1WriteK/N takes as long as WriteK/N, its reads are free and the
// writes alone bound it (docs/mhc.md).
BENCH_CLONES void FillStreams(float* const* out, size_t K, size_t lo, size_t hi) {
  for (size_t s = 0; s < K; ++s) {
    V16 v = {};
    v += static_cast<float>(s + 1);
    for (size_t i = lo; i < hi; i += 16) Put16(out[s] + i, v);
  }
}

void BM_WriteK(benchmark::State& state) {
  const size_t K = static_cast<size_t>(state.range(0));
  Buffers b(0, K);
  std::vector<float*> out(K);
  for (size_t s = 0; s < K; ++s) out[s] = b.Out(s);
  auto run = [&] { Slices(kStreamFloats, [&](size_t lo, size_t hi) { FillStreams(out.data(), K, lo, hi); }); };
  run();
  for (auto _ : state) run();
  Report(state, K);
}

BENCHMARK(BM_Memcpy)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ReadKWrite1)->Arg(2)->Arg(4)->Arg(8)->Arg(9)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Read1WriteK)->Arg(4)->Arg(8)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_WriteK)->Arg(4)->Arg(8)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
