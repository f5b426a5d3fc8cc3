// Helpers shared by the SoftmaxCrossEntropyWithLogits tests: host tensors with arbitrary views
// over sentinel-filled storage, an fp64 reference written independently of the library, and
// the tolerance rules of DESIGN §5.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_softmax_cross_entropy_with_logits.h"
#include "numeric/half.h"
#include "support/test_support.h"

namespace sce_test {

using aclnn_portable::BFloat16;
using aclnn_portable::Half;

inline size_t Es(aclDataType dt) { return dt == ACL_FLOAT ? 4 : 2; }

inline double ToD(aclDataType dt, const uint8_t* p) {
  if (dt == ACL_FLOAT) { float f; std::memcpy(&f, p, 4); return f; }
  uint16_t b; std::memcpy(&b, p, 2);
  return dt == ACL_FLOAT16 ? aclnn_portable::HalfToFloat(b) : aclnn_portable::Bf16ToFloat(b);
}
inline void FromD(aclDataType dt, double v, uint8_t* p) {
  const float f = static_cast<float>(v);
  if (dt == ACL_FLOAT) { std::memcpy(p, &f, 4); return; }
  const uint16_t b = dt == ACL_FLOAT16 ? aclnn_portable::FloatToHalf(f) : aclnn_portable::FloatToBf16(f);
  std::memcpy(p, &b, 2);
}

enum class Layout { kDense, kPadded, kTransposed };

// A tensor over its own storage; bytes outside the view hold a sentinel pattern.
struct HostTensor {
  aclDataType dt = ACL_FLOAT;
  std::vector<int64_t> dims, strides;
  int64_t offset = 0;
  std::vector<uint8_t> storage;
  aclTensor* handle = nullptr;

  HostTensor() = default;
  HostTensor(aclDataType d, std::vector<int64_t> shape, Layout layout = Layout::kDense,
             aclFormat fmt = ACL_FORMAT_ND)
      : dt(d), dims(std::move(shape)) {
    const size_t r = dims.size();
    strides.assign(r, 1);
    std::vector<size_t> order(r);  // innermost first
    for (size_t i = 0; i < r; ++i) order[i] = r - 1 - i;
    if (layout == Layout::kTransposed && r >= 2) std::swap(order[0], order[1]);
    int64_t s = 1;
    for (size_t k = 0; k < r; ++k) {
      strides[order[k]] = layout == Layout::kPadded ? s * 2 : s;  // gaps between elements
      s = strides[order[k]] * std::max<int64_t>(dims[order[k]], 1) + (layout == Layout::kPadded ? 3 : 0);
    }
    offset = layout == Layout::kDense ? 0 : 5;
    int64_t numel = 1, last = offset;
    for (size_t i = 0; i < r; ++i) { numel *= dims[i]; last += (dims[i] - 1) * strides[i]; }
    const int64_t extent = numel == 0 ? offset : last + 1 + (layout == Layout::kDense ? 0 : 4);
    storage.assign(static_cast<size_t>(extent) * Es(dt), 0xA5);
    const int64_t sd[1] = {extent};
    handle = aclCreateTensor(dims.data(), r, dt, strides.data(), offset, fmt, sd, 1,
                             extent == 0 ? nullptr : storage.data());
  }
  ~HostTensor() { if (handle) aclDestroyTensor(handle); }
  HostTensor(const HostTensor&) = delete;
  HostTensor& operator=(const HostTensor&) = delete;

