// bf16 <-> fp32 on 8-lane ymm vectors with AVX2 integer operations, for simd_avx2.h (a Vf is
// two of them) and the lane-path row transposes of simd_x86_rows.h (AVX2 and AVX-512 builds).
// Exact: widening is a shift; narrowing is RNE with NaN quieted, FloatToBf16's bits (half.h).
#pragma once
#include <immintrin.h>

namespace aclnn_portable {
namespace ACLNN_ISA_NS {
namespace simd {

// 8 bf16 -> fp32 (exact).
inline __m256 Bf16Widen8(__m128i b) { return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(b), 16)); }

// fp32 -> bf16 bits in the low word of each 32-bit lane, for 8 lanes of each of a[0..kV-1] (kV
// even). The NaN-free path is round-to-nearest-even by integer add, (x + 0x7fff + lsb) >> 16; one
// unordered compare per pair of vectors tests every lane, and the quieting blend (sign, exponent
// and the top 7 mantissa bits, with the quiet bit set) runs only when a lane is NaN.
template <int kV>
__attribute__((always_inline)) inline void Bf16Bits8xN(const __m256 (&a)[kV], __m256i (&w)[kV]) {
  static_assert(kV % 2 == 0);
  __m256 nan = _mm256_cmp_ps(a[0], a[1], _CMP_UNORD_Q);
  for (int i = 2; i < kV; i += 2) nan = _mm256_or_ps(nan, _mm256_cmp_ps(a[i], a[i + 1], _CMP_UNORD_Q));
  const __m256i one = _mm256_set1_epi32(1), bias = _mm256_set1_epi32(0x7fff);
  for (int i = 0; i < kV; ++i) {
    const __m256i x = _mm256_castps_si256(a[i]);
    w[i] = _mm256_srli_epi32(_mm256_add_epi32(x, _mm256_add_epi32(_mm256_and_si256(_mm256_srli_epi32(x, 16), one), bias)), 16);
  }
  if (__builtin_expect(!_mm256_testz_ps(nan, nan), 0)) {
    for (int i = 0; i < kV; ++i) {
      const __m256i x = _mm256_castps_si256(a[i]);
      const __m256i q = _mm256_or_si256(_mm256_srli_epi32(x, 16), _mm256_set1_epi32(0x40));
      w[i] = _mm256_blendv_epi8(w[i], q, _mm256_castps_si256(_mm256_cmp_ps(a[i], a[i], _CMP_UNORD_Q)));
    }
  }
}

// Bf16Bits8xN of lo and hi, the 16 bf16 in lane order (lo's, then hi's).
__attribute__((always_inline)) inline __m256i Bf16Pack16(__m256 lo, __m256 hi) {
  const __m256 a[2] = {lo, hi};
  __m256i w[2];
  Bf16Bits8xN(a, w);
  return _mm256_permute4x64_epi64(_mm256_packus_epi32(w[0], w[1]), 0xd8);  // packus interleaves per 128
}

}  // namespace simd
}  // namespace ACLNN_ISA_NS
}  // namespace aclnn_portable
