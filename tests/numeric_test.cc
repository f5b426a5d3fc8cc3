// fp16/bf16 conversions (exhaustive over 16-bit inputs, sampled over fp32) and the vector Exp
// contract, on every ISA the CPU supports.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include <sys/mman.h>
#include <unistd.h>

#include "numeric/half.h"
#include "numeric/numeric_probe.h"
#include "support/test_support.h"

using namespace aclnn_portable;

TEST(Half, RoundTripsEveryHalf) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = HalfToFloat(static_cast<uint16_t>(h));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(HalfToFloat(FloatToHalf(f))));
      continue;
    }
    EXPECT_EQ(FloatToHalf(f), h) << h;
  }
}

TEST(Half, RoundsToNearestEven) {
  // Exact midpoints between consecutive halves go to the even one; others to the nearest.
  for (uint32_t h = 0; h < 0x7bff; ++h) {
    const double a = HalfToFloat(static_cast<uint16_t>(h)), b = HalfToFloat(static_cast<uint16_t>(h + 1));
    const float mid = static_cast<float>((a + b) / 2);  // exact in fp32
    EXPECT_EQ(FloatToHalf(mid), (h & 1) ? h + 1 : h) << h;
    const float above = std::nextafter(mid, 1e9f), below = std::nextafter(mid, -1e9f);
    EXPECT_EQ(FloatToHalf(above), h + 1) << h;
    EXPECT_EQ(FloatToHalf(below), h) << h;
  }
  EXPECT_EQ(FloatToHalf(65520.0f), 0x7c00);
  EXPECT_EQ(FloatToHalf(65519.99f), 0x7bff);
  EXPECT_EQ(FloatToHalf(-INFINITY), 0xfc00);
}

TEST(Bf16, RoundsToNearestEven) {
  for (uint32_t b = 0; b < 0x7f7f; ++b) {
    const uint32_t lo = b << 16;
    EXPECT_EQ(FloatToBf16(BitsToFloat(lo)), b);
    EXPECT_EQ(FloatToBf16(BitsToFloat(lo | 0x8000u)), (b & 1) ? b + 1 : b);  // tie
    EXPECT_EQ(FloatToBf16(BitsToFloat(lo | 0x8001u)), b + 1);
    EXPECT_EQ(FloatToBf16(BitsToFloat(lo | 0x7fffu)), b);
  }
  EXPECT_EQ(FloatToBf16(BitsToFloat(0x7f7fffffu)), 0x7f80);  // FLT_MAX rounds to inf
  EXPECT_TRUE(std::isnan(Bf16ToFloat(FloatToBf16(NAN))));
}

// The vector fp32 -> bf16 rounding of every ISA and store (avx512bf16: vcvtneps2bf16 /
// vcvtne2ps2bf16, with the integer path for vectors holding a subnormal) gives FloatToBf16's
// bits for every upper half-word with the lower half-words that decide the rounding: exact, just
// below / at / above the tie, and all ones. In order, so most vectors are all-normal and those of
// the subnormal ranges are not; then shuffled, so subnormals, NaNs and normals share vectors.
TEST(Simd, Bf16RoundingOfEveryUpperHalf) {
  std::vector<float> in;
  for (uint32_t hi = 0; hi < 65536; ++hi)
    for (uint32_t lo : {0x0000u, 0x0001u, 0x7fffu, 0x8000u, 0x8001u, 0xffffu}) in.push_back(BitsToFloat(hi << 16 | lo));
  std::vector<float> shuffled = in;
  aclnn_test::Rng rng(11);
  for (size_t i = shuffled.size() - 1; i > 0; --i) std::swap(shuffled[i], shuffled[rng.Next() % (i + 1)]);
  for (const std::vector<float>* v : {&in, &shuffled})
    for (Isa isa : aclnn_test::SupportedIsas())
      for (Bf16Store way : {Bf16Store::kSingle, Bf16Store::kPair, Bf16Store::kRows, Bf16Store::kRows2,
                            Bf16Store::kRows2Stream, Bf16Store::kMhcDeint}) {
        std::vector<uint16_t> storage(v->size() + 32);
        uint16_t* b = storage.data() + (64 - reinterpret_cast<uintptr_t>(storage.data()) % 64) % 64 / 2;  // 64-byte aligned
        ProbeToBf16(isa, v->data(), b, v->size(), way);
        size_t bad = 0;
        for (size_t i = 0; i < v->size(); ++i) {
          size_t src = i;  // kRows: output i = 256 blk + 16 r + c holds input 256 blk + 16 c + r
          if (way == Bf16Store::kRows && i < v->size() / 256 * 256) src = i / 256 * 256 + i % 16 * 16 + i % 256 / 16;
          if (way == Bf16Store::kRows2 || way == Bf16Store::kRows2Stream)  // 32 blk + 2 r + c <- 32 blk + 16 c + r
            src = i / 32 * 32 + i % 2 * 16 + i % 32 / 2;
          if (b[i] != FloatToBf16((*v)[src]) && bad++ < 5)
            ADD_FAILURE() << IsaName(isa) << " way " << static_cast<int>(way) << " bits 0x" << std::hex
                          << FloatBits((*v)[src]) << " gave 0x" << b[i] << " want 0x" << FloatToBf16((*v)[src]);
        }
        EXPECT_EQ(bad, 0u) << IsaName(isa) << " way " << static_cast<int>(way);
      }
}

