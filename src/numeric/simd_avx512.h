// AVX-512 (F, BW, DQ, VL) primitives for simd.h: one Vf is one zmm register.
#pragma once
#include <immintrin.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "numeric/half.h"

namespace aclnn_portable {
namespace ACLNN_ISA_NS {
namespace simd {

struct Vf { __m512 v; };
struct Vi { __m512i v; };
struct Mask { __mmask16 m; };

inline __mmask16 FirstN(int n) { return static_cast<__mmask16>(n >= 16 ? 0xffffu : ((1u << n) - 1u)); }

inline Vf Zero() { return {_mm512_setzero_ps()}; }
inline Vf Set(float x) { return {_mm512_set1_ps(x)}; }
inline Vf Load(const float* p) { return {_mm512_loadu_ps(p)}; }
inline Vf LoadN(const float* p, int n, float fill) {
  return {_mm512_mask_loadu_ps(_mm512_set1_ps(fill), FirstN(n), p)};
}
// v with lanes >= n (n in [0, 16]) set to fill.
inline Vf FillFrom(Vf v, int n, float fill) { return {_mm512_mask_blend_ps(FirstN(n), _mm512_set1_ps(fill), v.v)}; }
inline void Store(float* p, Vf a) { _mm512_storeu_ps(p, a.v); }
inline void StoreN(float* p, Vf a, int n) { _mm512_mask_storeu_ps(p, FirstN(n), a.v); }
// Non-temporal store; p must be 64-byte aligned.
inline void StoreStream(float* p, Vf a) { _mm512_stream_ps(p, a.v); }

inline Vf LoadHalfBits(const uint16_t* p) {
  return {_mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)))};
}
inline Vf LoadHalfBitsN(const uint16_t* p, int n, float fill) {
  const __m512 v = _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(FirstN(n), p));
  return {_mm512_mask_blend_ps(FirstN(n), _mm512_set1_ps(fill), v)};
}
inline __m256i HalfFromVf(Vf a) { return _mm512_cvtps_ph(a.v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
inline void StoreHalfBits(uint16_t* p, Vf a) {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), HalfFromVf(a));
}
inline void StoreHalfBitsN(uint16_t* p, Vf a, int n) { _mm256_mask_storeu_epi16(p, FirstN(n), HalfFromVf(a)); }
inline void StoreHalfBitsStream(uint16_t* p, Vf a) {
  _mm256_stream_si256(reinterpret_cast<__m256i*>(p), HalfFromVf(a));
}

inline Vf Bf16Widen(__m256i b) { return {_mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(b), 16))}; }
inline Vf LoadBf16Bits(const uint16_t* p) {
  return Bf16Widen(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}
inline Vf LoadBf16BitsN(const uint16_t* p, int n, float fill) {
  const __m512 v = Bf16Widen(_mm256_maskz_loadu_epi16(FirstN(n), p)).v;
  return {_mm512_mask_blend_ps(FirstN(n), _mm512_set1_ps(fill), v)};
}
// Round to nearest even in integer arithmetic, NaN quieted: exactly FloatToBf16 of half.h.
inline __m256i Bf16FromVfInt(Vf a) {
  const __m512i x = _mm512_castps_si512(a.v);
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(x, 16), _mm512_set1_epi32(1));
  __m512i r = _mm512_srli_epi32(_mm512_add_epi32(x, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff))), 16);
  const __mmask16 nan = _mm512_cmp_ps_mask(a.v, a.v, _CMP_UNORD_Q);
  r = _mm512_mask_mov_epi32(r, nan, _mm512_or_si512(_mm512_srli_epi32(x, 16), _mm512_set1_epi32(0x40)));
  return _mm512_cvtepi32_epi16(r);
}
#if defined(ACLNN_ISA_AVX512BF16)
// The same bits in one instruction where the CPU has AVX512_BF16: vcvtneps2bf16 rounds to
// nearest even and quiets a NaN exactly as FloatToBf16 does (upper half-word | 0x0040), but reads
// subnormal inputs as zero, so a vector holding one (vfpclassps class 0x20) takes the integer
// path. ~10 vector operations per 16 values become 2 plus a predicted branch; Bf16PairFromVf
// rounds 32 values in one vcvtne2ps2bf16 (in-cache bf16 mhc_post: 0.39-0.61x the time).
__attribute__((always_inline)) inline __m256i Bf16FromVf(Vf a) {
  if (__builtin_expect(_mm512_fpclass_ps_mask(a.v, 0x20) != 0, 0)) return Bf16FromVfInt(a);
  return reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(a.v));
}
#else
__attribute__((always_inline)) inline __m256i Bf16FromVf(Vf a) { return Bf16FromVfInt(a); }
#endif
__attribute__((always_inline)) inline void StoreBf16Bits(uint16_t* p, Vf a) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), Bf16FromVf(a)); }
#if defined(ACLNN_ISA_AVX512BF16)
// Bf16FromVf of a (lower half) and b (upper half), one vcvtne2ps2bf16 for both.
__attribute__((always_inline)) inline __m512i Bf16PairFromVf(Vf a, Vf b) {
  if (__builtin_expect((_mm512_fpclass_ps_mask(a.v, 0x20) | _mm512_fpclass_ps_mask(b.v, 0x20)) == 0, 1))
    return reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(b.v, a.v));  // b: upper half
  return _mm512_inserti64x4(_mm512_castsi256_si512(Bf16FromVfInt(a)), Bf16FromVfInt(b), 1);
}
#endif
// The bf16 stores are always inlined: GCC had left Bf16PairFromVf / StoreBf16BitsPair out of line
// in the mhc kernels, a call per 32 outputs that also spills every live zmm register.
// StoreBf16Bits of a to p and of b to p + 16 (one 64-byte store with AVX512_BF16; without it
// two 32-byte stores, which measured ~3 % faster than joining the halves for one).
__attribute__((always_inline)) inline void StoreBf16BitsPair(uint16_t* p, Vf a, Vf b) {
#if defined(ACLNN_ISA_AVX512BF16)
  _mm512_storeu_si512(p, Bf16PairFromVf(a, b));
#else
  StoreBf16Bits(p, a);
  StoreBf16Bits(p + 16, b);
#endif
}
// The same with non-temporal stores; p 64-byte aligned.
__attribute__((always_inline)) inline void StoreBf16BitsStreamPair(uint16_t* p, Vf a, Vf b) {
#if defined(ACLNN_ISA_AVX512BF16)
  _mm512_stream_si512(reinterpret_cast<__m512i*>(p), Bf16PairFromVf(a, b));
#else
  _mm256_stream_si256(reinterpret_cast<__m256i*>(p), Bf16FromVfInt(a));
  _mm256_stream_si256(reinterpret_cast<__m256i*>(p + 16), Bf16FromVfInt(b));
#endif
}
inline void StoreBf16BitsN(uint16_t* p, Vf a, int n) { _mm256_mask_storeu_epi16(p, FirstN(n), Bf16FromVf(a)); }
__attribute__((always_inline)) inline void StoreBf16BitsStream(uint16_t* p, Vf a) {
  _mm256_stream_si256(reinterpret_cast<__m256i*>(p), Bf16FromVf(a));
}

