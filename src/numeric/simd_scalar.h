// Portable primitives for simd.h: a Vf is 16 floats in an array and every operation is the same
// IEEE operation per lane as the vector builds (std::fma for MulAdd), so this build gives the
// same bits on any CPU. The compiler may still vectorise these loops (SSE2, NEON).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "numeric/half.h"

namespace aclnn_portable {
namespace ACLNN_ISA_NS {
namespace simd {

struct Vf { float v[16]; };
struct Vi { int32_t v[16]; };
struct Mask { bool m[16]; };

#define ACLNN_FOR_LANES for (int i = 0; i < 16; ++i)

inline Vf Zero() { Vf r; ACLNN_FOR_LANES r.v[i] = 0.0f; return r; }
inline Vf Set(float x) { Vf r; ACLNN_FOR_LANES r.v[i] = x; return r; }
inline Vf Load(const float* p) { Vf r; std::memcpy(r.v, p, sizeof r.v); return r; }
inline Vf LoadN(const float* p, int n, float fill) {
  Vf r; ACLNN_FOR_LANES r.v[i] = i < n ? p[i] : fill; return r;
}
// v with lanes >= n set to fill.
inline Vf FillFrom(Vf v, int n, float fill) { ACLNN_FOR_LANES if (i >= n) v.v[i] = fill; return v; }
inline void Store(float* p, Vf a) { std::memcpy(p, a.v, sizeof a.v); }
inline void StoreN(float* p, Vf a, int n) { for (int i = 0; i < n && i < 16; ++i) p[i] = a.v[i]; }
inline void StoreStream(float* p, Vf a) { Store(p, a); }

inline Vf LoadHalfBits(const uint16_t* p) { Vf r; ACLNN_FOR_LANES r.v[i] = HalfToFloat(p[i]); return r; }
inline Vf LoadHalfBitsN(const uint16_t* p, int n, float fill) {
  Vf r; ACLNN_FOR_LANES r.v[i] = i < n ? HalfToFloat(p[i]) : fill; return r;
}
inline void StoreHalfBits(uint16_t* p, Vf a) { ACLNN_FOR_LANES p[i] = FloatToHalf(a.v[i]); }
inline void StoreHalfBitsN(uint16_t* p, Vf a, int n) { for (int i = 0; i < n && i < 16; ++i) p[i] = FloatToHalf(a.v[i]); }
inline void StoreHalfBitsStream(uint16_t* p, Vf a) { StoreHalfBits(p, a); }

inline Vf LoadBf16Bits(const uint16_t* p) { Vf r; ACLNN_FOR_LANES r.v[i] = Bf16ToFloat(p[i]); return r; }
inline Vf LoadBf16BitsN(const uint16_t* p, int n, float fill) {
  Vf r; ACLNN_FOR_LANES r.v[i] = i < n ? Bf16ToFloat(p[i]) : fill; return r;
}
inline void StoreBf16Bits(uint16_t* p, Vf a) { ACLNN_FOR_LANES p[i] = FloatToBf16(a.v[i]); }
inline void StoreBf16BitsPair(uint16_t* p, Vf a, Vf b) { StoreBf16Bits(p, a), StoreBf16Bits(p + 16, b); }
inline void StoreBf16BitsN(uint16_t* p, Vf a, int n) { for (int i = 0; i < n && i < 16; ++i) p[i] = FloatToBf16(a.v[i]); }
inline void StoreBf16BitsStream(uint16_t* p, Vf a) { StoreBf16Bits(p, a); }

inline Vf Add(Vf a, Vf b) { ACLNN_FOR_LANES a.v[i] = a.v[i] + b.v[i]; return a; }
inline Vf Sub(Vf a, Vf b) { ACLNN_FOR_LANES a.v[i] = a.v[i] - b.v[i]; return a; }
inline Vf Mul(Vf a, Vf b) { ACLNN_FOR_LANES a.v[i] = a.v[i] * b.v[i]; return a; }
inline Vf Div(Vf a, Vf b) { ACLNN_FOR_LANES a.v[i] = a.v[i] / b.v[i]; return a; }
inline Vf MulAdd(Vf a, Vf b, Vf c) { ACLNN_FOR_LANES a.v[i] = std::fma(a.v[i], b.v[i], c.v[i]); return a; }
inline Vf MulSub(Vf a, Vf b, Vf c) { ACLNN_FOR_LANES a.v[i] = std::fma(a.v[i], b.v[i], -c.v[i]); return a; }
// x86 MAXPS/MINPS semantics: when either input is NaN the result is b.
inline float MaxLane(float a, float b) { return a > b ? a : b; }
inline float MinLane(float a, float b) { return a < b ? a : b; }
inline Vf Max(Vf a, Vf b) { ACLNN_FOR_LANES a.v[i] = MaxLane(a.v[i], b.v[i]); return a; }
inline Vf Min(Vf a, Vf b) { ACLNN_FOR_LANES a.v[i] = MinLane(a.v[i], b.v[i]); return a; }
inline Vf Round(Vf a) { ACLNN_FOR_LANES a.v[i] = std::nearbyint(a.v[i]); return a; }
inline Mask IsNaN(Vf a) { Mask m; ACLNN_FOR_LANES m.m[i] = a.v[i] != a.v[i]; return m; }
inline Mask Lt(Vf a, Vf b) { Mask m; ACLNN_FOR_LANES m.m[i] = a.v[i] < b.v[i]; return m; }
inline bool Any(Mask m) { bool r = false; ACLNN_FOR_LANES r = r || m.m[i]; return r; }
inline Vf Select(Mask m, Vf yes, Vf no) { ACLNN_FOR_LANES no.v[i] = m.m[i] ? yes.v[i] : no.v[i]; return no; }

// NaN gives x86's integer indefinite (INT32_MIN), as the vector builds.
inline Vi ToInt(Vf a) {
  Vi r; ACLNN_FOR_LANES r.v[i] = a.v[i] == a.v[i] ? static_cast<int32_t>(a.v[i]) : INT32_MIN; return r;
}
inline Vi HalveFloor(Vi a) { ACLNN_FOR_LANES a.v[i] = a.v[i] >> 1; return a; }
inline Vi SubI(Vi a, Vi b) { ACLNN_FOR_LANES a.v[i] = a.v[i] - b.v[i]; return a; }
inline Vf Pow2(Vi k) {
  Vf r; ACLNN_FOR_LANES r.v[i] = BitsToFloat(static_cast<uint32_t>(k.v[i] + 127) << 23); return r;
}

// p * 2^k by adding k to the exponent field: exact while p and the result are normal.
inline Vf ScaleNormal(Vf p, Vi k) {
  ACLNN_FOR_LANES p.v[i] = BitsToFloat(FloatBits(p.v[i]) + (static_cast<uint32_t>(k.v[i]) << 23));
  return p;
}

inline float ReduceSum(Vf a) {
  float s8[8], s4[4];
  for (int i = 0; i < 8; ++i) s8[i] = a.v[i] + a.v[i + 8];
  for (int i = 0; i < 4; ++i) s4[i] = s8[i] + s8[i + 4];
  const float s2_0 = s4[0] + s4[2], s2_1 = s4[1] + s4[3];
  return s2_0 + s2_1;
}
inline float ReduceMax(Vf a) {
  float s8[8], s4[4];
  for (int i = 0; i < 8; ++i) s8[i] = MaxLane(a.v[i], a.v[i + 8]);
  for (int i = 0; i < 4; ++i) s4[i] = MaxLane(s8[i], s8[i + 4]);
  return MaxLane(MaxLane(s4[0], s4[2]), MaxLane(s4[1], s4[3]));
}
// Lane r: ReduceSum / ReduceMax of the 16 floats at rows + 16 r (16 reductions side by side
// on the vector ISAs, the same bits).
__attribute__((always_inline)) inline Vf ReduceSumRows16(const float* rows) {
  Vf r;
  ACLNN_FOR_LANES r.v[i] = ReduceSum(Load(rows + 16 * i));
  return r;
}
__attribute__((always_inline)) inline Vf ReduceMaxRows16(const float* rows) {
  Vf r;
  ACLNN_FOR_LANES r.v[i] = ReduceMax(Load(rows + 16 * i));
  return r;
}

inline void StreamFence() {}
inline void StreamCopy(void* dst, const void* src, size_t bytes) { std::memcpy(dst, src, bytes); }
inline void StreamLines(void* dst, const void* src, size_t lines) { std::memcpy(dst, src, 64 * lines); }

#undef ACLNN_FOR_LANES

// ---- mhc primitives ----
// The bits of StoreBf16Bits / StoreBf16BitsStream (the AVX2 build has a cheaper NaN-free path).
inline void MhcStoreBf16Bits(uint16_t* p, Vf a) { StoreBf16Bits(p, a); }
inline void MhcStoreBf16BitsStream(uint16_t* p, Vf a) { StoreBf16BitsStream(p, a); }
// The deinterleaved bf16 layout of the AVX2 build is the natural one here.
inline Vf MhcLoadBf16Deint(const uint16_t* p) { return LoadBf16Bits(p); }
inline void MhcStoreBf16Deint(uint16_t* p, Vf a) { StoreBf16Bits(p, a); }
inline void MhcStoreBf16DeintNarrowNaN(uint16_t* p, Vf a) { StoreBf16Bits(p, a); }
constexpr bool kMhcNarrowNaNStoreIsCheaper = false;  // the full store: kernels need no variant for it
inline Vf MhcFromDeint(Vf a) { return a; }
// Two vectors at once: a to p, b to p + 16 (one instruction for both on AVX512_BF16).
inline void MhcStoreBf16Pair(uint16_t* p, Vf a, Vf b) { StoreBf16BitsPair(p, a, b); }
inline void MhcStoreBf16DeintPair(uint16_t* p, Vf a, Vf b) { StoreBf16BitsPair(p, a, b); }

}  // namespace simd
}  // namespace ACLNN_ISA_NS
}  // namespace aclnn_portable