// The vector conversions and Exp of every ISA give the scalar bits.
TEST(Simd, ConversionsAndExpAgreeAcrossIsas) {
  std::vector<float> in;
  aclnn_test::Rng rng(7);
  for (int i = 0; i < 20000; ++i) in.push_back(static_cast<float>(rng.Uniform(-120, 90)));
  for (float s : {0.0f, -0.0f, 1e-40f, -1e-40f, 65504.0f, 65520.0f, 1e30f, -1e30f, INFINITY, -INFINITY, NAN})
    in.push_back(s);
  for (uint32_t h = 0; h < 65536; h += 7) in.push_back(BitsToFloat(h << 16 | 0x8000u));
  const size_t n = in.size();
  std::vector<uint32_t> ref_exp, ref_h, ref_b;
  for (Isa isa : aclnn_test::SupportedIsas()) {
    std::vector<float> e(n);
    std::vector<uint16_t> h(n), b(n);
    ProbeExp(isa, in.data(), e.data(), n);
    ProbeToHalf(isa, in.data(), h.data(), n);
    ProbeToBf16(isa, in.data(), b.data(), n);
    for (size_t i = 0; i < n; ++i) {
      EXPECT_EQ(h[i], FloatToHalf(in[i])) << IsaName(isa) << " " << in[i];
      EXPECT_EQ(b[i], FloatToBf16(in[i])) << IsaName(isa) << " " << in[i];
    }
    std::vector<uint32_t> bits(n);
    std::memcpy(bits.data(), e.data(), 4 * n);
    if (ref_exp.empty()) ref_exp = bits;
    EXPECT_EQ(bits, ref_exp) << IsaName(isa) << " Exp differs from " << IsaName(aclnn_test::SupportedIsas()[0]);
  }
}

TEST(Simd, ExpAccuracyWithinTwoUlp) {
  const int kSamples = 2000000;
  int worst = 0;
  for (Isa isa : aclnn_test::SupportedIsas()) {
    std::vector<float> x(kSamples), e(kSamples);
    for (int i = 0; i < kSamples; ++i) x[i] = -87.3f + (87.3f + 88.7f) * (static_cast<float>(i) / kSamples);
    ProbeExp(isa, x.data(), e.data(), kSamples);
    for (int i = 0; i < kSamples; ++i) {
      const float ref = static_cast<float>(std::exp(static_cast<double>(x[i])));
      const int ulp = std::abs(static_cast<int>(FloatBits(e[i])) - static_cast<int>(FloatBits(ref)));
      worst = std::max(worst, ulp);
      ASSERT_LE(ulp, 2) << IsaName(isa) << " x=" << x[i];
    }
    // subnormal range: within one subnormal step; far below: zero
    for (float v : {-88.0f, -95.0f, -100.0f, -103.0f}) {
      float out;
      ProbeExp(isa, &v, &out, 1);
      EXPECT_NEAR(out, std::exp(static_cast<double>(v)), 1.5e-45) << v;
    }
    float lo[3] = {-104.0f, -1000.0f, -INFINITY}, out[3];
    ProbeExp(isa, lo, out, 3);
    for (float o : out) EXPECT_EQ(o, 0.0f);
  }
  RecordProperty("worst_ulp", worst);
}

