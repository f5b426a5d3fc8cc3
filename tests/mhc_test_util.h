// Helpers shared by the mhc_*_test binaries: typed host buffers with guard bytes, the three
// dtype families of entry points, and references written independently of the kernels (plain
// scalar loops, std::fma chains, fp64 sums).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "mhc/mhc.h"
#include "numeric/half.h"
#include "support/test_support.h"

namespace mhc_test {

using aclnn_portable::BitsToFloat;
using aclnn_portable::Bf16ToFloat;
using aclnn_portable::FloatBits;
using aclnn_portable::FloatToBf16;
using aclnn_portable::FloatToHalf;
using aclnn_portable::HalfToFloat;

enum class Dt { kFp32, kFp16, kBf16 };

using ForwardFn = void (*)(uint32_t, void*, uint8_t*, uint8_t*, uint8_t*, int64_t, int64_t, int64_t, int64_t);
using BackwardFn = void (*)(uint32_t, void*, uint8_t*, uint8_t*, uint8_t*, uint8_t*, uint8_t*, int64_t, int64_t,
                            int64_t, int64_t);

struct DtypeCase {
  const char* name;
  Dt dt;
  size_t elem;   // activation bytes
  size_t hElem;  // weight bytes
  ForwardFn post, pre;
  BackwardFn backward;
};

inline const std::vector<DtypeCase>& AllDtypes() {
  static const std::vector<DtypeCase> cases = {
      {"fp32", Dt::kFp32, 4, 4, mhc_post_do_fp32, mhc_pre_do_fp32, mhc_post_backward_do_fp32},
      {"fp16", Dt::kFp16, 2, 2, mhc_post_do_fp16, mhc_pre_do_fp16, mhc_post_backward_do_fp16},
      {"bf16", Dt::kBf16, 2, 4, mhc_post_do_bf16, mhc_pre_do_bf16, mhc_post_backward_do_bf16},
  };
  return cases;
}

constexpr uint8_t kSentinel = 0xA5;
constexpr size_t kGuardBytes = 64;

// Bytes [offset, offset + size) are the payload; everything around it is a sentinel guard.
class GuardedBuffer {
 public:
  explicit GuardedBuffer(size_t size, size_t offset = 0)
      : data_(offset + size + kGuardBytes, kSentinel), offset_(offset), size_(size) {}
  uint8_t* ptr() { return data_.data() + offset_; }
  const uint8_t* ptr() const { return data_.data() + offset_; }
  size_t size() const { return size_; }
  bool GuardsIntact() const {
    for (size_t i = 0; i < offset_; ++i)
      if (data_[i] != kSentinel) return false;
    for (size_t i = offset_ + size_; i < data_.size(); ++i)
      if (data_[i] != kSentinel) return false;
    return true;
  }
  bool Untouched() const {
    for (uint8_t b : data_)
      if (b != kSentinel) return false;
    return true;
  }