inline Vf Add(Vf a, Vf b) { return {_mm512_add_ps(a.v, b.v)}; }
inline Vf Sub(Vf a, Vf b) { return {_mm512_sub_ps(a.v, b.v)}; }
inline Vf Mul(Vf a, Vf b) { return {_mm512_mul_ps(a.v, b.v)}; }
inline Vf Div(Vf a, Vf b) { return {_mm512_div_ps(a.v, b.v)}; }
inline Vf MulAdd(Vf a, Vf b, Vf c) { return {_mm512_fmadd_ps(a.v, b.v, c.v)}; }
inline Vf MulSub(Vf a, Vf b, Vf c) { return {_mm512_fmsub_ps(a.v, b.v, c.v)}; }
// x86 semantics on every ISA: when either input is NaN the result is b.
inline Vf Max(Vf a, Vf b) { return {_mm512_max_ps(a.v, b.v)}; }
inline Vf Min(Vf a, Vf b) { return {_mm512_min_ps(a.v, b.v)}; }
inline Vf Round(Vf a) { return {_mm512_roundscale_ps(a.v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)}; }
inline Mask IsNaN(Vf a) { return {_mm512_cmp_ps_mask(a.v, a.v, _CMP_UNORD_Q)}; }
inline Mask Lt(Vf a, Vf b) { return {_mm512_cmp_ps_mask(a.v, b.v, _CMP_LT_OQ)}; }
inline bool Any(Mask m) { return m.m != 0; }
inline Vf Select(Mask m, Vf yes, Vf no) { return {_mm512_mask_blend_ps(m.m, no.v, yes.v)}; }

// a is integral and in int32 range.
inline Vi ToInt(Vf a) { return {_mm512_cvtps_epi32(a.v)}; }
inline Vi HalveFloor(Vi a) { return {_mm512_srai_epi32(a.v, 1)}; }
inline Vi SubI(Vi a, Vi b) { return {_mm512_sub_epi32(a.v, b.v)}; }
// 2^k for k in [-126, 127].
inline Vf Pow2(Vi k) {
  return {_mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(k.v, _mm512_set1_epi32(127)), 23))};
}

// p * 2^k by adding k to the exponent field: exact while p and the result are normal.
inline Vf ScaleNormal(Vf p, Vi k) {
  return {_mm512_castsi512_ps(_mm512_add_epi32(_mm512_castps_si512(p.v), _mm512_slli_epi32(k.v, 23)))};
}

// p * 2^n (n integral) for a normal result: exact, one instruction (vscalefps; a NaN p is
// returned as is). simd.h's ScaleByPow2 does not give it results below 2^-126, for which Intel
// cores take a microcode assist.
inline Vf ScaleByPow2Normal(Vf p, Vf n) { return {_mm512_scalef_ps(p.v, n.v)}; }