// ExpNonPositive is Exp bit for bit on x <= 0, on every ISA; NaN stays NaN. Exp's two scaling
// branches (every result normal / some subnormal) agree on the normal lanes: a vector of normal
// results computed alone and next to a lane that forces the subnormal branch.
TEST(Simd, ExpNonPositiveIsExpOnNonPositiveInputsAndBranchesAgree) {
  const int kSamples = 1 << 20;
  std::vector<float> x(kSamples);
  for (int i = 0; i < kSamples; ++i) x[i] = -110.0f * static_cast<float>(i) / kSamples;
  x[5] = -INFINITY;
  x[6] = -0.0f;
  x[7] = -1e-30f;
  for (Isa isa : aclnn_test::SupportedIsas()) {
    std::vector<float> a(kSamples), b(kSamples);
    ProbeExp(isa, x.data(), a.data(), kSamples);
    ProbeExpNonPositive(isa, x.data(), b.data(), kSamples);
    for (int i = 0; i < kSamples; ++i) ASSERT_EQ(FloatBits(a[i]), FloatBits(b[i])) << IsaName(isa) << " x=" << x[i];
    float nan_in[16], nan_out[16];
    for (int i = 0; i < 16; ++i) nan_in[i] = i == 3 ? NAN : -1.0f;
    ProbeExpNonPositive(isa, nan_in, nan_out, 16);
    EXPECT_TRUE(std::isnan(nan_out[3])) << IsaName(isa);
    float m1 = -1.0f, e1 = 0.0f;
    ProbeExp(isa, &m1, &e1, 1);
    EXPECT_EQ(FloatBits(nan_out[0]), FloatBits(e1)) << "a NaN lane leaves the others alone";
    aclnn_test::Rng rng(4);
    for (int trial = 0; trial < 1000; ++trial) {
      float v[16], alone[16], mixed_in[16], mixed[16];
      for (int i = 0; i < 16; ++i) v[i] = static_cast<float>(rng.Uniform(-86.0, 88.0));
      std::copy(v, v + 16, mixed_in);
      const int lane = trial % 16;
      mixed_in[lane] = -100.0f;  // a subnormal result: the two-factor branch
      ProbeExp(isa, v, alone, 16);
      ProbeExp(isa, mixed_in, mixed, 16);
      for (int i = 0; i < 16; ++i)
        if (i != lane) {
          ASSERT_EQ(FloatBits(alone[i]), FloatBits(mixed[i])) << IsaName(isa) << " x=" << v[i];
        }
    }
  }
}

// ExpNormalRange (no clamp, no subnormal check) is ExpNonPositive bit for bit on its whole range
// [kExpNormalRangeMin, 0] = [-86.5, 0]: every float there, on every ISA, plus -0 and NaN
// (NaN in, NaN out). InExpNormalRange accepts x - ref >= -86.5 in every lane and nothing else:
// not one float below, not -inf, not NaN.
TEST(Simd, ExpNormalRangeIsExpNonPositiveOnEveryFloatOfItsRange) {
  const uint32_t lo = FloatBits(-86.5f), hi = FloatBits(-0.0f);  // negative floats: bits fall as values rise
  const size_t kBlock = 1 << 20;
  std::vector<float> x(kBlock), a(kBlock), b(kBlock);
  for (Isa isa : aclnn_test::SupportedIsas()) {
    // The portable build is ~50x slower per value: every 61st float there (a prime stride).
    const uint32_t step = isa == Isa::kScalar ? 61 : 1;
    for (uint64_t start = hi; start <= lo; start += uint64_t{kBlock} * step) {
      size_t n = 0;
      for (uint64_t bits = start; bits <= lo && n < kBlock; bits += step) x[n++] = BitsToFloat(static_cast<uint32_t>(bits));
      ProbeExpNonPositive(isa, x.data(), a.data(), n);
      ProbeExpNormalRange(isa, x.data(), b.data(), n);
      for (size_t i = 0; i < n; ++i)
        if (FloatBits(a[i]) != FloatBits(b[i]))
          FAIL() << IsaName(isa) << " x=" << x[i] << " ExpNonPositive " << a[i] << " ExpNormalRange " << b[i];
    }
    float nan_in[16], nan_out[16];
    for (int i = 0; i < 16; ++i) nan_in[i] = i == 5 ? NAN : -2.0f;
    ProbeExpNormalRange(isa, nan_in, nan_out, 16);
    EXPECT_TRUE(std::isnan(nan_out[5])) << IsaName(isa);

    float v[16];
    auto inRange = [&](float lane7, float ref) {
      for (int i = 0; i < 16; ++i) v[i] = ref - 1.0f;
      v[7] = lane7;
      return ProbeInExpNormalRange(isa, v, ref);
    };
    EXPECT_TRUE(inRange(-86.5f, 0.0f)) << IsaName(isa);
    EXPECT_FALSE(inRange(std::nextafter(-86.5f, -1e9f), 0.0f)) << IsaName(isa);
    EXPECT_TRUE(inRange(-76.5f, 10.0f)) << IsaName(isa);
    EXPECT_FALSE(inRange(-77.0f, 10.0f)) << IsaName(isa);
    EXPECT_FALSE(inRange(-INFINITY, 0.0f)) << IsaName(isa);
    EXPECT_FALSE(inRange(NAN, 0.0f)) << IsaName(isa);
    EXPECT_FALSE(inRange(1.0f, INFINITY)) << IsaName(isa);
    EXPECT_FALSE(inRange(-INFINITY, -INFINITY)) << IsaName(isa);
  }
}

