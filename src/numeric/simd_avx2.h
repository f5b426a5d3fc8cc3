// AVX2 + FMA + F16C primitives for simd.h: one Vf is two ymm registers (lanes 0-7, 8-15), so the
// 16-lane semantics, and therefore the bits, are those of the AVX-512 build.
#pragma once
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "numeric/half.h"
#include "numeric/simd_x86_bf16.h"

namespace aclnn_portable {
namespace ACLNN_ISA_NS {
namespace simd {

struct Vf { __m256 lo, hi; };
struct Vi { __m256i lo, hi; };
struct Mask { __m256 lo, hi; };

inline __m256i FirstN8(int n) {  // lanes [0, n) all-ones, n clamped to [0, 8]
  n = n < 0 ? 0 : (n > 8 ? 8 : n);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

inline Vf Zero() { return {_mm256_setzero_ps(), _mm256_setzero_ps()}; }
inline Vf Set(float x) { return {_mm256_set1_ps(x), _mm256_set1_ps(x)}; }
inline Vf Load(const float* p) { return {_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8)}; }
// v with lanes >= n (n clamped to [0, 16]) set to fill: the partial loads' padding.
__attribute__((always_inline)) inline Vf FillFrom(Vf v, int n, float fill) {
  const __m256 f = _mm256_set1_ps(fill);
  return {_mm256_blendv_ps(f, v.lo, _mm256_castsi256_ps(FirstN8(n))),
          _mm256_blendv_ps(f, v.hi, _mm256_castsi256_ps(FirstN8(n - 8)))};
}
// vmaskmovps loads are cheap (not microcoded) and never fault on the lanes left out.
__attribute__((always_inline)) inline Vf LoadN(const float* p, int n, float fill) {
  return FillFrom({_mm256_maskload_ps(p, FirstN8(n)), _mm256_maskload_ps(p + 8, FirstN8(n - 8))}, n, fill);
}
inline void Store(float* p, Vf a) {
  _mm256_storeu_ps(p, a.lo);
  _mm256_storeu_ps(p + 8, a.hi);
}
// Partial stores write their n lanes with plain stores of 8, 4, 2 and 1 lanes (branches that
// a row tail of fixed length predicts), not with vmaskmovps: AMD cores microcode its store form
// (Zen 3: ~5 ns each, 7x a plain store, in a loop of them), and FullLoad paid two per row tail
// (AVX2 build, Zen 3, 1 thread: [4096, 100] fp32 0.95x the time, bf16 [4096, 200] 0.90x).
// The 8-lane helpers take any n: nothing for n <= 0, all 8 lanes for n >= 8.
__attribute__((always_inline)) inline void StoreFirst8(float* p, __m256 v, int n) {
  if (n <= 0) return;
  if (n >= 8) return _mm256_storeu_ps(p, v);
  __m128 q = _mm256_castps256_ps128(v);
  if (n & 4) _mm_storeu_ps(p, q), p += 4, q = _mm256_extractf128_ps(v, 1);
  if (n & 2) _mm_storel_pi(reinterpret_cast<__m64*>(p), q), p += 2, q = _mm_movehl_ps(q, q);
  if (n & 1) {  // memcpy: outputs may sit at any byte address, and _mm_store_ss is a float store
    const float f = _mm_cvtss_f32(q);
    std::memcpy(p, &f, sizeof f);
  }
}
__attribute__((always_inline)) inline void StoreN(float* p, Vf a, int n) {
  StoreFirst8(p, a.lo, n);
  StoreFirst8(p + 8, a.hi, n - 8);
}
// 16-bit partial loads and stores the same way, not through a stack buffer and memcpy: the
// vector load after the copy (or the copy's loads after the vector store) waited, as store
// forwarding fails when a load spans several stores. Loads read exactly the n values (lanes >= n
// are 0).
__attribute__((always_inline)) inline __m128i LoadFirst8U16(const uint16_t* p, int n) {
  if (n <= 0) return _mm_setzero_si128();
  if (n >= 8) return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  __m128i t = _mm_setzero_si128();  // built from the end: [p0..p3 if n & 4 | 2 if n & 2 | 1 if n & 1]
  if (n & 1) {  // memcpy here and below: 16-bit data may sit at any byte address
    uint16_t h;
    std::memcpy(&h, p + n - 1, sizeof h);
    t = _mm_cvtsi32_si128(h);
  }
  if (n & 2) {
    int32_t w;
    std::memcpy(&w, p + (n & 4), sizeof w);
    t = _mm_or_si128(_mm_slli_si128(t, 4), _mm_cvtsi32_si128(w));
  }
  if (n & 4) t = _mm_or_si128(_mm_slli_si128(t, 8), _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
  return t;
}
__attribute__((always_inline)) inline void StoreFirst8U16(uint16_t* p, __m128i v, int n) {
  if (n <= 0) return;
  if (n >= 8) return _mm_storeu_si128(reinterpret_cast<__m128i*>(p), v);
  if (n & 4) _mm_storel_epi64(reinterpret_cast<__m128i*>(p), v), p += 4, v = _mm_srli_si128(v, 8);
  if (n & 2) {
    const int32_t w = _mm_cvtsi128_si32(v);
    std::memcpy(p, &w, sizeof w);
    p += 2, v = _mm_srli_si128(v, 4);
  }
  if (n & 1) {
    const uint16_t h = static_cast<uint16_t>(_mm_cvtsi128_si32(v));
    std::memcpy(p, &h, sizeof h);
  }
}
inline void StoreStream(float* p, Vf a) {
  _mm256_stream_ps(p, a.lo);
  _mm256_stream_ps(p + 8, a.hi);
}

inline Vf LoadHalfBits(const uint16_t* p) {
  return {_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))),
          _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 8)))};
}
__attribute__((always_inline)) inline Vf LoadHalfBitsN(const uint16_t* p, int n, float fill) {
  return FillFrom({_mm256_cvtph_ps(LoadFirst8U16(p, n)), _mm256_cvtph_ps(LoadFirst8U16(p + 8, n - 8))}, n, fill);
}
inline void StoreHalfBits(uint16_t* p, Vf a) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_cvtps_ph(a.lo, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p + 8), _mm256_cvtps_ph(a.hi, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}
__attribute__((always_inline)) inline void StoreHalfBitsN(uint16_t* p, Vf a, int n) {
  StoreFirst8U16(p, _mm256_cvtps_ph(a.lo, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), n);
  StoreFirst8U16(p + 8, _mm256_cvtps_ph(a.hi, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), n - 8);
}
inline void StoreHalfBitsStream(uint16_t* p, Vf a) {
  const __m128i lo = _mm256_cvtps_ph(a.lo, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m128i hi = _mm256_cvtps_ph(a.hi, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  _mm256_stream_si256(reinterpret_cast<__m256i*>(p), _mm256_set_m128i(hi, lo));
}

inline Vf LoadBf16Bits(const uint16_t* p) {
  return {Bf16Widen8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))),
          Bf16Widen8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 8)))};
}
__attribute__((always_inline)) inline Vf LoadBf16BitsN(const uint16_t* p, int n, float fill) {
  return FillFrom({Bf16Widen8(LoadFirst8U16(p, n)), Bf16Widen8(LoadFirst8U16(p + 8, n - 8))}, n, fill);
}
// 16 bf16 in lane order (simd_x86_bf16.h).
__attribute__((always_inline)) inline __m256i Bf16FromVf(Vf a) { return Bf16Pack16(a.lo, a.hi); }
inline void StoreBf16Bits(uint16_t* p, Vf a) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), Bf16FromVf(a)); }
inline void StoreBf16BitsPair(uint16_t* p, Vf a, Vf b) { StoreBf16Bits(p, a), StoreBf16Bits(p + 16, b); }
__attribute__((always_inline)) inline void StoreBf16BitsN(uint16_t* p, Vf a, int n) {
  const __m256i b = Bf16FromVf(a);
  StoreFirst8U16(p, _mm256_castsi256_si128(b), n);
  StoreFirst8U16(p + 8, _mm256_extracti128_si256(b, 1), n - 8);
}
inline void StoreBf16BitsStream(uint16_t* p, Vf a) { _mm256_stream_si256(reinterpret_cast<__m256i*>(p), Bf16FromVf(a)); }