// k += round(e) and t += e - round(e) (exact), for e in [0, 1] or NaN (simd.h's generic form,
// the same bits): round(e) is 1 where e > 0.5 (0.5 rounds to even, 0), where e - 1 is exact.
// vrndscaleps is two uops on Intel cores; a compare and two masked operations replace it and
// the subtraction of round(e). A NaN e leaves k as is (t becomes NaN either way).
__attribute__((always_inline)) inline void SplitAdd(Vf* k, Vf* t, Vf e) {
  const __m512 one = _mm512_set1_ps(1.0f);
  const __mmask16 big = _mm512_cmp_ps_mask(e.v, _mm512_set1_ps(0.5f), _CMP_GT_OQ);
  k->v = _mm512_mask_add_ps(k->v, big, k->v, one);
  t->v = _mm512_add_ps(t->v, _mm512_mask_sub_ps(e.v, big, e.v, one));
}

// Fixed pairwise tree: lanes i and i+8, then i and i+4, i and i+2, i and i+1.
inline float ReduceSum(Vf a) {
  const __m256 s8 = _mm256_add_ps(_mm512_castps512_ps256(a.v), _mm512_extractf32x8_ps(a.v, 1));
  const __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(s8), _mm256_extractf128_ps(s8, 1));
  const __m128 s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
  return _mm_cvtss_f32(_mm_add_ss(s2, _mm_shuffle_ps(s2, s2, 1)));
}
inline float ReduceMax(Vf a) {
  const __m256 s8 = _mm256_max_ps(_mm512_castps512_ps256(a.v), _mm512_extractf32x8_ps(a.v, 1));
  const __m128 s4 = _mm_max_ps(_mm256_castps256_ps128(s8), _mm256_extractf128_ps(s8, 1));
  const __m128 s2 = _mm_max_ps(s4, _mm_movehl_ps(s4, s4));
  return _mm_cvtss_f32(_mm_max_ss(s2, _mm_shuffle_ps(s2, s2, 1)));
}

// 16 reductions side by side: lane r of the result is ReduceSum / ReduceMax of the 16 floats at
// rows + 16 r, with the same bits (the same tree, every operation on the same operands in the
// same order: Max's choice on NaNs and signed zeros included). Each stage pairs lanes i and i +
// half of every row with two-source shuffles: 30 shuffles and 15 operations for the 16 rows
// instead of 16 x (4 shuffles + 4 operations), and no chain of 4 dependent steps per row.
template <typename Op>
__attribute__((always_inline)) inline Vf ReduceRows16(const float* rows, Op op) {
  __m512 w[8];  // w[p]: rows 2p, 2p+1 (lanes 0-7, 8-15), lanes i + i+8 of each
  for (int p = 0; p < 8; ++p) {
    const __m512 a = _mm512_loadu_ps(rows + 32 * p), b = _mm512_loadu_ps(rows + 32 * p + 16);
    w[p] = op(_mm512_shuffle_f32x4(a, b, _MM_SHUFFLE(1, 0, 1, 0)), _mm512_shuffle_f32x4(a, b, _MM_SHUFFLE(3, 2, 3, 2)));
  }
  __m512 u[4];  // u[q]: rows 4q .. 4q+3 in the 128-bit quarters, lanes i + i+4 of each
  for (int q = 0; q < 4; ++q)
    u[q] = op(_mm512_shuffle_f32x4(w[2 * q], w[2 * q + 1], _MM_SHUFFLE(2, 0, 2, 0)),
              _mm512_shuffle_f32x4(w[2 * q], w[2 * q + 1], _MM_SHUFFLE(3, 1, 3, 1)));
  // x[s]: rows 8s .. 8s+7 at lanes 2j, 2j+1, lanes i + i+2 of each
  const __m512i lo2 = _mm512_setr_epi32(0, 1, 4, 5, 8, 9, 12, 13, 16, 17, 20, 21, 24, 25, 28, 29);
  const __m512i hi2 = _mm512_setr_epi32(2, 3, 6, 7, 10, 11, 14, 15, 18, 19, 22, 23, 26, 27, 30, 31);
  const __m512 x0 = op(_mm512_permutex2var_ps(u[0], lo2, u[1]), _mm512_permutex2var_ps(u[0], hi2, u[1]));
  const __m512 x1 = op(_mm512_permutex2var_ps(u[2], lo2, u[3]), _mm512_permutex2var_ps(u[2], hi2, u[3]));
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  return {op(_mm512_permutex2var_ps(x0, even, x1), _mm512_permutex2var_ps(x0, odd, x1))};
}
__attribute__((always_inline)) inline Vf ReduceSumRows16(const float* rows) {
  return ReduceRows16(rows, [](__m512 a, __m512 b) __attribute__((always_inline)) { return _mm512_add_ps(a, b); });
}
__attribute__((always_inline)) inline Vf ReduceMaxRows16(const float* rows) {
  return ReduceRows16(rows, [](__m512 a, __m512 b) __attribute__((always_inline)) { return _mm512_max_ps(a, b); });
}

inline void StreamFence() { _mm_sfence(); }