// SplitAdd: k += round(e), t += e - round(e) per lane (0.5 rounds to 0), for e in [0, 1]: the
// same sums as that written out in fp32 here, on every ISA (AVX-512 forms it with masks), around
// the 0.5 tie and at the ends; a NaN e makes t NaN.
TEST(Simd, SplitAddIsTheRoundSplitOnEveryIsa) {
  const size_t kVectors = 4096;
  std::vector<float> e(16 * kVectors);
  aclnn_test::Rng rng(12);
  const float special[] = {0.0f, 1.0f, 0.5f, std::nextafter(0.5f, 1.0f), std::nextafter(0.5f, 0.0f),
                           std::nextafter(1.0f, 0.0f), 1e-30f, 1e-45f};
  for (size_t i = 0; i < e.size(); ++i)
    e[i] = i % 5 == 0 ? special[(i / 5) % 8] : static_cast<float>(rng.Uniform(0.0, 1.0));
  float wantK[16] = {}, wantT[16] = {};
  for (size_t i = 0; i < e.size(); ++i) {
    const float r = std::nearbyint(e[i]);
    wantK[i % 16] += r;
    wantT[i % 16] += e[i] - r;
  }
  for (Isa isa : aclnn_test::SupportedIsas()) {
    float k[16], t[16];
    ProbeSplitAdd(isa, e.data(), kVectors, k, t);
    for (int l = 0; l < 16; ++l) {
      EXPECT_EQ(FloatBits(k[l]), FloatBits(wantK[l])) << IsaName(isa) << " lane " << l;
      EXPECT_EQ(FloatBits(t[l]), FloatBits(wantT[l])) << IsaName(isa) << " lane " << l;
    }
    float en[16];
    for (int l = 0; l < 16; ++l) en[l] = l == 9 ? NAN : 0.75f;
    ProbeSplitAdd(isa, en, 1, k, t);
    EXPECT_TRUE(std::isnan(t[9])) << IsaName(isa);
    EXPECT_EQ(k[0], 1.0f);
    EXPECT_EQ(t[0], -0.25f);
  }
}

// The scale by 2^n is one instruction on AVX-512 (vscalefps) for normal results; elsewhere an
// exponent-field add; for subnormal results a fused multiply-add onto the subnormal grid (AVX2,
// AVX-512) or two multiplies (scalar): the same bits where results are subnormal (one rounding)
// and for NaN inputs of ExpNonPositive (the NaN the arithmetic gives). Every float in
// [-104, -87] whose result is subnormal or near it, at a step of 2^-10, plus NaNs of either
// sign and payload.
TEST(Simd, ExpSubnormalResultsAndNaNsAreTheSameBitsOnEveryIsa) {
  std::vector<float> x;
  for (float v = -104.0f; v <= -87.0f; v += 1.0f / 1024) x.push_back(v);
  for (uint32_t bits : {0x7fc00000u, 0xffc00000u, 0x7fc12345u, 0x7f800001u, 0xff812345u})
    x.push_back(BitsToFloat(bits));
  const size_t n = x.size();
  std::vector<uint32_t> ref_e, ref_nonpos;
  for (Isa isa : aclnn_test::SupportedIsas()) {
    std::vector<float> e(n), np(n);
    ProbeExp(isa, x.data(), e.data(), n);
    ProbeExpNonPositive(isa, x.data(), np.data(), n);
    std::vector<uint32_t> be(n), bn(n);
    std::memcpy(be.data(), e.data(), 4 * n);
    std::memcpy(bn.data(), np.data(), 4 * n);
    if (ref_e.empty()) ref_e = be, ref_nonpos = bn;
    EXPECT_EQ(be, ref_e) << IsaName(isa);
    EXPECT_EQ(bn, ref_nonpos) << IsaName(isa);
  }
}