#define ACLNN_AVX2_BINARY(name, intrin) \
  inline Vf name(Vf a, Vf b) { return {intrin(a.lo, b.lo), intrin(a.hi, b.hi)}; }
ACLNN_AVX2_BINARY(Add, _mm256_add_ps)
ACLNN_AVX2_BINARY(Sub, _mm256_sub_ps)
ACLNN_AVX2_BINARY(Mul, _mm256_mul_ps)
ACLNN_AVX2_BINARY(Div, _mm256_div_ps)
ACLNN_AVX2_BINARY(Max, _mm256_max_ps)
ACLNN_AVX2_BINARY(Min, _mm256_min_ps)
#undef ACLNN_AVX2_BINARY
inline Vf MulAdd(Vf a, Vf b, Vf c) { return {_mm256_fmadd_ps(a.lo, b.lo, c.lo), _mm256_fmadd_ps(a.hi, b.hi, c.hi)}; }
inline Vf MulSub(Vf a, Vf b, Vf c) { return {_mm256_fmsub_ps(a.lo, b.lo, c.lo), _mm256_fmsub_ps(a.hi, b.hi, c.hi)}; }
inline Vf Round(Vf a) {
  return {_mm256_round_ps(a.lo, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC),
          _mm256_round_ps(a.hi, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)};
}
inline Mask IsNaN(Vf a) { return {_mm256_cmp_ps(a.lo, a.lo, _CMP_UNORD_Q), _mm256_cmp_ps(a.hi, a.hi, _CMP_UNORD_Q)}; }
inline Mask Lt(Vf a, Vf b) { return {_mm256_cmp_ps(a.lo, b.lo, _CMP_LT_OQ), _mm256_cmp_ps(a.hi, b.hi, _CMP_LT_OQ)}; }
inline bool Any(Mask m) { return _mm256_movemask_ps(_mm256_or_ps(m.lo, m.hi)) != 0; }
inline Vf Select(Mask m, Vf yes, Vf no) {
  return {_mm256_blendv_ps(no.lo, yes.lo, m.lo), _mm256_blendv_ps(no.hi, yes.hi, m.hi)};
}