// `lines` whole 64-byte lines from src to dst (64-byte aligned), non-temporal.
__attribute__((always_inline)) inline void StreamLines(void* dst, const void* src, size_t lines) {
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
  for (size_t i = 0; i < lines; ++i) _mm512_stream_si512(reinterpret_cast<__m512i*>(d + 64 * i), _mm512_loadu_si512(s + 64 * i));
}
// Copies `bytes` from src to dst with non-temporal stores for every whole 64-byte line of dst
// (plain copies for the partial lines at either end). Call StreamFence() before handing on.
inline void StreamCopy(void* dst, const void* src, size_t bytes) {
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
  size_t head = (64 - reinterpret_cast<uintptr_t>(d) % 64) % 64;
  if (head > bytes) head = bytes;
  std::memcpy(d, s, head);
  d += head, s += head, bytes -= head;
  StreamLines(d, s, bytes / 64);
  std::memcpy(d + bytes / 64 * 64, s + bytes / 64 * 64, bytes % 64);
}

// ---- mhc primitives ----
// The bits of StoreBf16Bits / StoreBf16BitsStream (the AVX2 build has a cheaper NaN-free path).
__attribute__((always_inline)) inline void MhcStoreBf16Bits(uint16_t* p, Vf a) { StoreBf16Bits(p, a); }
__attribute__((always_inline)) inline void MhcStoreBf16BitsStream(uint16_t* p, Vf a) { StoreBf16BitsStream(p, a); }
// The deinterleaved bf16 layout of the AVX2 build is the natural one here.
inline Vf MhcLoadBf16Deint(const uint16_t* p) { return LoadBf16Bits(p); }
__attribute__((always_inline)) inline void MhcStoreBf16Deint(uint16_t* p, Vf a) { StoreBf16Bits(p, a); }
__attribute__((always_inline)) inline void MhcStoreBf16DeintNarrowNaN(uint16_t* p, Vf a) { StoreBf16Bits(p, a); }
constexpr bool kMhcNarrowNaNStoreIsCheaper = false;  // the full store: kernels need no variant for it
inline Vf MhcFromDeint(Vf a) { return a; }
__attribute__((always_inline)) inline void MhcStoreBf16Pair(uint16_t* p, Vf a, Vf b) { StoreBf16BitsPair(p, a, b); }
__attribute__((always_inline)) inline void MhcStoreBf16DeintPair(uint16_t* p, Vf a, Vf b) { StoreBf16BitsPair(p, a, b); }

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

inline Vi AsBits(Vf a) { return {_mm512_castps_si512(a.v)}; }
inline Vf FromBits(Vi a) { return {_mm512_castsi512_ps(a.v)}; }
inline Vi SetI(int32_t x) { return {_mm512_set1_epi32(x)}; }
inline Vi AndI(Vi a, Vi b) { return {_mm512_and_si512(a.v, b.v)}; }
inline Vi OrI(Vi a, Vi b) { return {_mm512_or_si512(a.v, b.v)}; }
inline Vi AddI(Vi a, Vi b) { return {_mm512_add_epi32(a.v, b.v)}; }
// Logical shift right by n in [0, 31].
inline Vi SrlI(Vi a, int n) { return {_mm512_srli_epi32(a.v, n)}; }
// int32 -> fp32, round to nearest even (exact for |a| <= 2^24).
inline Vf ToFloatI(Vi a) { return {_mm512_cvtepi32_ps(a.v)}; }
// Ordered compares: false when either input is NaN.
inline Mask Less(Vf a, Vf b) { return {_mm512_cmp_ps_mask(a.v, b.v, _CMP_LT_OQ)}; }
inline Mask Equal(Vf a, Vf b) { return {_mm512_cmp_ps_mask(a.v, b.v, _CMP_EQ_OQ)}; }

// 16 consecutive values of T (8 rows of 2), widened exactly, as one zmm; Store16 rounds as StoreAs.
inline __m512 Load16(const float* p) { return _mm512_loadu_ps(p); }
inline __m512 Load16(const Half* p) { return LoadHalfBits(reinterpret_cast<const uint16_t*>(p)).v; }
inline __m512 Load16(const BFloat16* p) { return LoadBf16Bits(reinterpret_cast<const uint16_t*>(p)).v; }
inline void Store16(float* p, __m512 a) { _mm512_storeu_ps(p, a); }
inline void Store16(Half* p, __m512 a) { StoreHalfBits(reinterpret_cast<uint16_t*>(p), {a}); }
inline void Store16(BFloat16* p, __m512 a) { StoreBf16Bits(reinterpret_cast<uint16_t*>(p), {a}); }