namespace {
// Position of f on the ordered line of floats (adjacent floats differ by 1, -0 == +0).
int64_t Ordered(float f) {
  const int64_t b = FloatBits(f) & 0x7fffffffu;
  return (FloatBits(f) >> 31) ? -b : b;
}
}  // namespace

// simd_log.h's contract: <= 2 ulp against the correctly rounded ln x for positive finite x
// (subnormals included), std::log's special values, and the same bits on every ISA.
TEST(Simd, LogAccuracyWithinTwoUlpAndSameBitsOnEveryIsa) {
  std::vector<float> x;
  for (uint32_t b = 1; b < 0x7f800000u; b += 997) x.push_back(BitsToFloat(b));  // every binade
  for (int i = -300000; i <= 300000; ++i) x.push_back(BitsToFloat(FloatBits(1.0f) + i));  // near 1
  aclnn_test::Rng rng(11);
  for (int i = 0; i < 200000; ++i) x.push_back(static_cast<float>(rng.Uniform(1.0, 1 << 20)));
  x.push_back(3.40282347e38f);
  const size_t n = x.size();
  std::vector<uint32_t> ref_bits;
  int worst = 0;
  for (Isa isa : aclnn_test::SupportedIsas()) {
    std::vector<float> y(n);
    ProbeLog(isa, x.data(), y.data(), n);
    for (size_t i = 0; i < n; ++i) {
      const float ref = static_cast<float>(std::log(static_cast<double>(x[i])));
      const int ulp = static_cast<int>(std::llabs(Ordered(y[i]) - Ordered(ref)));
      worst = std::max(worst, ulp);
      ASSERT_LE(ulp, 2) << IsaName(isa) << " x=" << x[i] << " got " << y[i] << " ref " << ref;
    }
    std::vector<uint32_t> bits(n);
    std::memcpy(bits.data(), y.data(), 4 * n);
    if (ref_bits.empty()) ref_bits = bits;
    EXPECT_EQ(bits, ref_bits) << IsaName(isa) << " Log differs from " << IsaName(aclnn_test::SupportedIsas()[0]);
    float s[6] = {0.0f, -0.0f, -1.0f, INFINITY, -INFINITY, NAN}, o[6];
    ProbeLog(isa, s, o, 6);
    EXPECT_EQ(o[0], -INFINITY);
    EXPECT_EQ(o[1], -INFINITY);
    EXPECT_TRUE(std::isnan(o[2]));
    EXPECT_EQ(o[3], INFINITY);
    EXPECT_TRUE(std::isnan(o[4]));
    EXPECT_TRUE(std::isnan(o[5]));
  }
  RecordProperty("worst_ulp", worst);
}

// LogPositiveNormal's contract: Log's bits for every positive normal finite x, on every ISA
// (every 4001st pattern of all normals, every 101st in [1, 64], where the lane path's sums lie).
TEST(Simd, LogPositiveNormalIsLogBitForBitOnNormals) {
  std::vector<float> x;
  for (uint32_t b = 0x00800000u; b < 0x7f800000u; b += 4001) x.push_back(BitsToFloat(b));
  for (uint32_t b = FloatBits(1.0f); b <= FloatBits(64.0f); b += 101) x.push_back(BitsToFloat(b));
  x.push_back(1.17549435e-38f);
  x.push_back(3.40282347e38f);
  const size_t n = x.size();
  for (Isa isa : aclnn_test::SupportedIsas()) {
    std::vector<float> a(n), b(n);
    ProbeLog(isa, x.data(), a.data(), n);
    ProbeLogPositiveNormal(isa, x.data(), b.data(), n);
    for (size_t i = 0; i < n; ++i)
      ASSERT_EQ(FloatBits(a[i]), FloatBits(b[i])) << IsaName(isa) << " x=" << x[i];
  }
}