  int64_t Numel() const { int64_t n = 1; for (int64_t d : dims) n *= d; return n; }
  // Storage offset of the row-major element i.
  int64_t Off(int64_t i) const {
    int64_t off = offset;
    for (size_t k = dims.size(); k-- > 0;) { off += (i % dims[k]) * strides[k]; i /= dims[k]; }
    return off;
  }
  double Get(int64_t i) const { return ToD(dt, storage.data() + Off(i) * Es(dt)); }
  void Set(int64_t i, double v) { FromD(dt, v, storage.data() + Off(i) * Es(dt)); }
  std::vector<double> Values() const {
    std::vector<double> v(Numel());
    for (int64_t i = 0; i < Numel(); ++i) v[i] = Get(i);
    return v;
  }
  // Bytes outside the view: must still be the sentinel.
  bool GapsUntouched() const {
    std::vector<uint8_t> in(storage.size(), 0);
    for (int64_t i = 0; i < Numel(); ++i)
      for (size_t b = 0; b < Es(dt); ++b) in[Off(i) * Es(dt) + b] = 1;
    for (size_t b = 0; b < storage.size(); ++b)
      if (!in[b] && storage[b] != 0xA5) return false;
    return true;
  }
};

// fp64 reference of one call: features [fN, fC] / labels [lN, lC] broadcast to [N, C] (ND), or
// NCHW dense index math; inputs are the values the tensors hold (already rounded).
struct Reference {
  std::vector<double> loss, bp, scale;  // scale: max(|softmax|, |y|) per backprop element
  std::vector<double> loss_scale;       // sum |y| * |L - z|
};

inline Reference ComputeReference(const std::vector<int64_t>& fdims, const std::vector<double>& x,
                                  const std::vector<int64_t>& ldims, const std::vector<double>& y,
                                  bool nchw) {
  Reference ref;
  int64_t N, C, HW = 1;
  std::vector<int64_t> fd = fdims, ld = ldims;
  if (nchw) { N = fd[0]; C = fd[1]; HW = fd[2] * fd[3]; }
  else { N = std::max(fd[0], ld[0]); C = std::max(fd[1], ld[1]); }
  auto xi = [&](int64_t n, int64_t c, int64_t p) {
    if (nchw) return x[(n * C + c) * HW + p];
    return x[(fd[0] == 1 ? 0 : n) * fd[1] + (fd[1] == 1 ? 0 : c)];
  };
  auto yi = [&](int64_t n, int64_t c, int64_t p) {
    if (nchw) return y[(n * C + c) * HW + p];
    return y[(ld[0] == 1 ? 0 : n) * ld[1] + (ld[1] == 1 ? 0 : c)];
  };
  ref.loss.assign(N * HW, 0);
  ref.loss_scale.assign(N * HW, 0);
  ref.bp.assign(N * C * HW, 0);
  ref.scale.assign(N * C * HW, 0);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t p = 0; p < HW; ++p) {
      double m = -std::numeric_limits<double>::infinity();
      for (int64_t c = 0; c < C; ++c) m = std::max(m, xi(n, c, p));
      double s = 0;
      for (int64_t c = 0; c < C; ++c) s += std::exp(xi(n, c, p) - m);
      const double L = std::log(s);
      double loss = 0, ls = 0;
      for (int64_t c = 0; c < C; ++c) {
        const double z = xi(n, c, p) - m, yy = yi(n, c, p), sm = std::exp(z) / s;
        loss += yy * (L - z);
        ls += std::fabs(yy) * (std::fabs(L) + std::fabs(z));
        const int64_t o = nchw ? (n * C + c) * HW + p : n * C + c;
        ref.bp[o] = sm - yy;
        ref.scale[o] = std::max(std::fabs(sm), std::fabs(yy));
      }
      ref.loss[n * HW + p] = loss;
      ref.loss_scale[n * HW + p] = ls;
    }
  return ref;
}

// Spacing of dt's representable numbers at v.
inline double UlpOf(aclDataType dt, double v) {
  const int mant = dt == ACL_FLOAT ? 23 : dt == ACL_FLOAT16 ? 10 : 7;
  const int min_exp = dt == ACL_FLOAT ? -126 : dt == ACL_FLOAT16 ? -14 : -126;
  int e = v == 0 ? min_exp : std::ilogb(v);
  if (e < min_exp) e = min_exp;
  return std::ldexp(1.0, e - mant);
}

// |got - ref| within: fp32, a few ulp of the scale; fp16/bf16, 1 ulp of the reference plus the
// fp32 computation's few ulp of the scale (which matters only under cancellation).
inline bool Close(aclDataType dt, double got, double ref, double scale, double rel32) {
  if (std::isnan(ref)) return std::isnan(got);
  if (std::isinf(ref)) return got == ref;
  uint8_t r[4];
  FromD(dt, ref, r);
  if (std::isinf(ToD(dt, r))) return std::isinf(got) && (got > 0) == (ref > 0);  // beyond dt's range
  const double tol32 = rel32 * scale + 1e-37;
  const double tol = dt == ACL_FLOAT ? tol32 : UlpOf(dt, ref) + tol32;
  return std::fabs(got - ref) <= tol;
}

}  // namespace sce_test