namespace rows16 {
// 4x4 transposes inside each 128-bit quarter: a_i = [row i | row i+4 | row i+8 | row i+12]
// (4 columns each) <-> c_k = column k of rows 0..15. The network is its own inverse.
inline void Transpose4x4Quarters(__m512& a0, __m512& a1, __m512& a2, __m512& a3) {
  const __m512 t0 = _mm512_unpacklo_ps(a0, a1), t1 = _mm512_unpacklo_ps(a2, a3);
  const __m512 t2 = _mm512_unpackhi_ps(a0, a1), t3 = _mm512_unpackhi_ps(a2, a3);
  a0 = _mm512_shuffle_ps(t0, t1, _MM_SHUFFLE(1, 0, 1, 0));
  a1 = _mm512_shuffle_ps(t0, t1, _MM_SHUFFLE(3, 2, 3, 2));
  a2 = _mm512_shuffle_ps(t2, t3, _MM_SHUFFLE(1, 0, 1, 0));
  a3 = _mm512_shuffle_ps(t2, t3, _MM_SHUFFLE(3, 2, 3, 2));
}
// Columns c0 .. c0+u-1 (u = 1..4) of 16 rows n elements apart (row r at p + r * n) to cols[16 *
// c + r]; n is a compile-time constant in LoadRowsT (the offsets fold), a run-time value in
// LoadRowsN.
template <int u, typename T>
__attribute__((always_inline)) inline void LoadChunk(const T* p, int64_t n, int64_t c0, float* cols) {
  __m512 a[4];
  for (int i = 0; i < 4; ++i) {
    const T* r = p + i * n + c0;  // rows i, i + 4, i + 8, i + 12 are 4 * n apart
    if constexpr (std::is_same_v<T, float>) {
      __m512 v = _mm512_castps128_ps512(rows8::Ld4<u>(r));
      v = _mm512_insertf32x4(v, rows8::Ld4<u>(r + 4 * n), 1);
      v = _mm512_insertf32x4(v, rows8::Ld4<u>(r + 8 * n), 2);
      a[i] = _mm512_insertf32x4(v, rows8::Ld4<u>(r + 12 * n), 3);
    } else {  // 16-bit: the four 64-bit pieces side by side, widened as one vector
      const uint16_t* q = reinterpret_cast<const uint16_t*>(r);
      const __m128i lo = _mm_unpacklo_epi64(rows8::Ld4Bits<u>(q), rows8::Ld4Bits<u>(q + 4 * n));
      const __m128i hi = _mm_unpacklo_epi64(rows8::Ld4Bits<u>(q + 8 * n), rows8::Ld4Bits<u>(q + 12 * n));
      const __m256i w = _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
      if constexpr (std::is_same_v<T, Half>) a[i] = _mm512_cvtph_ps(w);
      else a[i] = Bf16Widen(w).v;
    }
  }
  Transpose4x4Quarters(a[0], a[1], a[2], a[3]);
  for (int k = 0; k < u; ++k) _mm512_storeu_ps(cols + 16 * (c0 + k), a[k]);
}
// Bf16FromVf of a[0..3] (with AVX512_BF16 two at a time: Bf16PairFromVf).
__attribute__((always_inline)) inline void Bf16FromVf4(const __m512 (&a)[4], __m256i (&w)[4]) {
#if defined(ACLNN_ISA_AVX512BF16)
  const __m512i w01 = Bf16PairFromVf({a[0]}, {a[1]}), w23 = Bf16PairFromVf({a[2]}, {a[3]});
  w[0] = _mm512_castsi512_si256(w01), w[1] = _mm512_extracti64x4_epi64(w01, 1);
  w[2] = _mm512_castsi512_si256(w23), w[3] = _mm512_extracti64x4_epi64(w23, 1);
#else
  for (int i = 0; i < 4; ++i) w[i] = Bf16FromVfInt({a[i]});
#endif
}
// The inverse of LoadChunk: columns c0 .. c0+u-1 of cols into 16 rows n elements apart.
template <int u, typename T>
__attribute__((always_inline)) inline void StoreChunk(T* p, int64_t n, int64_t c0, const float* cols) {
  __m512 a[4];
  for (int k = 0; k < 4; ++k) a[k] = k < u ? _mm512_loadu_ps(cols + 16 * (c0 + k)) : _mm512_setzero_ps();
  Transpose4x4Quarters(a[0], a[1], a[2], a[3]);
  __m256i w16[4];
  if constexpr (std::is_same_v<T, BFloat16>) Bf16FromVf4(a, w16);
  for (int i = 0; i < 4; ++i) {
    T* r = p + i * n + c0;
    if constexpr (std::is_same_v<T, float>) {
      rows8::St4<u>(r, _mm512_castps512_ps128(a[i]));
      rows8::St4<u>(r + 4 * n, _mm512_extractf32x4_ps(a[i], 1));
      rows8::St4<u>(r + 8 * n, _mm512_extractf32x4_ps(a[i], 2));
      rows8::St4<u>(r + 12 * n, _mm512_extractf32x4_ps(a[i], 3));
    } else {  // 16-bit: one rounding of the whole vector, then the four 64-bit pieces
      const __m256i w = std::is_same_v<T, Half> ? HalfFromVf({a[i]}) : w16[i];
      const __m128i lo = _mm256_castsi256_si128(w), hi = _mm256_extracti128_si256(w, 1);
      uint16_t* q = reinterpret_cast<uint16_t*>(r);
      rows8::St4Bits<u>(q, lo);
      rows8::St4Bits<u>(q + 4 * n, _mm_unpackhi_epi64(lo, lo));
      rows8::St4Bits<u>(q + 8 * n, hi);
      rows8::St4Bits<u>(q + 12 * n, _mm_unpackhi_epi64(hi, hi));
    }
  }
}

// 16-bit blocks of an odd n > 4 columns end with a whole 4-column chunk that overlaps the one
// before it (columns n - 4 .. n - 1: the overlap is loaded, or stored, twice with the same
// values, all inside the block) instead of a chunk of 1 or 3 columns, whose 16-bit pieces are
// gathered and scattered a word at a time (Ld4Bits / St4Bits). Measured on the Xeon guest, 1
// thread, in-cache [~262144 / C, C], two rounds: bf16 C = 7-15 0.82-0.98x the time, fp16
// 0.86-0.95x; fp32 (whose partial pieces are one or two loads) 0.88-1.10x, within the noise,
// so fp32 keeps the partial chunk. LoadRowsN / StoreRowsN (C > 16) measured no different
// (bf16 / fp16 C = 17-97: 0.99-1.05x) and keep it too.
template <typename T>
constexpr bool OverlapTail(int n) { return sizeof(T) == 2 && n > 4 && n % 2 == 1; }
template <typename T>
constexpr int ChunkWidthFor(int n, int j) { return OverlapTail<T>(n) ? 4 : rows8::ChunkWidth(n, j); }
template <typename T>
constexpr int ChunkStartFor(int n, int j) { return OverlapTail<T>(n) && 4 * j + 4 > n ? n - 4 : 4 * j; }
// Blocks of kN = 3 and 5 columns by permutes of whole vectors instead of 4-column chunks: the
// block is kN vectors of 16 consecutive values (flat index f = 16 j + l = kN r + c for row r,
// column c); each column gathers its 16 lanes from all kN vectors by a chain of kN - 1
// two-source permutes, each merging one more vector into the lanes it owns, and the stores run
// the chain the other way (each row-major vector from all kN columns). kN (kN - 1) permutes per
// direction and whole-vector loads and stores, against 20 inserts and shuffles per 4-column
// chunk, as many for a partial chunk (plus its piecewise loads: C = 3 is one partial chunk).
// Measured on the Xeon guest (Intel: one shuffle port), 1 thread, in-cache [~262144 / C, C],
// the time against chunks: C = 3 0.59-0.62x (fp32, bf16, fp16), C = 5 0.95 / 0.78 / 0.73x
// (C = 4 0.96 / 1.0 / 0.89x, now NetTranspose); C = 6 1.10 / 1.0 / 0.93x and C = 7 1.10
// (fp32) / 0.97x (bf16), so they keep the chunks.
template <int kN>
struct PermuteIdx {
  alignas(64) int32_t load[kN][kN - 1][16];   // [column][step]
  alignas(64) int32_t store[kN][kN - 1][16];  // [row-major vector][step]
};
template <int kN>
constexpr PermuteIdx<kN> MakePermuteIdx() {
  PermuteIdx<kN> t{};
  for (int k = 0; k < kN; ++k)
    for (int r = 0; r < 16; ++r) {
      const int f = kN * r + k, j = f / 16, l = f % 16;
      t.load[k][0][r] = j == 0 ? l : j == 1 ? 16 + l : 0;
      for (int s = 1; s < kN - 1; ++s) t.load[k][s][r] = j == s + 1 ? 16 + l : r;
    }
  for (int j = 0; j < kN; ++j)
    for (int l = 0; l < 16; ++l) {
      const int f = 16 * j + l, r = f / kN, k = f % kN;
      t.store[j][0][l] = k == 0 ? r : k == 1 ? 16 + r : 0;
      for (int s = 1; s < kN - 1; ++s) t.store[j][s][l] = k == s + 1 ? 16 + r : l;
    }
  return t;
}
template <int kN>
inline constexpr PermuteIdx<kN> kPermuteIdx = MakePermuteIdx<kN>();
// v: the block's kN vectors (16 consecutive values each) -> its kN columns, or (toRows) back.
template <int kN>
__attribute__((always_inline)) inline void PermuteTranspose(__m512 (&v)[kN], bool toRows) {
  const auto& idx = toRows ? kPermuteIdx<kN>.store : kPermuteIdx<kN>.load;
  __m512 out[kN];
  for (int k = 0; k < kN; ++k) {  // k: the column (load) or the row-major vector (store)
    __m512 acc = _mm512_permutex2var_ps(v[0], _mm512_load_si512(idx[k][0]), v[1]);
    for (int s = 1; s < kN - 1; ++s) acc = _mm512_permutex2var_ps(acc, _mm512_load_si512(idx[k][s]), v[s + 1]);
    out[k] = acc;
  }
  for (int k = 0; k < kN; ++k) v[k] = out[k];
}

// kN = 4 and 8 by a halving network instead (fewer permutes than the chain: 8 against 12 for
// kN = 4, 24 against 56 for kN = 8): stage s turns vectors of R rows x C columns into vectors of
// 2R rows x C/2 columns, each output from two inputs (the same columns of two row ranges) by
// one two-source permute; log2(kN) stages of kN permutes take the block (16 / kN rows x kN
// columns per vector, row-major) to the kN columns, and the stores run them backwards. Inside
// a vector, lanes are column-major (lane = (col - c0) R + row - r0) after the first stage.
// Measured on the Xeon guest against the kN = 4 chain and the 4-column chunks of kN = 8 (1
// thread, in-cache [~262144 / C, C], minimum of 6 rounds of 300 calls, two pairs of builds):
// C = 4 0.88-0.92x the time (fp32, bf16, fp16), C = 8 0.97-1.0 / 0.88-0.93 / 0.84x (fp32 /
// bf16 / fp16). kN = 16 (four stages of 16 vectors: registers spill) measured 1.5-1.7x and
// keeps the chunks.
template <int kN>
constexpr int NetStages() { return kN == 4 ? 2 : 3; }
template <int kN>
struct NetIdx {
  alignas(64) int32_t load[NetStages<kN>()][kN][16];   // [stage][output vector]
  alignas(64) int32_t store[NetStages<kN>()][kN][16];  // [reverse stage][output vector]
  int8_t loadSrc[NetStages<kN>()][kN][2];               // the two input vectors
  int8_t storeSrc[NetStages<kN>()][kN][2];
};
template <int kN>
constexpr NetIdx<kN> MakeNetIdx() {
  NetIdx<kN> t{};
  // The lane of (row, col) in a vector of R rows x C columns from (r0, c0).
  auto lane = [](int row, int col, int r0, int R, int c0, int C, bool rowMajor) {
    return rowMajor ? (row - r0) * C + (col - c0) : (col - c0) * R + (row - r0);
  };
  int R = 16 / kN, C = kN;  // the shape of the stage's input vectors; vector v = rb * (kN / C) + cb
  for (int s = 0; s < NetStages<kN>(); ++s, R *= 2, C /= 2) {
    const int R2 = 2 * R, C2 = C / 2, ncb = kN / C, ncb2 = kN / C2;
    // Stage s: output (rb2, cb2), R2 x C2, from inputs (2 rb2, cb2 / 2) and (2 rb2 + 1, cb2 / 2).
    for (int rb2 = 0; rb2 < 16 / R2; ++rb2)
      for (int cb2 = 0; cb2 < ncb2; ++cb2) {
        const int o = rb2 * ncb2 + cb2;
        t.loadSrc[s][o][0] = static_cast<int8_t>(2 * rb2 * ncb + cb2 / 2);
        t.loadSrc[s][o][1] = static_cast<int8_t>((2 * rb2 + 1) * ncb + cb2 / 2);
        for (int l = 0; l < 16; ++l) {
          const int col = cb2 * C2 + l / R2, row = rb2 * R2 + l % R2;
          const bool inA = row < rb2 * R2 + R;
          const int r0 = inA ? 2 * rb2 * R : (2 * rb2 + 1) * R;
          t.load[s][o][l] = (inA ? 0 : 16) + lane(row, col, r0, R, (cb2 / 2) * C, C, s == 0);
        }
      }
    // Its inverse: output (rb, cb), R x C, from inputs (rb / 2, 2 cb) and (rb / 2, 2 cb + 1).
    for (int rb = 0; rb < 16 / R; ++rb)
      for (int cb = 0; cb < ncb; ++cb) {
        const int o = rb * ncb + cb, rb2 = rb / 2;
        t.storeSrc[s][o][0] = static_cast<int8_t>(rb2 * ncb2 + 2 * cb);
        t.storeSrc[s][o][1] = static_cast<int8_t>(rb2 * ncb2 + 2 * cb + 1);
        for (int l = 0; l < 16; ++l) {
          const int row = s == 0 ? rb * R + l / C : rb * R + l % R;
          const int col = s == 0 ? cb * C + l % C : cb * C + l / R;
          const bool inA = col < cb * C + C2;
          const int cb2 = inA ? 2 * cb : 2 * cb + 1;
          t.store[s][o][l] = (inA ? 0 : 16) + lane(row, col, rb2 * R2, R2, cb2 * C2, C2, false);
        }
      }
  }
  return t;
}
template <int kN>
inline constexpr NetIdx<kN> kNetIdx = MakeNetIdx<kN>();
// v: the block's kN vectors (16 consecutive values each) -> its kN columns, or (toRows) back.
template <int kN>
__attribute__((always_inline)) inline void NetTranspose(__m512 (&v)[kN], bool toRows) {
  const auto& x = kNetIdx<kN>;
  for (int i = 0; i < NetStages<kN>(); ++i) {
    const int s = toRows ? NetStages<kN>() - 1 - i : i;
    const auto& idx = toRows ? x.store[s] : x.load[s];
    const auto& src = toRows ? x.storeSrc[s] : x.loadSrc[s];
    __m512 o[kN];
    for (int k = 0; k < kN; ++k)
      o[k] = _mm512_permutex2var_ps(v[src[k][0]], _mm512_load_si512(idx[k]), v[src[k][1]]);
    for (int k = 0; k < kN; ++k) v[k] = o[k];
  }
}
// The blocks transposed as whole vectors, and by which of the two.
constexpr bool WholeVectorBlock(int n) { return n == 3 || n == 4 || n == 5 || n == 8; }
template <int kN>
__attribute__((always_inline)) inline void WholeVectorTranspose(__m512 (&v)[kN], bool toRows) {
  if constexpr (kN == 4 || kN == 8) NetTranspose<kN>(v, toRows);
  else PermuteTranspose<kN>(v, toRows);
}
}  // namespace rows16