// Row tails: LoadAsN reads exactly n values (the n values end at, or begin at, a page with no
// access rights, or sit one byte inside it; lanes >= n read as the fill) and StoreAsN writes
// exactly n values, rounded as FloatToHalf / FloatToBf16, at every byte alignment (the mhc entry
// points take outputs at any address), for n = 0..16 on every ISA. Addresses that are not
// element-aligned only on the vector ISAs, as in MhcOps.StreamingStoresAnyAlignment: the portable
// build indexes typed pointers.
TEST(Simd, PartialLoadsAndStoresTouchExactlyTheirLanes) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void* map = mmap(nullptr, 3 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(map, MAP_FAILED);
  uint8_t* const mid = static_cast<uint8_t*>(map) + page;  // [mid, mid + page) readable
  ASSERT_EQ(mprotect(map, page, PROT_NONE), 0);
  ASSERT_EQ(mprotect(mid + page, page, PROT_NONE), 0);
  aclnn_test::Rng rng(11);
  for (Isa isa : aclnn_test::SupportedIsas())
    for (int dt = 0; dt < 3; ++dt)
      for (int n = 0; n <= 16; ++n)
        for (int where = 0; where < 4; ++where) {  // at the end / start of the page, or 1 byte in
          const int es = dt == 0 ? 4 : 2;
          const bool atEnd = where % 2 == 0;
          const int shift = where / 2;
          if (shift % es != 0 && isa == Isa::kScalar) continue;
          uint8_t* const in = atEnd ? mid + page - n * es - shift : mid + shift;
          float want[16], vals[16], loaded[16];
          for (int i = 0; i < 16; ++i) {
            const float v = static_cast<float>(rng.Uniform(-100, 100));
            vals[i] = static_cast<float>(rng.Uniform(-100, 100));
            const uint16_t h = dt == 1 ? FloatToHalf(v) : FloatToBf16(v);
            if (i < n) std::memcpy(in + i * es, dt == 0 ? static_cast<const void*>(&v) : &h, es);
            want[i] = i >= n ? -7.5f : dt == 0 ? v : dt == 1 ? HalfToFloat(h) : Bf16ToFloat(h);
          }
          for (int offset = 0; offset < 32; ++offset) {
            if (offset % es != 0 && isa == Isa::kScalar) continue;
            std::vector<uint8_t> out(64 + 16 * es, 0xa5);
            ProbePartial(isa, dt, n, in, -7.5f, loaded, vals, out.data() + offset);
            const std::string at = std::string(IsaName(isa)) + " dt " + std::to_string(dt) + " n " +
                                   std::to_string(n) + " input at " + std::to_string(in - mid) +
                                   " offset " + std::to_string(offset);
            for (int i = 0; i < 16; ++i) ASSERT_EQ(FloatBits(loaded[i]), FloatBits(want[i])) << at << " lane " << i;
            for (size_t b = 0; b < out.size(); ++b) {
              const size_t i = b < static_cast<size_t>(offset) ? n : (b - offset) / es;  // n: outside
              if (i >= static_cast<size_t>(n)) {
                ASSERT_EQ(out[b], 0xa5) << "write outside the n values, byte " << b << ", " << at;
              } else if (dt == 0) {
                ASSERT_EQ(std::memcmp(&out[b], &vals[i], 4), 0) << at << " value " << i;
                b += 3;
              } else {
                const uint16_t h = dt == 1 ? FloatToHalf(vals[i]) : FloatToBf16(vals[i]);
                ASSERT_EQ(std::memcmp(&out[b], &h, 2), 0) << at << " value " << i;
                b += 1;
              }
            }
          }
        }
  munmap(map, 3 * page);
}