inline Vi ToInt(Vf a) { return {_mm256_cvtps_epi32(a.lo), _mm256_cvtps_epi32(a.hi)}; }
inline Vi HalveFloor(Vi a) { return {_mm256_srai_epi32(a.lo, 1), _mm256_srai_epi32(a.hi, 1)}; }
inline Vi SubI(Vi a, Vi b) { return {_mm256_sub_epi32(a.lo, b.lo), _mm256_sub_epi32(a.hi, b.hi)}; }
inline Vf Pow2(Vi k) {
  const __m256i bias = _mm256_set1_epi32(127);
  return {_mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(k.lo, bias), 23)),
          _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(k.hi, bias), 23))};
}

// p * 2^k by adding k to the exponent field: exact while p and the result are normal.
inline Vf ScaleNormal(Vf p, Vi k) {
  return {_mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(p.lo), _mm256_slli_epi32(k.lo, 23))),
          _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(p.hi), _mm256_slli_epi32(k.hi, 23)))};
}

inline float ReduceSum(Vf a) {
  const __m256 s8 = _mm256_add_ps(a.lo, a.hi);
  const __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(s8), _mm256_extractf128_ps(s8, 1));
  const __m128 s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
  return _mm_cvtss_f32(_mm_add_ss(s2, _mm_shuffle_ps(s2, s2, 1)));
}
inline float ReduceMax(Vf a) {
  const __m256 s8 = _mm256_max_ps(a.lo, a.hi);
  const __m128 s4 = _mm_max_ps(_mm256_castps256_ps128(s8), _mm256_extractf128_ps(s8, 1));
  const __m128 s2 = _mm_max_ps(s4, _mm_movehl_ps(s4, s4));
  return _mm_cvtss_f32(_mm_max_ss(s2, _mm_shuffle_ps(s2, s2, 1)));
}

