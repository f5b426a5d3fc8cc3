#include <cstddef>
#include <cstdint>

#include "numeric/simd.h"

namespace aclnn_portable {
namespace ACLNN_ISA_NS {

void ProbeExp(const float* x, float* y, size_t n) {
  size_t i = 0;
  for (; i + simd::kLanes <= n; i += simd::kLanes) simd::Store(y + i, simd::Exp(simd::Load(x + i)));
  if (i < n) simd::StoreN(y + i, simd::Exp(simd::LoadN(x + i, static_cast<int>(n - i), 0.0f)), static_cast<int>(n - i));
}

void ProbeExpNonPositive(const float* x, float* y, size_t n) {
  size_t i = 0;
  for (; i + simd::kLanes <= n; i += simd::kLanes) simd::Store(y + i, simd::ExpNonPositive(simd::Load(x + i)));
  if (i < n) {
    const int r = static_cast<int>(n - i);
    simd::StoreN(y + i, simd::ExpNonPositive(simd::LoadN(x + i, r, 0.0f)), r);
  }
}

void ProbeToHalf(const float* x, uint16_t* y, size_t n) {
  size_t i = 0;
  for (; i + simd::kLanes <= n; i += simd::kLanes) simd::StoreHalfBits(y + i, simd::Load(x + i));
  if (i < n) simd::StoreHalfBitsN(y + i, simd::LoadN(x + i, static_cast<int>(n - i), 0.0f), static_cast<int>(n - i));
}

void ProbeToBf16(const float* x, uint16_t* y, size_t n) {
  size_t i = 0;
  for (; i + simd::kLanes <= n; i += simd::kLanes) simd::StoreBf16Bits(y + i, simd::Load(x + i));
  if (i < n) simd::StoreBf16BitsN(y + i, simd::LoadN(x + i, static_cast<int>(n - i), 0.0f), static_cast<int>(n - i));
}

}  // namespace ACLNN_ISA_NS
}  // namespace aclnn_portable
