// fp16 and bf16 storage types and their scalar conversions to and from fp32.
//
// Contracts (exhaustively tested in tests/numeric_test.cc):
//   HalfToFloat, Bf16ToFloat: exact for every input (subnormals, inf; NaN stays NaN, quieted).
//   FloatToHalf, FloatToBf16: round to nearest, ties to even, on every input; overflow gives
//   inf; NaN gives a quiet NaN that keeps the sign and the high payload bits. These are bit-for-
//   bit the results of F16C's VCVTPS2PH (RNE) and of the vector code in simd_*.h, so every ISA
//   writes the same bits. (Highway 1.0.3's bf16 demote truncates; we do not.)
#pragma once

#include <cstdint>
#include <cstring>

namespace aclnn_portable {

struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};
static_assert(sizeof(Half) == 2 && sizeof(BFloat16) == 2, "storage types are 16-bit");

inline uint32_t FloatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float BitsToFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

inline float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t em = h & 0x7fffu;
  if (em >= 0x7c00u) {  // inf or NaN (NaN quieted, payload kept)
    const uint32_t mant = (em & 0x3ffu) << 13;
    return BitsToFloat(sign | 0x7f800000u | mant | (mant ? 0x400000u : 0u));
  }
  if (em >= 0x0400u) return BitsToFloat(sign | ((em + ((127u - 15u) << 10)) << 13));
  // zero or subnormal: em * 2^-24, exact in fp32
  const float mag = static_cast<float>(em) * 5.9604644775390625e-08f;
  return BitsToFloat(sign | FloatBits(mag));
}

inline uint16_t FloatToHalf(float f) {
  uint32_t x = FloatBits(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  x &= 0x7fffffffu;
  if (x >= 0x7f800000u)  // inf or NaN
    return sign | (x > 0x7f800000u ? static_cast<uint16_t>(0x7e00u | ((x >> 13) & 0x3ffu)) : 0x7c00u);
  if (x >= 0x47800000u) return sign | 0x7c00u;  // >= 65536: inf (65520..65536 rounds up below)
  if (x < 0x38800000u) {
    // Below the smallest normal half (2^-14): adding 0.5 aligns the value so that the FPU's own
    // round-to-nearest-even produces the subnormal half in the low mantissa bits.
    const float magic = BitsToFloat(126u << 23);  // 0.5
    const uint32_t r = FloatBits(BitsToFloat(x) + magic) - (126u << 23);
    return sign | static_cast<uint16_t>(r);
  }
  const uint32_t odd = (x >> 13) & 1u;
  x += (static_cast<uint32_t>(15 - 127) << 23) + 0xfffu + odd;
  return sign | static_cast<uint16_t>(x >> 13);
}

inline float Bf16ToFloat(uint16_t b) { return BitsToFloat(static_cast<uint32_t>(b) << 16); }

inline uint16_t FloatToBf16(float f) {
  const uint32_t x = FloatBits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet NaN
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

inline float ToFloat(float v) { return v; }
inline float ToFloat(Half v) { return HalfToFloat(v.bits); }
inline float ToFloat(BFloat16 v) { return Bf16ToFloat(v.bits); }

template <typename T> T FromFloat(float f);
template <> inline float FromFloat<float>(float f) { return f; }
template <> inline Half FromFloat<Half>(float f) { return Half{FloatToHalf(f)}; }
template <> inline BFloat16 FromFloat<BFloat16>(float f) { return BFloat16{FloatToBf16(f)}; }

}  // namespace aclnn_portable