// 16 reductions side by side: lane r of the result is ReduceSum / ReduceMax of the 16 floats at
// rows + 16 r, with the same bits (the same tree, every operation on the same operands in the
// same order). Each stage pairs lanes i and i + half of every row: 30 shuffles and 30
// operations for the 16 rows instead of 16 x (3 shuffles + 4 operations).
template <typename Op>
__attribute__((always_inline)) inline Vf ReduceRows16(const float* rows, Op op) {
  __m256 u[8];  // u[q]: rows 2q, 2q+1 (128-bit halves), lanes i + i+8, then i + i+4, of each
  for (int q = 0; q < 8; ++q) {
    const __m256 a = op(_mm256_loadu_ps(rows + 32 * q), _mm256_loadu_ps(rows + 32 * q + 8));
    const __m256 b = op(_mm256_loadu_ps(rows + 32 * q + 16), _mm256_loadu_ps(rows + 32 * q + 24));
    u[q] = op(_mm256_permute2f128_ps(a, b, 0x20), _mm256_permute2f128_ps(a, b, 0x31));
  }
  // x[t]: rows 4t, 4t+2 (half 0) and 4t+1, 4t+3 (half 1), 2 lanes each: lanes i + i+2
  __m256 x[4];
  for (int t = 0; t < 4; ++t)
    x[t] = op(_mm256_shuffle_ps(u[2 * t], u[2 * t + 1], _MM_SHUFFLE(1, 0, 1, 0)),
              _mm256_shuffle_ps(u[2 * t], u[2 * t + 1], _MM_SHUFFLE(3, 2, 3, 2)));
  // y: rows 8v + {0, 2, 4, 6 | 1, 3, 5, 7}, lanes i + i+1; then put in row order
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  __m256 y[2];
  for (int v = 0; v < 2; ++v)
    y[v] = _mm256_permutevar8x32_ps(op(_mm256_shuffle_ps(x[2 * v], x[2 * v + 1], _MM_SHUFFLE(2, 0, 2, 0)),
                                       _mm256_shuffle_ps(x[2 * v], x[2 * v + 1], _MM_SHUFFLE(3, 1, 3, 1))),
                                    order);
  return {y[0], y[1]};
}
__attribute__((always_inline)) inline Vf ReduceSumRows16(const float* rows) {
  return ReduceRows16(rows, [](__m256 a, __m256 b) __attribute__((always_inline)) { return _mm256_add_ps(a, b); });
}
__attribute__((always_inline)) inline Vf ReduceMaxRows16(const float* rows) {
  return ReduceRows16(rows, [](__m256 a, __m256 b) __attribute__((always_inline)) { return _mm256_max_ps(a, b); });
}

inline void StreamFence() { _mm_sfence(); }

// `lines` * 64 bytes from src to dst (32-byte aligned; LineStream passes whole 64-byte lines),
// non-temporal.
__attribute__((always_inline)) inline void StreamLines(void* dst, const void* src, size_t lines) {
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
  for (size_t i = 0; i < lines; ++i, d += 64, s += 64) {
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s)));
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d + 32), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + 32)));
  }
}
// Copies `bytes` from src to dst with non-temporal stores for every whole 32-byte block of dst
// (plain copies for the partial blocks at either end). Call StreamFence() before handing on.
inline void StreamCopy(void* dst, const void* src, size_t bytes) {
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
  size_t head = (32 - reinterpret_cast<uintptr_t>(d) % 32) % 32;
  if (head > bytes) head = bytes;
  std::memcpy(d, s, head);
  d += head, s += head, bytes -= head;
  StreamLines(d, s, bytes / 64);
  d += bytes / 64 * 64, s += bytes / 64 * 64, bytes %= 64;
  if (bytes >= 32) {
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s)));
    d += 32, s += 32, bytes -= 32;
  }
  std::memcpy(d, s, bytes);
}

