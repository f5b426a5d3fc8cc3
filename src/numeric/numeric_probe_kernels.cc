// GCC 12 reports its own AVX-512 intrinsics (_mm512_undefined_*) as uninitialised.
#pragma GCC diagnostic ignored "-Wuninitialized"

#include <cstddef>
#include <cstdint>

#include "numeric/simd.h"
#include "numeric/simd_log.h"
#include "numeric/half.h"

#include <utility>

namespace aclnn_portable {
namespace ACLNN_ISA_NS {

namespace {
// y = f(x) over n floats, vector by vector; the last partial vector padded with `fill`.
template <typename F>
void MapLanes(const float* x, float* y, size_t n, float fill, F f) {
  size_t i = 0;
  for (; i + simd::kLanes <= n; i += simd::kLanes) simd::Store(y + i, f(simd::Load(x + i)));
  if (i < n) {
    const int r = static_cast<int>(n - i);
    simd::StoreN(y + i, f(simd::LoadN(x + i, r, fill)), r);
  }
}
}  // namespace

void ProbeExp(const float* x, float* y, size_t n) { MapLanes(x, y, n, 0.0f, [](simd::Vf v) __attribute__((always_inline)) { return simd::Exp(v); }); }
void ProbeExpNonPositive(const float* x, float* y, size_t n) {
  MapLanes(x, y, n, 0.0f, [](simd::Vf v) __attribute__((always_inline)) { return simd::ExpNonPositive(v); });
}
void ProbeExpNormalRange(const float* x, float* y, size_t n) {
  MapLanes(x, y, n, 0.0f, [](simd::Vf v) __attribute__((always_inline)) { return simd::ExpNormalRange(v); });
}

bool ProbeInExpNormalRange(const float* x, float ref) { return simd::InExpNormalRange(simd::Load(x), simd::Set(ref)); }

void ProbeSplitAdd(const float* e, size_t vectors, float* k, float* t) {
  simd::Vf kv = simd::Zero(), tv = simd::Zero();
  for (size_t i = 0; i < vectors; ++i) simd::SplitAdd(&kv, &tv, simd::Load(e + simd::kLanes * i));
  simd::Store(k, kv);
  simd::Store(t, tv);
}

void ProbeToHalf(const float* x, uint16_t* y, size_t n) {
  size_t i = 0;
  for (; i + simd::kLanes <= n; i += simd::kLanes) simd::StoreHalfBits(y + i, simd::Load(x + i));
  if (i < n) simd::StoreHalfBitsN(y + i, simd::LoadN(x + i, static_cast<int>(n - i), 0.0f), static_cast<int>(n - i));
}

void ProbeToBf16(const float* x, uint16_t* y, size_t n, int way) {
  size_t i = 0;
  if (way == 1) {
    for (; i + 2 * simd::kLanes <= n; i += 2 * simd::kLanes)
      simd::StoreAsPair(reinterpret_cast<BFloat16*>(y + i), simd::Load(x + i), simd::Load(x + i + simd::kLanes));
  } else if (way == 2) {  // blocks of 256 as 16 class vectors -> 16 rows of 16
    for (; i + 256 <= n; i += 256) simd::StoreRowsT<16>(reinterpret_cast<BFloat16*>(y + i), x + i);
  } else if (way == 3) {  // blocks of 32 as 2 class vectors -> 16 rows of 2
    for (; i + 32 <= n; i += 32) simd::StoreRowsT<2>(reinterpret_cast<BFloat16*>(y + i), x + i);
  } else if (way == 4 && reinterpret_cast<uintptr_t>(y) % 64 == 0) {  // the same, non-temporal
    for (; i + 32 <= n; i += 32) simd::StoreRows2Stream(reinterpret_cast<BFloat16*>(y + i), x + i);
    simd::StreamFence();
  } else if (way == 5) {
    for (; i + simd::kLanes <= n; i += simd::kLanes) {
#if defined(ACLNN_ISA_AVX2)
      alignas(64) float d[simd::kLanes];  // the deinterleaved layout: ymm 0 = even, ymm 1 = odd elements
      for (int k = 0; k < simd::kLanes / 2; ++k) d[k] = x[i + 2 * k], d[simd::kLanes / 2 + k] = x[i + 2 * k + 1];
      simd::MhcStoreBf16Deint(y + i, simd::Load(d));
#else
      simd::MhcStoreBf16Deint(y + i, simd::Load(x + i));
#endif
    }
  }
  for (; i + simd::kLanes <= n; i += simd::kLanes) simd::StoreBf16Bits(y + i, simd::Load(x + i));
  if (i < n) simd::StoreBf16BitsN(y + i, simd::LoadN(x + i, static_cast<int>(n - i), 0.0f), static_cast<int>(n - i));
}

void ProbeLog(const float* x, float* y, size_t n) { MapLanes(x, y, n, 1.0f, [](simd::Vf v) __attribute__((always_inline)) { return simd::Log(v); }); }
void ProbeLogPositiveNormal(const float* x, float* y, size_t n) {
  MapLanes(x, y, n, 1.0f, [](simd::Vf v) __attribute__((always_inline)) { return simd::LogPositiveNormal(v); });
}

namespace {
template <int kN, typename T>
void RowsN(const void* in, float* cols, const float* vals, void* out) {
  simd::LoadRowsT<kN>(static_cast<const T*>(in), cols);
  simd::StoreRowsT<kN>(static_cast<T*>(out), vals);
}
template <typename T>
void RowsT(int n, bool runtime_n, const void* in, float* cols, const float* vals, void* out) {
  if (runtime_n) {
    simd::LoadRowsN(static_cast<const T*>(in), n, cols);
    simd::StoreRowsN(static_cast<T*>(out), n, vals);
    return;
  }
  [&]<int... i>(std::integer_sequence<int, i...>) {
    ((n == i + 1 ? RowsN<i + 1, T>(in, cols, vals, out) : void()), ...);
  }(std::make_integer_sequence<int, 16>{});
}
}  // namespace

void ProbeRows(int dtype, int n, bool runtime_n, const void* in, float* cols, const float* vals, void* out) {
  if (dtype == 0) RowsT<float>(n, runtime_n, in, cols, vals, out);
  else if (dtype == 1) RowsT<Half>(n, runtime_n, in, cols, vals, out);
  else RowsT<BFloat16>(n, runtime_n, in, cols, vals, out);
}

namespace {
template <typename T>
void PartialT(int n, const void* in, float fill, float* loaded, const float* vals, void* out) {
  simd::Store(loaded, simd::LoadAsN(static_cast<const T*>(in), n, fill));
  simd::StoreAsN(static_cast<T*>(out), simd::Load(vals), n);
}
}  // namespace

void ProbePartial(int dtype, int n, const void* in, float fill, float* loaded, const float* vals, void* out) {
  if (dtype == 0) PartialT<float>(n, in, fill, loaded, vals, out);
  else if (dtype == 1) PartialT<Half>(n, in, fill, loaded, vals, out);
  else PartialT<BFloat16>(n, in, fill, loaded, vals, out);
}

void ProbeReduceRows(const float* rows, float* sums, float* maxes, float* sumEach, float* maxEach) {
  simd::Store(sums, simd::ReduceSumRows16(rows));
  simd::Store(maxes, simd::ReduceMaxRows16(rows));
  for (int r = 0; r < simd::kLanes; ++r) {
    sumEach[r] = simd::ReduceSum(simd::Load(rows + simd::kLanes * r));
    maxEach[r] = simd::ReduceMax(simd::Load(rows + simd::kLanes * r));
  }
}

}  // namespace ACLNN_ISA_NS
}  // namespace aclnn_portable