 private:
  std::vector<uint8_t> data_;
  size_t offset_, size_;
};

// Value i of a buffer of activations (dt) or of weights (h of dt).
inline double GetValue(Dt dt, bool weight, const uint8_t* p, size_t i) {
  if (dt == Dt::kFp32 || (dt == Dt::kBf16 && weight)) {
    float f;
    std::memcpy(&f, p + 4 * i, 4);
    return f;
  }
  uint16_t b;
  std::memcpy(&b, p + 2 * i, 2);
  return dt == Dt::kFp16 ? HalfToFloat(b) : Bf16ToFloat(b);
}

// Stores the float v rounded to the storage type.
inline void SetValue(Dt dt, bool weight, uint8_t* p, size_t i, float v) {
  if (dt == Dt::kFp32 || (dt == Dt::kBf16 && weight)) {
    std::memcpy(p + 4 * i, &v, 4);
    return;
  }
  const uint16_t b = dt == Dt::kFp16 ? FloatToHalf(v) : FloatToBf16(v);
  std::memcpy(p + 2 * i, &b, 2);
}

inline void FillRandom(Dt dt, bool weight, uint8_t* p, size_t n, aclnn_test::Rng& rng, double lo, double hi) {
  for (size_t i = 0; i < n; ++i) SetValue(dt, weight, p, i, static_cast<float>(rng.Uniform(lo, hi)));
}

// The contract of post: fp32 one multiply; fp16 the correctly rounded product (the product of
// two halves is exact in double and in float); bf16 bf16_rne(float(x) * h).
inline void ExpectedPost(Dt dt, const uint8_t* x, size_t xi, const uint8_t* h, size_t s, uint8_t* out, size_t oi) {
  const float xv = static_cast<float>(GetValue(dt, false, x, xi));
  const float hv = static_cast<float>(GetValue(dt, true, h, s));
  if (dt == Dt::kFp16) {
    const double exact = static_cast<double>(xv) * static_cast<double>(hv);
    if (std::isnan(exact)) {
      SetValue(dt, false, out, oi, xv * hv);  // NaN: whatever payload the fp32 multiply keeps
      return;
    }
    EXPECT_EQ(static_cast<double>(static_cast<float>(exact)), exact);
    SetValue(dt, false, out, oi, static_cast<float>(exact));
  } else {
    SetValue(dt, false, out, oi, xv * hv);
  }
}

// The documented accumulation of pre / grad_input: acc = +0, then acc = fma(x_s, h_s, acc) for
// s = 0..N-1, rounded once to the storage type.
inline float FmaChain(Dt dt, const uint8_t* x, size_t first, size_t stride, const uint8_t* h, int64_t n) {
  float acc = 0.0f;
  for (int64_t s = 0; s < n; ++s)
    acc = std::fma(static_cast<float>(GetValue(dt, false, x, first + s * stride)),
                   static_cast<float>(GetValue(dt, true, h, s)), acc);
  return acc;
}

inline double UnitRoundoff(Dt dt) {
  return dt == Dt::kFp32 ? 0x1p-24 : (dt == Dt::kFp16 ? 0x1p-11 : 0x1p-8);
}

// Checks out[b] (pre, or grad_input) against the fma chain (bit-exact) and against fp64.
inline void CheckReduced(Dt dt, const uint8_t* x, const uint8_t* h, const uint8_t* out, int64_t B, int64_t E,
                         int64_t N, const std::string& what) {
  int reported = 0;
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t e = 0; e < E; ++e) {
      const size_t first = static_cast<size_t>(b * N * E + e);
      const float chain = FmaChain(dt, x, first, static_cast<size_t>(E), h, N);
      uint8_t want[4];
      SetValue(dt, false, want, 0, chain);
      const size_t oi = static_cast<size_t>(b * E + e);
      const double got = GetValue(dt, false, out, oi);
      double ref = 0, mag = 0;
      for (int64_t s = 0; s < N; ++s) {
        const double t = GetValue(dt, false, x, first + s * E) * GetValue(dt, true, h, s);
        ref += t;
        mag += std::fabs(t);
      }
      const double tol = (N + 1) * 0x1p-24 * mag + UnitRoundoff(dt) * std::fabs(ref) + 1e-30 + (dt == Dt::kFp16 ? 0x1p-25 : 0);
      const double wantv = GetValue(dt, false, want, 0);
      const bool bitsOk = std::memcmp(&wantv, &got, sizeof(double)) == 0 || (std::isnan(wantv) && std::isnan(got));
      if ((!bitsOk || std::fabs(got - ref) > tol) && reported++ < 5)
        ADD_FAILURE() << what << " at b=" << b << " e=" << e << ": got " << got << ", fma chain " << wantv
                      << ", fp64 " << ref << " (tol " << tol << ")";
    }
  }
}

// grad_h[s] = sum_{b,e} grad_out[b*N+s, e] * x[b, e] in fp64, and the sum of |terms|.
inline void ReferenceGradH(Dt dt, const uint8_t* go, const uint8_t* x, int64_t B, int64_t E, int64_t N,
                           std::vector<double>* ref, std::vector<double>* mag) {
  ref->assign(N, 0.0);
  mag->assign(N, 0.0);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 0; s < N; ++s)
      for (int64_t e = 0; e < E; ++e) {
        const double t = GetValue(dt, false, go, (b * N + s) * E + e) * GetValue(dt, false, x, b * E + e);
        (*ref)[s] += t;
        (*mag)[s] += std::fabs(t);
      }
}

inline std::string RecentMessage() {
  const char* m = aclGetRecentErrMsg();
  return m ? m : "";
}

}  // namespace mhc_test