// ---- mhc primitives ----
// The bits of StoreBf16Bits (Bf16FromVf has the NaN-free fast path).
__attribute__((always_inline)) inline __m256i MhcBf16FromVf(Vf a) { return Bf16FromVf(a); }
__attribute__((always_inline)) inline void MhcStoreBf16Bits(uint16_t* p, Vf a) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), MhcBf16FromVf(a)); }
__attribute__((always_inline)) inline void MhcStoreBf16BitsStream(uint16_t* p, Vf a) { _mm256_stream_si256(reinterpret_cast<__m256i*>(p), MhcBf16FromVf(a)); }
// Deinterleaved bf16 layout: .lo holds elements 0, 2, .., 14 and .hi elements 1, 3, .., 15, so a
// load is one 32-byte load and two bit operations, and a store needs no lane shuffle. Only for
// element-wise work whose loads and stores of a position all use it; MhcFromDeint gives the
// lanes back in natural order (lane j = element j) before a reduction across lanes.
__attribute__((always_inline)) inline Vf MhcLoadBf16Deint(const uint16_t* p) {
  const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  return {_mm256_castsi256_ps(_mm256_slli_epi32(v, 16)),
          _mm256_castsi256_ps(_mm256_and_si256(v, _mm256_set1_epi32(static_cast<int>(0xffff0000u))))};
}
// RNE bf16 of a vector in the deinterleaved layout, in 16-bit words, exact for every lane but a
// NaN whose low 16 bits are not zero or whose quiet bit is clear: the output
// word of element j is its high half h plus the carry of RNE, (l + 0x7fff + (h & 1)) >> 16 for
// its low half l, which is avg(l, 0x7ffe + (h & 1)) >> 15 (vpavgw sums in 17 bits). h + carry
// fits (h <= 0xff80 for a non-NaN; +-inf stays inf); a quiet NaN with a zero low half keeps its
// high half, as the quieting path does. Nine operations for 16 values instead of eleven in
// 32-bit lanes, the same bits (all 2^32 floats compared once; Simd.Bf16RoundingOfEveryUpperHalf
// keeps the deciding cases).
__attribute__((always_inline)) inline __m256i MhcBf16DeintFast(Vf a) {
  const __m256i x0 = _mm256_castps_si256(a.lo), x1 = _mm256_castps_si256(a.hi);
  const __m256i h = _mm256_blend_epi16(_mm256_srli_epi32(x0, 16), x1, 0xaa);  // [h1 | h0]
  const __m256i l = _mm256_blend_epi16(x0, _mm256_slli_epi32(x1, 16), 0xaa);  // [l1 | l0]
  const __m256i b = _mm256_or_si256(_mm256_and_si256(h, _mm256_set1_epi16(1)), _mm256_set1_epi16(0x7ffe));
  return _mm256_add_epi16(h, _mm256_srli_epi16(_mm256_avg_epu16(l, b), 15));
}
// The bits of StoreBf16Bits for a vector in the deinterleaved layout.
__attribute__((always_inline)) inline void MhcStoreBf16Deint(uint16_t* p, Vf a) {
  const __m256 nan = _mm256_cmp_ps(a.lo, a.hi, _CMP_UNORD_Q);
  __m256i r;
  if (__builtin_expect(!_mm256_testz_ps(nan, nan), 0)) {
    const __m256 v[2] = {a.lo, a.hi};
    __m256i w[2];
    Bf16Bits8xN(v, w);
    r = _mm256_or_si256(w[0], _mm256_slli_epi32(w[1], 16));
  } else {
    r = MhcBf16DeintFast(a);
  }
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), r);
}
// MhcStoreBf16Deint without the NaN test, for a vector whose NaN lanes (if any) are quiet with
// a zero low half: a product of bf16 values and non-NaN weights (x86 keeps a NaN operand's
// payload, quieted, and inf * 0 gives the default NaN 0xffc00000). Other NaNs: outside the
// contract.
__attribute__((always_inline)) inline void MhcStoreBf16DeintNarrowNaN(uint16_t* p, Vf a) {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), MhcBf16DeintFast(a));
}
constexpr bool kMhcNarrowNaNStoreIsCheaper = true;  // than MhcStoreBf16Deint: no compare and branch
__attribute__((always_inline)) inline Vf MhcFromDeint(Vf a) {
  const __m256 lo = _mm256_unpacklo_ps(a.lo, a.hi), hi = _mm256_unpackhi_ps(a.lo, a.hi);  // 0-3 8-11 | 4-7 12-15
  return {_mm256_permute2f128_ps(lo, hi, 0x20), _mm256_permute2f128_ps(lo, hi, 0x31)};
}
// Two vectors at once: a to p, b to p + 16 (one instruction for both on AVX512_BF16).
__attribute__((always_inline)) inline void MhcStoreBf16Pair(uint16_t* p, Vf a, Vf b) {
  MhcStoreBf16Bits(p, a);
  MhcStoreBf16Bits(p + 16, b);
}
__attribute__((always_inline)) inline void MhcStoreBf16DeintPair(uint16_t* p, Vf a, Vf b) {
  MhcStoreBf16Deint(p, a);
  MhcStoreBf16Deint(p + 16, b);
}

}  // namespace simd
}  // namespace ACLNN_ISA_NS
}  // namespace aclnn_portable

// ---- lane-path primitives ----
// Bit views, integer ops and compares (for simd_log.h) and 16-row block transposes (for the
// SoftmaxCrossEntropyWithLogits lane path). Exact everywhere: the same bits on every ISA.
#include "numeric/simd_x86_rows.h"

