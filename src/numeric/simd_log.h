// Vector natural log in fp32, built only from simd.h operations (lane-wise IEEE ops and exact
// bit manipulation), so it gives the same bits on every ISA.
#pragma once

#include "numeric/simd.h"

namespace aclnn_portable {
namespace ACLNN_ISA_NS {
namespace simd {

namespace log_detail {
// ln x for x = xs / 2^(bias - 127) with xs a positive normal float (see Log's method).
__attribute__((always_inline)) inline Vf Reduced(Vf xs, Vf bias) {
  const Vi b = AsBits(xs);
  Vf e = Sub(ToFloatI(SrlI(b, 23)), bias);
  Vf m = FromBits(OrI(AndI(b, SetI(0x007fffff)), SetI(0x3f800000)));  // [1, 2)
  const Mask big = Less(Set(1.41421356f), m);
  m = Select(big, Mul(m, Set(0.5f)), m);
  e = Select(big, Add(e, Set(1.0f)), e);
  const Vf f = Sub(m, Set(1.0f));  // exact (Sterbenz)
  const Vf z = Mul(f, f);
  Vf p = Set(7.0376836292e-2f);
  p = MulAdd(p, f, Set(-1.1514610310e-1f));
  p = MulAdd(p, f, Set(1.1676998740e-1f));
  p = MulAdd(p, f, Set(-1.2420140846e-1f));
  p = MulAdd(p, f, Set(1.4249322787e-1f));
  p = MulAdd(p, f, Set(-1.6668057665e-1f));
  p = MulAdd(p, f, Set(2.0000714765e-1f));
  p = MulAdd(p, f, Set(-2.4999993993e-1f));
  p = MulAdd(p, f, Set(3.3333331174e-1f));
  Vf y = Mul(Mul(f, z), p);
  y = MulAdd(e, Set(-2.12194440e-4f), y);
  y = MulAdd(z, Set(-0.5f), y);
  const Vf r = Add(f, y);
  return MulAdd(e, Set(0.693359375f), r);
}
}  // namespace log_detail

// Log(x) = ln x in fp32.
//   Accuracy (tests/numeric_test.cc, Simd.LogAccuracy): <= 2 ulp against the correctly rounded
//   result for every positive finite x, subnormals included; near x = 1 the error is relative to
//   the (small) result, because the reduced argument f = m - 1 is exact. Special values as
//   std::log: +0 / -0 -> -inf, x < 0 -> NaN, +inf -> +inf, NaN in -> the same NaN out.
//   Method: x = 2^e * m with m in [sqrt(1/2), sqrt(2)) (subnormals scaled by 2^23 first),
//   ln x = e * ln2 (split hi + lo) + log1p(f), f = m - 1, with Cephes' logf polynomial
//   log1p(f) = f - f^2 / 2 + f^3 P(f) (degree 8), evaluated with fused multiply-adds.
__attribute__((always_inline)) inline Vf Log(Vf x) {
  const Mask tiny = Less(x, Set(1.17549435e-38f));  // subnormal, zero or negative
  const Vf xs = Select(tiny, Mul(x, Set(8388608.0f)), x);
  Vf r = log_detail::Reduced(xs, Select(tiny, Set(150.0f), Set(127.0f)));
  r = Select(Less(x, Zero()), Set(__builtin_nanf("")), r);
  r = Select(Equal(x, Zero()), Set(-__builtin_inff()), r);
  r = Select(Equal(x, Set(__builtin_inff())), x, r);
  return Select(IsNaN(x), x, r);
}

// LogPositiveNormal(x) = Log(x), bit for bit, for positive normal finite x (2^-126 <= x <
// inf); about ten operations cheaper (no subnormal scaling, no special-value selects). Any other
// input (0, subnormal, negative, inf, NaN) gives an unspecified value, which may be finite: a
// caller must make such lanes NaN itself if it needs to. For sums of exp(x - max), which lie in
// [1, C] or are NaN.
__attribute__((always_inline)) inline Vf LogPositiveNormal(Vf x) { return log_detail::Reduced(x, Set(127.0f)); }

}  // namespace simd
}  // namespace ACLNN_ISA_NS
}  // namespace aclnn_portable
