// x86 helpers for the lane-path row transposes of simd_avx2.h and simd_avx512.h (included at
// their ends, inside namespace simd): 8 rows of kN elements <-> kN vectors of 8 lanes, in 128-bit
// pieces (kN = 3: whole vectors, LoadRows3), with exact loads and stores (no element outside the
// block is touched). The type T is only widened / narrowed: fp32 as is, fp16 with F16C (RNE),
// bf16 by shift / integer RNE as half.h (simd_x86_bf16.h).
#pragma once
#include <immintrin.h>

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "numeric/half.h"
#include "numeric/simd_x86_bf16.h"

namespace aclnn_portable {
namespace ACLNN_ISA_NS {
namespace simd {
namespace rows8 {

inline __m128 Ld2(const float* p) { return _mm_castsi128_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))); }
// u (1..4) elements at p into the low lanes of an xmm (the others 0).
template <int u>
inline __m128 Ld4(const float* p) {
  if constexpr (u == 4) return _mm_loadu_ps(p);
  // Two floats through _mm_loadl_epi64 (an unaligned 64-bit access), not _mm_load_sd, which
  // dereferences a double* and so needs 8-byte alignment that a float row does not have.
  else if constexpr (u == 3) return _mm_movelh_ps(Ld2(p), _mm_load_ss(p + 2));
  else if constexpr (u == 2) return Ld2(p);
  else return _mm_load_ss(p);
}
template <int u>
inline __m128i Ld4Bits(const uint16_t* p) {
  if constexpr (u == 4) return _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
  int32_t w = 0;
  std::memcpy(&w, p, u >= 2 ? 4 : 2);
  __m128i v = _mm_cvtsi32_si128(w);
  if constexpr (u == 3) v = _mm_insert_epi16(v, p[2], 2);
  return v;
}

template <int u>
inline void St4(float* p, __m128 v) {
  if constexpr (u == 4) _mm_storeu_ps(p, v);
  else if constexpr (u == 1) _mm_store_ss(p, v);
  else {
    _mm_storel_epi64(reinterpret_cast<__m128i*>(p), _mm_castps_si128(v));  // unaligned, unlike _mm_store_sd
    if constexpr (u == 3) _mm_store_ss(p + 2, _mm_movehl_ps(v, v));
  }
}
// The low u 16-bit words of b.
template <int u>
inline void St4Bits(uint16_t* p, __m128i b) {
  if constexpr (u == 4) {
    _mm_storel_epi64(reinterpret_cast<__m128i*>(p), b);
  } else {
    const int32_t w = _mm_cvtsi128_si32(b);
    std::memcpy(p, &w, u >= 2 ? 4 : 2);
    if constexpr (u == 3) p[2] = static_cast<uint16_t>(_mm_extract_epi16(b, 2));
  }
}
// 4x4 transposes inside each 128-bit half: a_i = [row i | row i + 4] (4 columns) <-> c_k =
// column k of rows 0..7. The network is its own inverse.
inline void Transpose4x4Halves(__m256& a0, __m256& a1, __m256& a2, __m256& a3) {
  const __m256 t0 = _mm256_unpacklo_ps(a0, a1), t1 = _mm256_unpacklo_ps(a2, a3);
  const __m256 t2 = _mm256_unpackhi_ps(a0, a1), t3 = _mm256_unpackhi_ps(a2, a3);
  a0 = _mm256_shuffle_ps(t0, t1, _MM_SHUFFLE(1, 0, 1, 0));
  a1 = _mm256_shuffle_ps(t0, t1, _MM_SHUFFLE(3, 2, 3, 2));
  a2 = _mm256_shuffle_ps(t2, t3, _MM_SHUFFLE(1, 0, 1, 0));
  a3 = _mm256_shuffle_ps(t2, t3, _MM_SHUFFLE(3, 2, 3, 2));
}

// Chunks of 4 columns: the width of chunk j of n columns, and f.template operator()<u>(c0)
// for every chunk (c0 its first column, u its width) when n is known only at run time.
constexpr int ChunkWidth(int n, int j) { return n - 4 * j < 4 ? n - 4 * j : 4; }
template <typename F>
__attribute__((always_inline)) inline void ForEachChunk(int n, F&& f) {
  int c = 0;
  for (; c + 4 <= n; c += 4) f.template operator()<4>(c);
  switch (n - c) {
    case 3: f.template operator()<3>(c); break;
    case 2: f.template operator()<2>(c); break;
    case 1: f.template operator()<1>(c); break;
    default: break;
  }
}

// a[k] = column c0 + k (k < u, u = 1..4) of 8 rows n elements apart (row r at p + r * n).
// 16-bit: rows i and i + 4 side by side in one xmm, widened as one vector.
template <int u, typename T>
__attribute__((always_inline)) inline void LoadChunk(const T* p, int64_t n, int64_t c0, __m256 (&a)[4]) {
  for (int i = 0; i < 4; ++i) {
    if constexpr (std::is_same_v<T, float>) {
      a[i] = _mm256_insertf128_ps(_mm256_castps128_ps256(Ld4<u>(p + i * n + c0)), Ld4<u>(p + (i + 4) * n + c0), 1);
    } else {
      const uint16_t* q = reinterpret_cast<const uint16_t*>(p + c0);
      const __m128i b = _mm_unpacklo_epi64(Ld4Bits<u>(q + i * n), Ld4Bits<u>(q + (i + 4) * n));
      a[i] = std::is_same_v<T, Half> ? _mm256_cvtph_ps(b) : Bf16Widen8(b);
    }
  }
  Transpose4x4Halves(a[0], a[1], a[2], a[3]);
}
// The inverse: a[k] (k < u; the others are overwritten) into columns c0 + k of the 8 rows.
// 16-bit: each vector (rows i and i + 4) rounded whole, then its two 64-bit pieces stored,
// instead of rounding every 4-element piece (bf16: ~11 operations per 4 elements, a NaN blend
// each). Measured on AVX2 Zen 3, 1 thread, bf16, 2 alternations: in-cache [2048, 10] 0.81-0.85x
// the time, [16384, 2] (St8) 0.91-0.95x, [65536, 24 / 33 / 64] 0.87-0.95x.
template <int u, typename T>
__attribute__((always_inline)) inline void StoreChunk(T* p, int64_t n, int64_t c0, __m256 (&a)[4]) {
  for (int k = u; k < 4; ++k) a[k] = _mm256_setzero_ps();
  Transpose4x4Halves(a[0], a[1], a[2], a[3]);
  if constexpr (std::is_same_v<T, float>) {
    for (int i = 0; i < 4; ++i) {
      St4<u>(p + i * n + c0, _mm256_castps256_ps128(a[i]));
      St4<u>(p + (i + 4) * n + c0, _mm256_extractf128_ps(a[i], 1));
    }
  } else {
    __m256i w[4];
    if constexpr (std::is_same_v<T, BFloat16>) Bf16Bits8xN(a, w);
    uint16_t* q = reinterpret_cast<uint16_t*>(p + c0);
    for (int i = 0; i < 4; ++i) {
      const __m128i b = std::is_same_v<T, Half>
                            ? _mm256_cvtps_ph(a[i], _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
                            : _mm_packus_epi32(_mm256_castsi256_si128(w[i]), _mm256_extracti128_si256(w[i], 1));
      St4Bits<u>(q + i * n, b);
      St4Bits<u>(q + (i + 4) * n, _mm_unpackhi_epi64(b, b));
    }
  }
}

// 8 rows of 2: even / odd elements of 16 consecutive values.
inline void Ld8(const float* p, __m256& lo, __m256& hi) { lo = _mm256_loadu_ps(p); hi = _mm256_loadu_ps(p + 8); }
inline void Ld8(const Half* p, __m256& lo, __m256& hi) {
  const __m128i* q = reinterpret_cast<const __m128i*>(p);
  lo = _mm256_cvtph_ps(_mm_loadu_si128(q));
  hi = _mm256_cvtph_ps(_mm_loadu_si128(q + 1));
}
inline void Ld8(const BFloat16* p, __m256& lo, __m256& hi) {
  const __m128i* q = reinterpret_cast<const __m128i*>(p);
  lo = Bf16Widen8(_mm_loadu_si128(q));
  hi = Bf16Widen8(_mm_loadu_si128(q + 1));
}
inline void St8(float* p, __m256 lo, __m256 hi) { _mm256_storeu_ps(p, lo); _mm256_storeu_ps(p + 8, hi); }
inline void St8(Half* p, __m256 lo, __m256 hi) {
  __m128i* q = reinterpret_cast<__m128i*>(p);
  _mm_storeu_si128(q, _mm256_cvtps_ph(lo, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  _mm_storeu_si128(q + 1, _mm256_cvtps_ph(hi, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}
inline void St8(BFloat16* p, __m256 lo, __m256 hi) {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), Bf16Pack16(lo, hi));
}

// St8 with non-temporal stores; p 32-byte aligned (fp32) / 16-byte aligned (16-bit).
inline void St8Stream(float* p, __m256 lo, __m256 hi) { _mm256_stream_ps(p, lo); _mm256_stream_ps(p + 8, hi); }
inline void St8Stream(Half* p, __m256 lo, __m256 hi) {
  __m128i* q = reinterpret_cast<__m128i*>(p);
  _mm_stream_si128(q, _mm256_cvtps_ph(lo, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  _mm_stream_si128(q + 1, _mm256_cvtps_ph(hi, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}
inline void St8Stream(BFloat16* p, __m256 lo, __m256 hi) {
  const __m256i b = Bf16Pack16(lo, hi);
  __m128i* q = reinterpret_cast<__m128i*>(p);
  _mm_stream_si128(q, _mm256_castsi256_si128(b));
  _mm_stream_si128(q + 1, _mm256_extracti128_si256(b, 1));
}
// StoreRows<2> through St8Stream.
template <typename T>
__attribute__((always_inline)) inline void StoreRows2Stream(T* p, const __m256* cols) {
  const __m256 e = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(cols[0]), 0xd8));
  const __m256 o = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(cols[1]), 0xd8));
  St8Stream(p, _mm256_unpacklo_ps(e, o), _mm256_unpackhi_ps(e, o));
}

// 8 rows of 3 (24 consecutive values, three vectors) <-> 3 columns: element (r, k) is value
// f = 3 r + k, and since 3 and 8 are coprime the 8 values of a column sit at 8 different
// positions f % 8 of their vectors: two blends gather them into one vector, one lane permute
// orders them (and the stores run it backwards: a permute per column, two blends per vector).
// 3 operations per column instead of a 3-column chunk's piecewise loads, inserts and 4x4
// transpose (~36 per 8 rows). Measured on the Xeon guest running this AVX2 tier
// (ACLNN_PORTABLE_ISA=avx2), in-cache [~262144 / 3, 3]: 1 thread 0.73-0.79x the time (fp32),
// 0.77-0.80x (bf16), 0.77x (fp16); 2 threads, [1048576, 3]: 0.87 / 0.81x (fp32 / bf16). Not
// measured on an AMD core.
constexpr int Rows3Src(int k, int p) {  // the vector holding column k's value at position p
  for (int r = 0; r < 8; ++r)
    if ((3 * r + k) % 8 == p) return (3 * r + k) / 8;
  return 0;
}
constexpr int Rows3Row(int k, int p) {  // the row of column k's value at position p
  for (int r = 0; r < 8; ++r)
    if ((3 * r + k) % 8 == p) return r;
  return 0;
}
constexpr int Rows3Blend(int k, int src) {  // positions p whose column-k value is in vector src
  int m = 0;
  for (int p = 0; p < 8; ++p) m |= Rows3Src(k, p) == src ? 1 << p : 0;
  return m;
}
constexpr int Rows3OutBlend(int j, int k) {  // positions p of row-major vector j in column k
  int m = 0;
  for (int p = 0; p < 8; ++p) m |= (8 * j + p) % 3 == k ? 1 << p : 0;
  return m;
}
template <int k>
__attribute__((always_inline)) inline __m256 Rows3Column(const __m256 (&v)[3]) {
  const __m256 t = _mm256_blend_ps(_mm256_blend_ps(v[0], v[1], Rows3Blend(k, 1)), v[2], Rows3Blend(k, 2));
  return _mm256_permutevar8x32_ps(t, _mm256_setr_epi32((k) % 8, (3 + k) % 8, (6 + k) % 8, (9 + k) % 8,
                                                       (12 + k) % 8, (15 + k) % 8, (18 + k) % 8, (21 + k) % 8));
}
template <int k>
__attribute__((always_inline)) inline __m256 Rows3Spread(__m256 col) {  // column k at positions (3 r + k) % 8
  return _mm256_permutevar8x32_ps(col, _mm256_setr_epi32(Rows3Row(k, 0), Rows3Row(k, 1), Rows3Row(k, 2), Rows3Row(k, 3),
                                                         Rows3Row(k, 4), Rows3Row(k, 5), Rows3Row(k, 6), Rows3Row(k, 7)));
}
template <int j>
__attribute__((always_inline)) inline __m256 Rows3Vector(const __m256 (&u)[3]) {
  return _mm256_blend_ps(_mm256_blend_ps(u[0], u[1], Rows3OutBlend(j, 1)), u[2], Rows3OutBlend(j, 2));
}
template <typename T>
__attribute__((always_inline)) inline void LoadRows3(const T* p, __m256* cols) {
  __m256 v[3];
  for (int j = 0; j < 3; ++j) {
    if constexpr (std::is_same_v<T, float>) {
      v[j] = _mm256_loadu_ps(p + 8 * j);
    } else {
      const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 8 * j));
      v[j] = std::is_same_v<T, Half> ? _mm256_cvtph_ps(b) : Bf16Widen8(b);
    }
  }
  cols[0] = Rows3Column<0>(v);
  cols[1] = Rows3Column<1>(v);
  cols[2] = Rows3Column<2>(v);
}
template <typename T>
__attribute__((always_inline)) inline void StoreRows3(T* p, const __m256* cols) {
  const __m256 u[3] = {Rows3Spread<0>(cols[0]), Rows3Spread<1>(cols[1]), Rows3Spread<2>(cols[2])};
  __m256 v[4] = {Rows3Vector<0>(u), Rows3Vector<1>(u), Rows3Vector<2>(u), _mm256_setzero_ps()};
  if constexpr (std::is_same_v<T, float>) {
    for (int j = 0; j < 3; ++j) _mm256_storeu_ps(p + 8 * j, v[j]);
  } else {
    __m256i w[4];
    if constexpr (std::is_same_v<T, BFloat16>) Bf16Bits8xN(v, w);
    for (int j = 0; j < 3; ++j) {
      const __m128i b = std::is_same_v<T, Half>
                            ? _mm256_cvtps_ph(v[j], _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
                            : _mm_packus_epi32(_mm256_castsi256_si128(w[j]), _mm256_extracti128_si256(w[j], 1));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(p + 8 * j), b);
    }
  }
}

// 8 rows of kN (row r at p + r * kN) -> cols[c] (lane r = element c of row r).
template <int kN, typename T>
__attribute__((always_inline)) inline void LoadRows(const T* p, __m256* cols) {
  if constexpr (kN == 2) {
    __m256 v0, v1;
    Ld8(p, v0, v1);  // rows 0-3, 4-7, interleaved
    const __m256 e = _mm256_shuffle_ps(v0, v1, _MM_SHUFFLE(2, 0, 2, 0));  // rows 0 1 4 5 | 2 3 6 7
    const __m256 o = _mm256_shuffle_ps(v0, v1, _MM_SHUFFLE(3, 1, 3, 1));
    cols[0] = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), 0xd8));
    cols[1] = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(o), 0xd8));
  } else if constexpr (kN == 3) {
    LoadRows3(p, cols);
  } else {
    [&]<int... j>(std::integer_sequence<int, j...>) __attribute__((always_inline)) {
      ([&]() __attribute__((always_inline)) {
        __m256 a[4];
        LoadChunk<ChunkWidth(kN, j)>(p, kN, 4 * j, a);
        for (int k = 0; k < ChunkWidth(kN, j); ++k) cols[4 * j + k] = a[k];
      }(), ...);
    }(std::make_integer_sequence<int, (kN + 3) / 4>{});
  }
}
template <int kN, typename T>
__attribute__((always_inline)) inline void StoreRows(T* p, const __m256* cols) {
  if constexpr (kN == 2) {
    const __m256 e = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(cols[0]), 0xd8));
    const __m256 o = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(cols[1]), 0xd8));
    St8(p, _mm256_unpacklo_ps(e, o), _mm256_unpackhi_ps(e, o));
  } else if constexpr (kN == 3) {
    StoreRows3(p, cols);
  } else {
    [&]<int... j>(std::integer_sequence<int, j...>) __attribute__((always_inline)) {
      ([&]() __attribute__((always_inline)) {
        __m256 a[4];
        for (int k = 0; k < ChunkWidth(kN, j); ++k) a[k] = cols[4 * j + k];
        StoreChunk<ChunkWidth(kN, j)>(p, kN, 4 * j, a);
      }(), ...);
    }(std::make_integer_sequence<int, (kN + 3) / 4>{});
  }
}

}  // namespace rows8
}  // namespace simd
}  // namespace ACLNN_ISA_NS
}  // namespace aclnn_portable