namespace aclnn_portable {
namespace ACLNN_ISA_NS {
namespace simd {

inline Vi AsBits(Vf a) { return {_mm256_castps_si256(a.lo), _mm256_castps_si256(a.hi)}; }
inline Vf FromBits(Vi a) { return {_mm256_castsi256_ps(a.lo), _mm256_castsi256_ps(a.hi)}; }
inline Vi SetI(int32_t x) { return {_mm256_set1_epi32(x), _mm256_set1_epi32(x)}; }
inline Vi AndI(Vi a, Vi b) { return {_mm256_and_si256(a.lo, b.lo), _mm256_and_si256(a.hi, b.hi)}; }
inline Vi OrI(Vi a, Vi b) { return {_mm256_or_si256(a.lo, b.lo), _mm256_or_si256(a.hi, b.hi)}; }
inline Vi AddI(Vi a, Vi b) { return {_mm256_add_epi32(a.lo, b.lo), _mm256_add_epi32(a.hi, b.hi)}; }
// Logical shift right by n in [0, 31].
inline Vi SrlI(Vi a, int n) { return {_mm256_srli_epi32(a.lo, n), _mm256_srli_epi32(a.hi, n)}; }
// int32 -> fp32, round to nearest even (exact for |a| <= 2^24).
inline Vf ToFloatI(Vi a) { return {_mm256_cvtepi32_ps(a.lo), _mm256_cvtepi32_ps(a.hi)}; }
// Ordered compares: false when either input is NaN.
inline Mask Less(Vf a, Vf b) { return {_mm256_cmp_ps(a.lo, b.lo, _CMP_LT_OQ), _mm256_cmp_ps(a.hi, b.hi, _CMP_LT_OQ)}; }
inline Mask Equal(Vf a, Vf b) { return {_mm256_cmp_ps(a.lo, b.lo, _CMP_EQ_OQ), _mm256_cmp_ps(a.hi, b.hi, _CMP_EQ_OQ)}; }

// A dense block of 16 rows of kN (1..16) elements of T (row r at p + r * kN) <-> kN vectors of
// 16 floats at cols (class-major): cols[16 * c + r] = element c of row r. Reads / writes exactly the block's 16 * kN elements;
// T is widened exactly / rounded to nearest even as LoadAs / StoreAs.
template <int kN, typename T>
__attribute__((always_inline)) inline void LoadRowsT(const T* p, float* cols) {
  __m256 lo[kN], hi[kN];
  rows8::LoadRows<kN>(p, lo);
  rows8::LoadRows<kN>(p + 8 * kN, hi);
  for (int c = 0; c < kN; ++c) {
    _mm256_storeu_ps(cols + 16 * c, lo[c]);
    _mm256_storeu_ps(cols + 16 * c + 8, hi[c]);
  }
}
// StoreRowsT<2> with non-temporal stores: p 64-byte aligned.
template <typename T>
__attribute__((always_inline)) inline void StoreRows2Stream(T* p, const float* cols) {
  const __m256 lo[2] = {_mm256_loadu_ps(cols), _mm256_loadu_ps(cols + 16)};
  const __m256 hi[2] = {_mm256_loadu_ps(cols + 8), _mm256_loadu_ps(cols + 24)};
  rows8::StoreRows2Stream(p, lo);
  rows8::StoreRows2Stream(p + 16, hi);
}
template <int kN, typename T>
__attribute__((always_inline)) inline void StoreRowsT(T* p, const float* cols) {
  __m256 lo[kN], hi[kN];
  for (int c = 0; c < kN; ++c) {
    lo[c] = _mm256_loadu_ps(cols + 16 * c);
    hi[c] = _mm256_loadu_ps(cols + 16 * c + 8);
  }
  rows8::StoreRows<kN>(p, lo);
  rows8::StoreRows<kN>(p + 8 * kN, hi);
}
// LoadRowsT / StoreRowsT for a class count n >= 1 known only at run time: the same 4-column
// chunks and bits, row offsets computed.
template <typename T>
__attribute__((always_inline)) inline void LoadRowsN(const T* p, int n, float* cols) {
  rows8::ForEachChunk(n, [&]<int u>(int c0) __attribute__((always_inline)) {
    for (int half = 0; half < 2; ++half) {  // rows 0-7, then 8-15
      __m256 a[4];
      rows8::LoadChunk<u>(p + 8 * half * n, n, c0, a);
      for (int k = 0; k < u; ++k) _mm256_storeu_ps(cols + 16 * (c0 + k) + 8 * half, a[k]);
    }
  });
}
template <typename T>
__attribute__((always_inline)) inline void StoreRowsN(T* p, int n, const float* cols) {
  rows8::ForEachChunk(n, [&]<int u>(int c0) __attribute__((always_inline)) {
    for (int half = 0; half < 2; ++half) {
      __m256 a[4];
      for (int k = 0; k < u; ++k) a[k] = _mm256_loadu_ps(cols + 16 * (c0 + k) + 8 * half);
      rows8::StoreChunk<u>(p + 8 * half * n, n, c0, a);
    }
  });
}

}  // namespace simd
}  // namespace ACLNN_ISA_NS
}  // namespace aclnn_portable