// ReduceSumRows16 / ReduceMaxRows16 (16 reductions side by side, FullLoadRowBlocks) give lane r
// the bits of ReduceSum / ReduceMax of row r on every ISA, and every ISA the scalar build's bits:
// values of mixed magnitudes (the sum's rounding depends on the order), signed zeros (max(-0, +0)
// returns its second operand), infinities and NaNs (compared as NaN: the payload of a sum of two
// NaNs is not part of the contract).
TEST(Simd, RowReductionsMatchOneAtATime) {
  aclnn_test::Rng rng(17);
  auto same = [](float a, float b) { return (std::isnan(a) && std::isnan(b)) || FloatBits(a) == FloatBits(b); };
  for (int trial = 0; trial < 200; ++trial) {
    float rows[256];
    for (float& v : rows) {
      const int kind = static_cast<int>(rng.Uniform(0, 100));
      v = kind < 2 ? NAN : kind < 4 ? INFINITY : kind < 6 ? -INFINITY : kind < 16 ? 0.0f : kind < 26 ? -0.0f
          : static_cast<float>(rng.Uniform(-1, 1) * std::pow(2.0, rng.Uniform(-30, 30)));
    }
    if (trial % 2 == 0)  // half the trials finite only
      for (float& v : rows)
        if (!std::isfinite(v)) v = 1.5f;
    float want[4][16];
    ProbeReduceRows(Isa::kScalar, rows, want[0], want[1], want[2], want[3]);
    for (Isa isa : aclnn_test::SupportedIsas()) {
      float got[4][16];
      ProbeReduceRows(isa, rows, got[0], got[1], got[2], got[3]);
      for (int r = 0; r < 16; ++r) {
        const std::string at = std::string(IsaName(isa)) + " trial " + std::to_string(trial) + " row " + std::to_string(r);
        ASSERT_TRUE(same(got[0][r], got[2][r])) << at << ": sum " << got[0][r] << ", one at a time " << got[2][r];
        ASSERT_TRUE(same(got[1][r], got[3][r])) << at << ": max " << got[1][r] << ", one at a time " << got[3][r];
        ASSERT_TRUE(same(got[0][r], want[0][r])) << at << ": sum " << got[0][r] << ", scalar " << want[0][r];
        ASSERT_TRUE(same(got[1][r], want[1][r])) << at << ": max " << got[1][r] << ", scalar " << want[1][r];
      }
    }
  }
}

// LoadRowsT / StoreRowsT (n = 1..16) and LoadRowsN / StoreRowsN (n = 1..127; the packed path
// with C read at run time takes up to 95): an exact transpose of a 16 x n block in every dtype,
// with the stores rounding as FloatToHalf / FloatToBf16 and writing nothing outside the block.
TEST(Simd, RowTransposesAreExactOnEveryIsa) {
  aclnn_test::Rng rng(5);
  for (Isa isa : aclnn_test::SupportedIsas())
    for (int dt = 0; dt < 3; ++dt)
      for (bool runtime_n : {false, true})
        for (int n = 1; n <= (runtime_n ? 127 : 16); ++n) {
          const int cnt = 16 * n, es = dt == 0 ? 4 : 2;
          std::vector<uint8_t> in(cnt * es), out((cnt + 32) * es, 0xa5);
          std::vector<float> cols(cnt), vals(cnt), want(cnt);
          for (int i = 0; i < cnt; ++i) {
            const float v = static_cast<float>(rng.Uniform(-100, 100));
            vals[i] = static_cast<float>(rng.Uniform(-100, 100));
            if (dt == 0) std::memcpy(&in[4 * i], &v, 4);
            const uint16_t h = dt == 1 ? FloatToHalf(v) : FloatToBf16(v);
            if (dt != 0) std::memcpy(&in[2 * i], &h, 2);
            want[i] = dt == 0 ? v : dt == 1 ? HalfToFloat(h) : Bf16ToFloat(h);
          }
          ProbeRows(isa, dt, n, runtime_n, in.data(), cols.data(), vals.data(), out.data() + 16 * es);
          const std::string at = std::string(IsaName(isa)) + " dt " + std::to_string(dt) + " n " +
                                 std::to_string(n) + (runtime_n ? " (run-time n)" : "");
          for (int r = 0; r < 16; ++r)
            for (int c = 0; c < n; ++c) {
              ASSERT_EQ(FloatBits(cols[16 * c + r]), FloatBits(want[r * n + c])) << at;
              const float v = vals[16 * c + r];
              const uint8_t* o = out.data() + 16 * es + (r * n + c) * es;
              if (dt == 0) {
                float g;
                std::memcpy(&g, o, 4);
                ASSERT_EQ(FloatBits(g), FloatBits(v)) << at;
              } else {
                uint16_t g;
                std::memcpy(&g, o, 2);
                ASSERT_EQ(g, dt == 1 ? FloatToHalf(v) : FloatToBf16(v)) << at;
              }
            }
          for (int i = 0; i < 16 * es; ++i) {
            ASSERT_EQ(out[i], 0xa5) << "write before the block, " << at;
            ASSERT_EQ(out[out.size() - 1 - i], 0xa5) << "write after the block, " << at;
          }
        }
}
