// mhc sample: mhc_post (1 stream -> N), then mhc_pre (N -> 1), then the backward of post, on a
// small shape in fp32 and bf16, each checked against a plain loop. Exits non-zero on mismatch.
//
// Build and run (from the build tree): ./examples/mhc_sample
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "acl/acl.h"
#include "mhc/mhc.h"

namespace {

// bf16 storage: the high 16 bits of an fp32, rounded to nearest even.
uint16_t ToBf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}
float FromBf16(uint16_t b) {
  const uint32_t x = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

bool CheckMessage(const char* what) {
  const char* msg = aclGetRecentErrMsg();
  if (msg != nullptr && msg[0] != '\0') {
    std::printf("%s failed: %s\n", what, msg);
    return false;
  }
  return true;
}

uint8_t* Bytes(void* p) { return static_cast<uint8_t*>(p); }

}  // namespace

int main() {
  const int64_t B = 2, S = 3, D = 5, N = 4, E = S * D;
  std::vector<float> x(B * E), h(N), grad_out(B * N * E);
  for (int64_t i = 0; i < B * E; ++i) x[i] = 0.25f * static_cast<float>(i % 11) - 1.0f;
  for (int64_t s = 0; s < N; ++s) h[s] = 0.1f * static_cast<float>(s + 1);
  for (int64_t i = 0; i < B * N * E; ++i) grad_out[i] = 0.5f - 0.125f * static_cast<float>(i % 9);
  int failures = 0;

  // ---- fp32 ------------------------------------------------------------------------------
  std::vector<float> post(B * N * E), pre(B * E), grad_x(B * E), grad_h(N);
  mhc_post_do_fp32(0, nullptr, Bytes(x.data()), Bytes(h.data()), Bytes(post.data()), B, S, D, N);
  failures += !CheckMessage("mhc_post_do_fp32");
  mhc_pre_do_fp32(0, nullptr, Bytes(post.data()), Bytes(h.data()), Bytes(pre.data()), B, S, D, N);
  failures += !CheckMessage("mhc_pre_do_fp32");
  mhc_post_backward_do_fp32(0, nullptr, Bytes(grad_out.data()), Bytes(x.data()), Bytes(h.data()),
                            Bytes(grad_x.data()), Bytes(grad_h.data()), B, S, D, N);
  failures += !CheckMessage("mhc_post_backward_do_fp32");

  // Plain loops: post is exact; pre and backward are compared with a relative tolerance.
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 0; s < N; ++s)
      for (int64_t e = 0; e < E; ++e)
        if (post[(b * N + s) * E + e] != x[b * E + e] * h[s]) ++failures;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t e = 0; e < E; ++e) {
      double want_pre = 0, want_gx = 0;
      for (int64_t s = 0; s < N; ++s) {
        want_pre += static_cast<double>(post[(b * N + s) * E + e]) * h[s];
        want_gx += static_cast<double>(grad_out[(b * N + s) * E + e]) * h[s];
      }
      if (std::fabs(pre[b * E + e] - want_pre) > 1e-6 * (1 + std::fabs(want_pre))) ++failures;
      if (std::fabs(grad_x[b * E + e] - want_gx) > 1e-6 * (1 + std::fabs(want_gx))) ++failures;
    }
  for (int64_t s = 0; s < N; ++s) {
    double want = 0;
    for (int64_t b = 0; b < B; ++b)
      for (int64_t e = 0; e < E; ++e) want += static_cast<double>(grad_out[(b * N + s) * E + e]) * x[b * E + e];
    if (std::fabs(grad_h[s] - want) > 1e-5 * (1 + std::fabs(want))) ++failures;
  }
  std::printf("fp32  x[0][0][:5]      = %8.4f %8.4f %8.4f %8.4f %8.4f\n", x[0], x[1], x[2], x[3], x[4]);
  std::printf("fp32  h                = %8.4f %8.4f %8.4f %8.4f\n", h[0], h[1], h[2], h[3]);
  std::printf("fp32  post[s=3][0][:5] = %8.4f %8.4f %8.4f %8.4f %8.4f\n", post[3 * E], post[3 * E + 1],
              post[3 * E + 2], post[3 * E + 3], post[3 * E + 4]);
  std::printf("fp32  pre[0][0][:5]    = %8.4f %8.4f %8.4f %8.4f %8.4f  (= x * sum h^2 = x * 0.3)\n", pre[0], pre[1],
              pre[2], pre[3], pre[4]);
  std::printf("fp32  grad_h           = %8.4f %8.4f %8.4f %8.4f\n", grad_h[0], grad_h[1], grad_h[2], grad_h[3]);

  // ---- bf16 (activations bf16, weights fp32) -----------------------------------------------
  std::vector<uint16_t> xb(B * E), postb(B * N * E), preb(B * E), gob(B * N * E), gxb(B * E);
  for (int64_t i = 0; i < B * E; ++i) xb[i] = ToBf16(x[i]);
  for (int64_t i = 0; i < B * N * E; ++i) gob[i] = ToBf16(grad_out[i]);
  std::vector<float> ghb(N);
  mhc_post_do_bf16(0, nullptr, Bytes(xb.data()), Bytes(h.data()), Bytes(postb.data()), B, S, D, N);
  failures += !CheckMessage("mhc_post_do_bf16");
  mhc_pre_do_bf16(0, nullptr, Bytes(postb.data()), Bytes(h.data()), Bytes(preb.data()), B, S, D, N);
  failures += !CheckMessage("mhc_pre_do_bf16");
  mhc_post_backward_do_bf16(0, nullptr, Bytes(gob.data()), Bytes(xb.data()), Bytes(h.data()), Bytes(gxb.data()),
                            Bytes(ghb.data()), B, S, D, N);
  failures += !CheckMessage("mhc_post_backward_do_bf16");
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 0; s < N; ++s)
      for (int64_t e = 0; e < E; ++e)
        if (postb[(b * N + s) * E + e] != ToBf16(FromBf16(xb[b * E + e]) * h[s])) ++failures;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t e = 0; e < E; ++e) {
      double want = 0;
      for (int64_t s = 0; s < N; ++s) want += static_cast<double>(FromBf16(postb[(b * N + s) * E + e])) * h[s];
      // fp32 accumulation, one bf16 rounding (relative 2^-8) at the end.
      if (std::fabs(FromBf16(preb[b * E + e]) - want) > 0x1p-8 * std::fabs(want) + 1e-6) ++failures;
    }
  for (int64_t s = 0; s < N; ++s) {
    double want = 0;
    for (int64_t b = 0; b < B; ++b)
      for (int64_t e = 0; e < E; ++e)
        want += static_cast<double>(FromBf16(gob[(b * N + s) * E + e])) * FromBf16(xb[b * E + e]);
    if (std::fabs(ghb[s] - want) > 1e-5 * (1 + std::fabs(want))) ++failures;
  }
  std::printf("bf16  post[s=3][0][:5] = %8.4f %8.4f %8.4f %8.4f %8.4f\n", FromBf16(postb[3 * E]),
              FromBf16(postb[3 * E + 1]), FromBf16(postb[3 * E + 2]), FromBf16(postb[3 * E + 3]),
              FromBf16(postb[3 * E + 4]));
  std::printf("bf16  grad_h           = %8.4f %8.4f %8.4f %8.4f\n", ghb[0], ghb[1], ghb[2], ghb[3]);

  std::printf(failures == 0 ? "mhc_sample: all results match the plain loops\n"
                            : "mhc_sample: %d mismatches\n", failures);
  return failures == 0 ? 0 : 1;
}