// A dense block of 16 rows of kN (1..16) elements of T (row r at p + r * kN) <-> kN vectors of
// 16 floats at cols (class-major): cols[16 * c + r] = element c of row r. Reads / writes exactly
// the block's 16 * kN elements; T is widened exactly / rounded to nearest even as LoadAs /
// StoreAs. kN = 2: one two-source permute per vector; kN = 3, 4, 5, 8: whole vectors through
// WholeVectorTranspose. Otherwise 4 columns at a time: 4 rows 4 apart in the 128-bit quarters
// of a zmm, then 4x4 transposes inside the quarters (half the shuffles of two 8-row ymm
// transposes, which also ran into a store-forwarding stall: two 32-byte stores read back by
// one 64-byte load, ~20 cycles per column on Intel cores); 16-bit blocks of an odd kN end with
// an overlapping chunk (OverlapTail).
template <int kN, typename T>
__attribute__((always_inline)) inline void LoadRowsT(const T* p, float* cols) {
  if constexpr (kN == 2) {
    const __m512 a = Load16(p), b = Load16(p + 16);
    const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
    const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
    _mm512_storeu_ps(cols, _mm512_permutex2var_ps(a, even, b));
    _mm512_storeu_ps(cols + 16, _mm512_permutex2var_ps(a, odd, b));
  } else if constexpr (rows16::WholeVectorBlock(kN)) {
    __m512 v[kN];
    for (int j = 0; j < kN; ++j) v[j] = Load16(p + 16 * j);
    rows16::WholeVectorTranspose<kN>(v, false);
    for (int k = 0; k < kN; ++k) _mm512_storeu_ps(cols + 16 * k, v[k]);
  } else {
    [&]<int... j>(std::integer_sequence<int, j...>) __attribute__((always_inline)) {
      (rows16::LoadChunk<rows16::ChunkWidthFor<T>(kN, j)>(p, kN, rows16::ChunkStartFor<T>(kN, j), cols), ...);
    }(std::make_integer_sequence<int, (kN + 3) / 4>{});
  }
}
// Two class vectors (cols, cols + 16) interleaved back into 16 rows of 2: *a rows 0-7, *b rows 8-15.
__attribute__((always_inline)) inline void Interleave2(const float* cols, __m512* a, __m512* b) {
  const __m512 c0 = _mm512_loadu_ps(cols), c1 = _mm512_loadu_ps(cols + 16);
  const __m512i lo = _mm512_set_epi32(23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
  *a = _mm512_permutex2var_ps(c0, lo, c1);
  *b = _mm512_permutex2var_ps(c0, _mm512_add_epi32(lo, _mm512_set1_epi32(8)), c1);
}
// StoreRowsT<2> with non-temporal stores: p 64-byte aligned.
inline void Store16Stream(float* p, __m512 a) { _mm512_stream_ps(p, a); }
inline void Store16Stream(Half* p, __m512 a) { StoreHalfBitsStream(reinterpret_cast<uint16_t*>(p), {a}); }
template <typename T>
__attribute__((always_inline)) inline void StoreRows2Stream(T* p, const float* cols) {
  __m512 a, b;
  Interleave2(cols, &a, &b);
  if constexpr (std::is_same_v<T, BFloat16>) {
    StoreBf16BitsStreamPair(reinterpret_cast<uint16_t*>(p), {a}, {b});
  } else {
    Store16Stream(p, a);
    Store16Stream(p + 16, b);
  }
}
template <int kN, typename T>
__attribute__((always_inline)) inline void StoreRowsT(T* p, const float* cols) {
  if constexpr (kN == 2) {
    __m512 a, b;
    Interleave2(cols, &a, &b);
    if constexpr (std::is_same_v<T, BFloat16>) {
      StoreBf16BitsPair(reinterpret_cast<uint16_t*>(p), {a}, {b});
    } else {
      Store16(p, a);
      Store16(p + 16, b);
    }
  } else if constexpr (rows16::WholeVectorBlock(kN)) {
    __m512 v[kN];
    for (int k = 0; k < kN; ++k) v[k] = _mm512_loadu_ps(cols + 16 * k);
    rows16::WholeVectorTranspose<kN>(v, true);
    for (int j = 0; j < kN; ++j) Store16(p + 16 * j, v[j]);
  } else {
    [&]<int... j>(std::integer_sequence<int, j...>) __attribute__((always_inline)) {
      (rows16::StoreChunk<rows16::ChunkWidthFor<T>(kN, j)>(p, kN, rows16::ChunkStartFor<T>(kN, j), cols), ...);
    }(std::make_integer_sequence<int, (kN + 3) / 4>{});
  }
}
// LoadRowsT / StoreRowsT for a class count n >= 1 known only at run time: the same 4-column
// chunks and bits, row offsets computed.
template <typename T>
__attribute__((always_inline)) inline void LoadRowsN(const T* p, int n, float* cols) {
  rows8::ForEachChunk(n, [&]<int u>(int c0) __attribute__((always_inline)) { rows16::LoadChunk<u>(p, n, c0, cols); });
}
template <typename T>
__attribute__((always_inline)) inline void StoreRowsN(T* p, int n, const float* cols) {
  rows8::ForEachChunk(n, [&]<int u>(int c0) __attribute__((always_inline)) { rows16::StoreChunk<u>(p, n, c0, cols); });
}

}  // namespace simd
}  // namespace ACLNN_ISA_NS
}  // namespace aclnn_portable