// ---- lane-path primitives ----
// Bit views, integer ops and compares (for simd_log.h) and 16-row block transposes (for the
// SoftmaxCrossEntropyWithLogits lane path). Exact everywhere: the same bits on every ISA.
namespace aclnn_portable {
namespace ACLNN_ISA_NS {
namespace simd {

inline Vi AsBits(Vf a) { Vi r; for (int i = 0; i < 16; ++i) r.v[i] = static_cast<int32_t>(FloatBits(a.v[i])); return r; }
inline Vf FromBits(Vi a) { Vf r; for (int i = 0; i < 16; ++i) r.v[i] = BitsToFloat(static_cast<uint32_t>(a.v[i])); return r; }
inline Vi SetI(int32_t x) { Vi r; for (int i = 0; i < 16; ++i) r.v[i] = x; return r; }
inline Vi AndI(Vi a, Vi b) { for (int i = 0; i < 16; ++i) a.v[i] &= b.v[i]; return a; }
inline Vi OrI(Vi a, Vi b) { for (int i = 0; i < 16; ++i) a.v[i] |= b.v[i]; return a; }
inline Vi AddI(Vi a, Vi b) {
  for (int i = 0; i < 16; ++i) a.v[i] = static_cast<int32_t>(static_cast<uint32_t>(a.v[i]) + static_cast<uint32_t>(b.v[i]));
  return a;
}
// Logical shift right by n in [0, 31].
inline Vi SrlI(Vi a, int n) {
  for (int i = 0; i < 16; ++i) a.v[i] = static_cast<int32_t>(static_cast<uint32_t>(a.v[i]) >> n);
  return a;
}
// int32 -> fp32, round to nearest even (exact for |a| <= 2^24).
inline Vf ToFloatI(Vi a) { Vf r; for (int i = 0; i < 16; ++i) r.v[i] = static_cast<float>(a.v[i]); return r; }
// Ordered compares: false when either input is NaN.
inline Mask Less(Vf a, Vf b) { Mask m; for (int i = 0; i < 16; ++i) m.m[i] = a.v[i] < b.v[i]; return m; }
inline Mask Equal(Vf a, Vf b) { Mask m; for (int i = 0; i < 16; ++i) m.m[i] = a.v[i] == b.v[i]; return m; }

// A dense block of 16 rows of kN (1..16) elements of T (row r at p + r * kN) <-> kN vectors of
// 16 floats at cols (class-major): cols[16 * c + r] = element c of row r. Reads / writes exactly the block's 16 * kN elements;
// T is widened exactly / rounded to nearest even as LoadAs / StoreAs.
template <int kN, typename T>
__attribute__((always_inline)) inline void LoadRowsT(const T* p, float* cols) {
  for (int r = 0; r < 16; ++r)
    for (int c = 0; c < kN; ++c) cols[16 * c + r] = ToFloat(p[r * kN + c]);
}
template <int kN, typename T>
__attribute__((always_inline)) inline void StoreRowsT(T* p, const float* cols) {
  for (int r = 0; r < 16; ++r)
    for (int c = 0; c < kN; ++c) p[r * kN + c] = FromFloat<T>(cols[16 * c + r]);
}
// The same for a class count n >= 1 known only at run time.
template <typename T>
inline void LoadRowsN(const T* p, int n, float* cols) {
  for (int r = 0; r < 16; ++r)
    for (int c = 0; c < n; ++c) cols[16 * c + r] = ToFloat(p[r * n + c]);
}
template <typename T>
inline void StoreRowsN(T* p, int n, const float* cols) {
  for (int r = 0; r < 16; ++r)
    for (int c = 0; c < n; ++c) p[r * n + c] = FromFloat<T>(cols[16 * c + r]);
}
// StoreRowsT<2> "with non-temporal stores": plain stores in the portable build (as StoreStream).
template <typename T>
__attribute__((always_inline)) inline void StoreRows2Stream(T* p, const float* cols) { StoreRowsT<2>(p, cols); }

}  // namespace simd
}  // namespace ACLNN_ISA_NS
}  // namespace aclnn_portable
