// grad_h over a reduction of 10^8 elements (bf16 activations, so the buffers stay at 600 MB):
// against an fp64 reference within 1e-6 relative, and identical for 1 and 2 threads.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "mhc_test_util.h"

using namespace mhc_test;

TEST(MhcLarge, GradHOverHundredMillionElements) {
  const int64_t B = 2, S = 5000, D = 10000, N = 1, E = S * D;  // B * E = 10^8 terms per stream
  std::vector<uint16_t> go(B * N * E), x(B * E), gi(B * E);
  float h = 0.75f;
  // Positive, well-conditioned terms, so the relative error is the accumulation's own.
  aclnn_test::Rng rng(2024);
  for (auto& v : go) v = FloatToBf16(0.5f + static_cast<float>(rng.Next() >> 40) * 0x1p-24f);
  for (auto& v : x) v = FloatToBf16(0.5f + static_cast<float>(rng.Next() >> 40) * 0x1p-24f);
  double ref = 0;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t e = 0; e < E; ++e)
      ref += static_cast<double>(Bf16ToFloat(go[b * E + e])) * Bf16ToFloat(x[b * E + e]);
  uint32_t bits[2] = {0, 0};
  for (int threads : {1, 2}) {
    aclnn_test::ScopedThreads scoped(threads);
    float gh = -1;
    mhc_post_backward_do_bf16(0, nullptr, reinterpret_cast<uint8_t*>(go.data()), reinterpret_cast<uint8_t*>(x.data()),
                              reinterpret_cast<uint8_t*>(&h), reinterpret_cast<uint8_t*>(gi.data()),
                              reinterpret_cast<uint8_t*>(&gh), B, S, D, N);
    ASSERT_EQ(RecentMessage(), "");
    EXPECT_NEAR(gh, ref, 1e-6 * ref) << "threads=" << threads;
    std::printf("grad_h = %.9g, fp64 = %.17g, relative error %.3g\n", gh, ref, std::fabs(gh - ref) / ref);
    bits[threads - 1] = FloatBits(gh);
    // Spot-check grad_input = bf16(go * h) (one term, N = 1).
    for (int64_t i = 0; i < B * E; i += 9999991)
      EXPECT_EQ(gi[i], FloatToBf16(std::fma(Bf16ToFloat(go[i]), h, 0.0f))) << i;
  }
  EXPECT_EQ(bits[0], bits[1]);
}
