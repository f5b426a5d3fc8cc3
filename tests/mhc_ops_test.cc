// mhc_post / mhc_pre / mhc_post backward values, through the C entry points: the seed's shapes in
// every dtype, edge shapes, every strategy, blockDim, thread counts and ISAs; guard bytes after
// every output. References are independent scalar loops (mhc_test_util.h).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "mhc_test_util.h"
#include "ops/mhc/mhc_kernels.h"
#include "ops/mhc/mhc_tiling.h"
#include "platform/platform_info.h"

using namespace mhc_test;
using aclnn_portable::MhcDtype;
using aclnn_portable::MhcOp;
using aclnn_portable::MhcStrategy;
using aclnn_portable::MhcTiling;

namespace {

uint64_t SeedOf(int64_t B, int64_t S, int64_t D, int64_t N) {
  return static_cast<uint64_t>(((B * 131 + S) * 131 + D) * 131 + N);
}

MhcDtype ToMhc(Dt dt) { return dt == Dt::kFp32 ? MhcDtype::kFp32 : (dt == Dt::kFp16 ? MhcDtype::kFp16 : MhcDtype::kBf16); }

// Fails with the first differing element of two byte arrays of `elem`-byte values.
void ExpectSameElements(const uint8_t* got, const uint8_t* want, size_t n, size_t elem, const std::string& what) {
  if (std::memcmp(got, want, n * elem) == 0) return;
  for (size_t i = 0; i < n; ++i)
    if (std::memcmp(got + i * elem, want + i * elem, elem) != 0) {
      uint32_t g = 0, w = 0;
      std::memcpy(&g, got + i * elem, elem);
      std::memcpy(&w, want + i * elem, elem);
      ADD_FAILURE() << what << ": element " << i << " has bits 0x" << std::hex << g << ", want 0x" << w;
      return;
    }
}

struct PostData {
  GuardedBuffer x, h, out, want;
  PostData(const DtypeCase& c, int64_t B, int64_t E, int64_t N, size_t outOffset = 0)
      : x(B * E * c.elem), h(N * c.hElem), out(B * N * E * c.elem, outOffset), want(B * N * E * c.elem) {}
};

void CheckPost(const DtypeCase& c, int64_t B, int64_t S, int64_t D, int64_t N, uint32_t blockDim = 0) {
  const int64_t E = S * D;
  PostData d(c, B, E, N);
  aclnn_test::Rng rng(SeedOf(B, S, D, N));
  FillRandom(c.dt, false, d.x.ptr(), B * E, rng, -3, 3);
  FillRandom(c.dt, true, d.h.ptr(), N, rng, -1.5, 1.5);
  c.post(blockDim, nullptr, d.x.ptr(), d.h.ptr(), d.out.ptr(), B, S, D, N);
  ASSERT_EQ(RecentMessage(), "");
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 0; s < N; ++s)
      for (int64_t e = 0; e < E; ++e) ExpectedPost(c.dt, d.x.ptr(), b * E + e, d.h.ptr(), s, d.want.ptr(), (b * N + s) * E + e);
  const std::string what = std::string("post ") + c.name + " (" + std::to_string(B) + "," + std::to_string(S) + "," +
                           std::to_string(D) + ")xN=" + std::to_string(N) + " blockDim=" + std::to_string(blockDim);
  ExpectSameElements(d.out.ptr(), d.want.ptr(), B * N * E, c.elem, what);
  EXPECT_TRUE(d.out.GuardsIntact()) << what;
}

void CheckPre(const DtypeCase& c, int64_t B, int64_t S, int64_t D, int64_t N, uint32_t blockDim = 0) {
  const int64_t E = S * D;
  GuardedBuffer x(B * N * E * c.elem), h(N * c.hElem), out(B * E * c.elem);
  aclnn_test::Rng rng(SeedOf(B, S, D, N) + 1);
  FillRandom(c.dt, false, x.ptr(), B * N * E, rng, -3, 3);
  FillRandom(c.dt, true, h.ptr(), N, rng, -1.5, 1.5);
  c.pre(blockDim, nullptr, x.ptr(), h.ptr(), out.ptr(), B, S, D, N);
  ASSERT_EQ(RecentMessage(), "");
  const std::string what = std::string("pre ") + c.name + " (" + std::to_string(B) + "," + std::to_string(S) + "," +
                           std::to_string(D) + ")xN=" + std::to_string(N);
  CheckReduced(c.dt, x.ptr(), h.ptr(), out.ptr(), B, E, N, what);
  EXPECT_TRUE(out.GuardsIntact()) << what;
}

// grad_h tolerance: fp32 lanes sum at most 64 fma terms per block, 4 more adds reduce 16 lanes,
// the double sum of blocks is exact to 2^-53, and the result is rounded once to fp32.
double GradHTolerance(double ref, double mag) { return 72 * 0x1p-24 * mag + 0x1p-24 * std::fabs(ref) + 1e-37; }

void CheckBackward(const DtypeCase& c, int64_t B, int64_t S, int64_t D, int64_t N, uint32_t blockDim = 0) {
  const int64_t E = S * D;
  GuardedBuffer go(B * N * E * c.elem), x(B * E * c.elem), h(N * c.hElem), gi(B * E * c.elem), gh(N * 4);
  aclnn_test::Rng rng(SeedOf(B, S, D, N) + 2);
  FillRandom(c.dt, false, go.ptr(), B * N * E, rng, -2, 2);
  FillRandom(c.dt, false, x.ptr(), B * E, rng, -2, 2);
  FillRandom(c.dt, true, h.ptr(), N, rng, -1.5, 1.5);
  c.backward(blockDim, nullptr, go.ptr(), x.ptr(), h.ptr(), gi.ptr(), gh.ptr(), B, S, D, N);
  ASSERT_EQ(RecentMessage(), "");
  const std::string what = std::string("backward ") + c.name + " (" + std::to_string(B) + "," + std::to_string(S) +
                           "," + std::to_string(D) + ")xN=" + std::to_string(N);
  CheckReduced(c.dt, go.ptr(), h.ptr(), gi.ptr(), B, E, N, what + " grad_input");
  std::vector<double> ref, mag;
  ReferenceGradH(c.dt, go.ptr(), x.ptr(), B, E, N, &ref, &mag);
  for (int64_t s = 0; s < N; ++s) {
    float got;
    std::memcpy(&got, gh.ptr() + 4 * s, 4);
    EXPECT_NEAR(got, ref[s], GradHTolerance(ref[s], mag[s])) << what << " grad_h[" << s << "]";
  }
  EXPECT_TRUE(gi.GuardsIntact()) << what;
  EXPECT_TRUE(gh.GuardsIntact()) << what;
}

void CheckAllOps(int64_t B, int64_t S, int64_t D, int64_t N, uint32_t blockDim = 0) {
  for (const DtypeCase& c : AllDtypes()) {
    CheckPost(c, B, S, D, N, blockDim);
    CheckPre(c, B, S, D, N, blockDim);
    CheckBackward(c, B, S, D, N, blockDim);
  }
}

// Fills x and h, runs every task of a post plan on the current ISA's kernel, and checks the
// output's bits against the reference and the bytes around it.
void RunPostTasksAndCheck(const MhcTiling& plan, const DtypeCase& c, int64_t B, int64_t E, int64_t N,
                          uint64_t seed, PostData& d, const std::string& what) {
  aclnn_test::Rng rng(seed);
  FillRandom(c.dt, false, d.x.ptr(), B * E, rng, -3, 3);
  FillRandom(c.dt, true, d.h.ptr(), N, rng, -2, 2);
  const aclnn_portable::MhcPostTaskFn postFn = [] {
    using namespace aclnn_portable;
    return ACLNN_ISA_SELECT(MhcPostTask);
  }();
  const aclnn_portable::MhcPostArgs args{d.x.ptr(), d.h.ptr(), d.out.ptr()};
  for (int64_t t = 0; t < plan.numTasks; ++t) postFn(plan, args, t);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 0; s < N; ++s)
      for (int64_t e = 0; e < E; ++e) ExpectedPost(c.dt, d.x.ptr(), b * E + e, d.h.ptr(), s, d.want.ptr(), (b * N + s) * E + e);
  ExpectSameElements(d.out.ptr(), d.want.ptr(), B * N * E, c.elem, what);
  EXPECT_TRUE(d.out.GuardsIntact()) << what;
}

}  // namespace

TEST(MhcOps, SeedShapesAllDtypes) {
  CheckAllOps(2, 64, 256, 4);
  CheckAllOps(4, 32, 128, 8);
}

TEST(MhcOps, SeedShapesOnEveryIsa) {
  for (aclnn_portable::Isa isa : aclnn_test::SupportedIsas()) {
    SCOPED_TRACE(aclnn_portable::IsaName(isa));
    aclnn_test::ScopedIsa scoped(isa);
    CheckAllOps(2, 64, 256, 4);
  }
}

TEST(MhcOps, UnalignedDims) {
  for (int64_t dim : {1, 7, 13, 15, 63, 127}) CheckAllOps(2, 3, dim, 3);
}

TEST(MhcOps, BoundaryShapes) {
  CheckAllOps(1, 5, 33, 4);   // batch 1
  CheckAllOps(3, 1, 17, 2);   // seq 1
  CheckAllOps(1, 1, 1, 1);
  CheckAllOps(1, 3, 1100, 2); // rows longer than a tile alignment unit, odd tail
}

TEST(MhcOps, AnyNumberOfStreams) {
  for (int64_t n : {1, 2, 3, 4, 8, 9, 16, 64}) CheckAllOps(2, 3, 37, n);
}

TEST(MhcOps, BlockDimValues) {
  for (uint32_t blockDim : {1u, 2u, 3u, 7u, 1000u}) CheckAllOps(2, 16, 300, 3, blockDim);
}

// Post's special values: zeros, infinities, NaN, subnormals, products that overflow or underflow.
TEST(MhcOps, PostSpecialValues) {
  const float xs[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 65504.0f, -65504.0f, 6e-8f, 1e-7f, 3.0e38f,
                      -1e-38f, 1.0f, 0.5f, 2049.0f, 1e-5f, 123.456f, 7.0f};
  const float hs[] = {1.5f, -0.0f, 1e-3f, 4.0f, NAN};
  const int64_t E = sizeof(xs) / sizeof(xs[0]), N = sizeof(hs) / sizeof(hs[0]);
  for (const DtypeCase& c : AllDtypes()) {
    PostData d(c, 1, E, N);
    for (int64_t i = 0; i < E; ++i) SetValue(c.dt, false, d.x.ptr(), i, xs[i]);
    for (int64_t s = 0; s < N; ++s) SetValue(c.dt, true, d.h.ptr(), s, hs[s]);
    c.post(0, nullptr, d.x.ptr(), d.h.ptr(), d.out.ptr(), 1, 1, E, N);
    ASSERT_EQ(RecentMessage(), "");
    for (int64_t s = 0; s < N; ++s)
      for (int64_t e = 0; e < E; ++e) ExpectedPost(c.dt, d.x.ptr(), e, d.h.ptr(), s, d.want.ptr(), s * E + e);
    ExpectSameElements(d.out.ptr(), d.want.ptr(), N * E, c.elem, std::string("special post ") + c.name);
    EXPECT_TRUE(d.out.GuardsIntact());
  }
}

// bf16 post over every bf16 input pattern (NaNs, infinities, subnormals included) times weights
// whose products hit each rounding case (ties to even and to odd, just above and below a tie,
// carries into the exponent, overflow), zero and infinite weights (inf * 0: the default NaN), and
// NaN weights with payloads in the low 16 bits, which a rounding add without the NaN path would
// carry into the sign. Every ISA; stream groups without a NaN weight (the AVX2 stores without a
// NaN test) and with one, and a partial group.
TEST(MhcOps, PostBf16RoundingEveryPattern) {
  const DtypeCase& c = AllDtypes()[2];
  ASSERT_EQ(c.dt, Dt::kBf16);
  auto bits = [](uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; };
  const float hs[] = {1.0f + 0x1p-9f, 1.0f + 0x1p-8f + 0x1p-16f, bits(0x3f80ffffu), 0.0f,
                      -bits(0x3fc08000u), bits(0x3f807fffu), 1e30f, -INFINITY,
                      3.0f, bits(0x7fffffffu), bits(0xffc0ffffu), bits(0x7f800001u), 0.0f};
  const int64_t E = 65536 + 5, N = sizeof(hs) / sizeof(hs[0]);
  for (aclnn_portable::Isa isa : aclnn_test::SupportedIsas()) {
    SCOPED_TRACE(aclnn_portable::IsaName(isa));
    aclnn_test::ScopedIsa scoped(isa);
    PostData d(c, 1, E, N);
    for (int64_t i = 0; i < E; ++i) {
      const uint16_t b = static_cast<uint16_t>(i * 40503u);  // odd multiplier: every pattern once
      std::memcpy(d.x.ptr() + 2 * i, &b, 2);
    }
    for (int64_t s = 0; s < N; ++s) SetValue(c.dt, true, d.h.ptr(), s, hs[s]);
    c.post(0, nullptr, d.x.ptr(), d.h.ptr(), d.out.ptr(), 1, 1, E, N);
    ASSERT_EQ(RecentMessage(), "");
    for (int64_t s = 0; s < N; ++s)
      for (int64_t e = 0; e < E; ++e) {
        ExpectedPost(c.dt, d.x.ptr(), e, d.h.ptr(), s, d.want.ptr(), s * E + e);
        // NaN times NaN: IEEE leaves open whose payload the product keeps; it must be a NaN.
        if (std::isnan(GetValue(c.dt, false, d.x.ptr(), e)) && std::isnan(hs[s])) {
          EXPECT_TRUE(std::isnan(GetValue(c.dt, false, d.out.ptr(), s * E + e)));
          std::memcpy(d.want.ptr() + 2 * (s * E + e), d.out.ptr() + 2 * (s * E + e), 2);
        }
      }
    ExpectSameElements(d.out.ptr(), d.want.ptr(), N * E, c.elem, "bf16 rounding post");
    EXPECT_TRUE(d.out.GuardsIntact());
  }
}

// bf16 pre and grad_input over every bf16 pattern in every stream (each stream a different
// permutation, so NaN, inf - inf, inf * 0, overflow and subnormal sums meet in one chain), with
// weights that hold zero and infinities but no NaN (the AVX2 stores without a NaN test), and
// again with a NaN weight whose payload fills the low 16 bits (the stores with the test: without
// it that NaN would round to -0). Every ISA; the fma chain's bits (any NaN for a NaN).
TEST(MhcOps, PreAndBackwardBf16EveryPattern) {
  const DtypeCase& c = AllDtypes()[2];
  ASSERT_EQ(c.dt, Dt::kBf16);
  auto bits = [](uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; };
  const int64_t E = 65536 + 5, N = 5;
  const float numbers[N] = {1.0f + 0x1p-9f, 0.0f, -INFINITY, 1e30f, bits(0x3f807fffu)};
  const float withNaN[N] = {1.0f + 0x1p-9f, 0.0f, bits(0x7fffffffu), 1e30f, bits(0x3f807fffu)};
  for (aclnn_portable::Isa isa : aclnn_test::SupportedIsas()) {
    for (const float* hs : {numbers, withNaN}) {
      SCOPED_TRACE(std::string(aclnn_portable::IsaName(isa)) + (hs == numbers ? ", no NaN weight" : ", a NaN weight"));
      aclnn_test::ScopedIsa scoped(isa);
      GuardedBuffer x(N * E * c.elem), h(N * c.hElem), other(E * c.elem), out(E * c.elem), gh(N * 4);
      for (int64_t s = 0; s < N; ++s)
        for (int64_t i = 0; i < E; ++i) {
          const uint16_t b = static_cast<uint16_t>(i * 40503u + static_cast<uint32_t>(s) * 7919u);
          std::memcpy(x.ptr() + 2 * (s * E + i), &b, 2);
        }
      for (int64_t i = 0; i < E; ++i) SetValue(c.dt, false, other.ptr(), i, 1.0f);
      for (int64_t s = 0; s < N; ++s) SetValue(c.dt, true, h.ptr(), s, hs[s]);
      c.pre(0, nullptr, x.ptr(), h.ptr(), out.ptr(), 1, 1, E, N);
      ASSERT_EQ(RecentMessage(), "");
      CheckReduced(c.dt, x.ptr(), h.ptr(), out.ptr(), 1, E, N, "bf16 every-pattern pre");
      EXPECT_TRUE(out.GuardsIntact());
      // The backward's grad_input is the same chain over grad_out (here x); every grad_h sums a NaN.
      c.backward(0, nullptr, x.ptr(), other.ptr(), h.ptr(), out.ptr(), gh.ptr(), 1, 1, E, N);
      ASSERT_EQ(RecentMessage(), "");
      CheckReduced(c.dt, x.ptr(), h.ptr(), out.ptr(), 1, E, N, "bf16 every-pattern grad_input");
      for (int64_t s = 0; s < N; ++s) {
        float g;
        std::memcpy(&g, gh.ptr() + 4 * s, 4);
        EXPECT_TRUE(std::isnan(g)) << "grad_h[" << s << "] = " << g;
      }
      EXPECT_TRUE(out.GuardsIntact());
      EXPECT_TRUE(gh.GuardsIntact());
    }
  }
}

// Shapes that select each strategy on a 2-core machine; the plan is asserted, then the values.
TEST(MhcOps, EachStrategyOnTwoCores) {
  aclnn_test::ScopedThreads threads(2);
  const auto platform = aclnn_portable::CurrentPlatform();
  ASSERT_EQ(platform.coreNum, 2);
  struct Case {
    int64_t B, S, D, N;
    MhcStrategy strategy;
  };
  for (const Case& k : {Case{1, 1, 1000, 600, MhcStrategy::kPerStream}, Case{1, 2, 500, 600, MhcStrategy::kPerStream},
                        Case{8, 64, 256, 4, MhcStrategy::kReadOnce}, Case{1, 256, 1024, 4, MhcStrategy::kReadOnce}}) {
    for (const DtypeCase& c : AllDtypes()) {
      const MhcTiling plan = aclnn_portable::PlanMhc(MhcOp::kPost, ToMhc(c.dt), {k.B, k.S, k.D, k.N}, 0, platform);
      EXPECT_EQ(plan.strategy, k.strategy) << c.name << " " << k.B << "," << k.S << "," << k.D << "," << k.N;
      EXPECT_EQ(plan.usedCores, 2);
      CheckPost(c, k.B, k.S, k.D, k.N);
    }
  }
  // B = 1 with one long row still keeps both cores busy, for every op.
  for (MhcOp op : {MhcOp::kPost, MhcOp::kPre, MhcOp::kPostBackward}) {
    const MhcTiling plan = aclnn_portable::PlanMhc(op, MhcDtype::kFp32, {1, 256, 1024, 4}, 0, platform);
    EXPECT_GE(plan.numTasks, 2);
    EXPECT_EQ(plan.usedCores, 2);
  }
  CheckPre(AllDtypes()[0], 1, 256, 1024, 4);
  CheckBackward(AllDtypes()[0], 1, 256, 1024, 4);
}

// Pre, grad_input and grad_h have the same bits for every thread count and ISA, although the
// tiling (task count) changes with the thread count.
TEST(MhcOps, BitIdenticalAcrossThreadsAndIsas) {
  const int64_t B = 3, S = 37, D = 1000, N = 5, E = S * D;
  {
    const auto p1 = aclnn_portable::PlanMhc(MhcOp::kPostBackward, MhcDtype::kFp32, {B, S, D, N}, 0, {1, 512 * 1024});
    const auto p8 = aclnn_portable::PlanMhc(MhcOp::kPostBackward, MhcDtype::kFp32, {B, S, D, N}, 0, {8, 512 * 1024});
    ASSERT_NE(p1.numTasks, p8.numTasks);  // otherwise this test would not exercise the claim
  }
  for (const DtypeCase& c : AllDtypes()) {
    GuardedBuffer go(B * N * E * c.elem), x(B * E * c.elem), h(N * c.hElem);
    aclnn_test::Rng rng(99);
    FillRandom(c.dt, false, go.ptr(), B * N * E, rng, -2, 2);
    FillRandom(c.dt, false, x.ptr(), B * E, rng, -2, 2);
    FillRandom(c.dt, true, h.ptr(), N, rng, -1, 1);
    uint64_t want = 0;
    bool first = true;
    for (aclnn_portable::Isa isa : aclnn_test::SupportedIsas()) {
      aclnn_test::ScopedIsa scopedIsa(isa);
      for (int threads : {1, 2, 3, 8}) {
        aclnn_test::ScopedThreads scopedThreads(threads);
        GuardedBuffer gi(B * E * c.elem), gh(N * 4), pre(B * E * c.elem);
        c.backward(0, nullptr, go.ptr(), x.ptr(), h.ptr(), gi.ptr(), gh.ptr(), B, S, D, N);
        c.pre(0, nullptr, go.ptr(), h.ptr(), pre.ptr(), B, S, D, N);
        ASSERT_EQ(RecentMessage(), "");
        const uint64_t hash = aclnn_test::HashBytes(gh.ptr(), gh.size()) ^
                              (aclnn_test::HashBytes(gi.ptr(), gi.size()) * 3) ^
                              (aclnn_test::HashBytes(pre.ptr(), pre.size()) * 7);
        if (first) want = hash;
        first = false;
        EXPECT_EQ(hash, want) << c.name << " " << aclnn_portable::IsaName(isa) << " threads=" << threads;
        EXPECT_EQ(std::memcmp(gi.ptr(), pre.ptr(), gi.size()), 0) << "grad_input must equal mhc_pre(grad_out, h)";
      }
    }
  }
}

// Post with plain stores at every output alignment, on every ISA, run directly on the kernels:
// fp32 streams that do not all start on a 64-byte boundary are written one at a time after a
// head that aligns each (PostTaskT), the others a vector into every stream of a group; both
// must give the reference bits and leave the bytes around the output alone.
TEST(MhcOps, PostPlainStoresAnyAlignment) {
  namespace ap = aclnn_portable;
  const ap::PlatformInfo platform{2, 512 * 1024, uint64_t{64} << 20};
  struct Case {
    int64_t B, S, D, N;
    MhcStrategy strategy;
  };
  // E % 16 = 8 over two chunks; E % 16 = 0 with two stream groups; E odd with two groups; E odd
  // with one task per stream (strategy A).
  for (const Case& k : {Case{2, 2, 2100, 3, MhcStrategy::kReadOnce}, Case{2, 2, 2048, 11, MhcStrategy::kReadOnce},
                        Case{2, 3, 1001, 11, MhcStrategy::kReadOnce}, Case{1, 1, 1001, 600, MhcStrategy::kPerStream}}) {
    const int64_t E = k.S * k.D;
    for (const DtypeCase& c : AllDtypes()) {
      MhcTiling post = ap::PlanMhc(MhcOp::kPost, ToMhc(c.dt), {k.B, k.S, k.D, k.N}, 0, platform);
      ASSERT_EQ(post.strategy, k.strategy) << c.name << " E=" << E << " N=" << k.N;
      post.streamStores = false;
      std::vector<size_t> offsets = {2, 1};  // and every 4-byte step of a line
      if (k.strategy == MhcStrategy::kReadOnce)
        for (size_t o = 0; o < 64; o += 4) offsets.push_back(o);
      else
        offsets.insert(offsets.end(), {0, 4, 36});
      for (size_t offset : offsets) {
        for (ap::Isa isa : aclnn_test::SupportedIsas()) {
          if (offset % c.elem != 0 && isa == ap::Isa::kScalar) continue;  // as in the test below
          aclnn_test::ScopedIsa scoped(isa);
          SCOPED_TRACE(std::string(c.name) + " E=" + std::to_string(E) + " N=" + std::to_string(k.N) + " offset " +
                       std::to_string(offset) + " " + ap::IsaName(isa));
          PostData d(c, k.B, E, k.N, offset);
          RunPostTasksAndCheck(post, c, k.B, E, k.N, 7 + offset, d, "post");
        }
      }
    }
  }
}

// The non-temporal store path (head alignment, misaligned outputs, several stream groups) on
// every ISA, run directly on the kernels with a plan for a small cache so that a small output
// already streams.
TEST(MhcOps, StreamingStoresAnyAlignment) {
  namespace ap = aclnn_portable;
  const ap::PlatformInfo smallCache{2, 4096, 256 * 1024};
  for (const int64_t N : {int64_t{2}, int64_t{11}}) {
    // N = 2: outputs of >= 256 KiB, which the planner streams for a 4 KiB budget; N = 11 (two
    // stream groups): a smaller shape with streaming forced on the plan.
    const int64_t B = 2, S = N == 2 ? 66 : 5, D = N == 2 ? 1000 : 157, E = S * D;
    for (const DtypeCase& c : AllDtypes()) {
      MhcTiling post = ap::PlanMhc(MhcOp::kPost, ToMhc(c.dt), {B, S, D, N}, 0, smallCache);
      MhcTiling pre = ap::PlanMhc(MhcOp::kPre, ToMhc(c.dt), {B, S, D, N}, 0, smallCache);
      MhcTiling bwd = ap::PlanMhc(MhcOp::kPostBackward, ToMhc(c.dt), {B, S, D, N}, 0, smallCache);
      if (N == 2) {
        ASSERT_TRUE(post.streamStores && pre.streamStores && bwd.streamStores) << c.name;
      }
      post.streamStores = pre.streamStores = bwd.streamStores = true;
      for (size_t offset : {size_t{0}, size_t{2}, size_t{1}, size_t{36}}) {
        for (ap::Isa isa : aclnn_test::SupportedIsas()) {
          // Pointers that are not element-aligned are only exercised where the vector code
          // accesses them through unaligned intrinsics (the portable build indexes typed pointers).
          if (offset % c.elem != 0 && isa == ap::Isa::kScalar) continue;
          aclnn_test::ScopedIsa scoped(isa);
          SCOPED_TRACE(std::string(c.name) + " N=" + std::to_string(N) + " offset " + std::to_string(offset) + " " +
                       ap::IsaName(isa));
          PostData d(c, B, E, N, offset);
          RunPostTasksAndCheck(post, c, B, E, N, 5 + offset, d, "streamed post");
          const ap::MhcPreTaskFn preFn = [] { using namespace ap; return ACLNN_ISA_SELECT(MhcPreTask); }();
          const ap::MhcBackwardTaskFn bwdFn = [] { using namespace ap; return ACLNN_ISA_SELECT(MhcBackwardTask); }();
          const ap::MhcCombineGradHFn combineFn = [] { using namespace ap; return ACLNN_ISA_SELECT(MhcCombineGradH); }();
          // pre reduces the post output back; checked against the fma chain and fp64.
          GuardedBuffer reduced(B * E * c.elem, offset);
          const ap::MhcPreArgs preArgs{d.out.ptr(), d.h.ptr(), reduced.ptr()};
          for (int64_t t = 0; t < pre.numTasks; ++t) preFn(pre, preArgs, t);
          CheckReduced(c.dt, d.out.ptr(), d.h.ptr(), reduced.ptr(), B, E, N, "streamed pre");
          EXPECT_TRUE(reduced.GuardsIntact());
          // backward with the post output as grad_out: grad_input equals pre bit for bit.
          GuardedBuffer gi(B * E * c.elem, offset);
          std::vector<float> partials(N * B * bwd.blocksPerRow);
          float gh[16];
          const ap::MhcBackwardArgs bwdArgs{d.out.ptr(), d.x.ptr(), d.h.ptr(), gi.ptr(), partials.data()};
          for (int64_t t = 0; t < bwd.numTasks; ++t) bwdFn(bwd, bwdArgs, t);
          combineFn(bwd, partials.data(), gh);
          EXPECT_EQ(std::memcmp(gi.ptr(), reduced.ptr(), gi.size()), 0) << "streamed grad_input";
          EXPECT_TRUE(gi.GuardsIntact());
          std::vector<double> ref, mag;
          ReferenceGradH(c.dt, d.out.ptr(), d.x.ptr(), B, E, N, &ref, &mag);
          for (int64_t s = 0; s < N; ++s) EXPECT_NEAR(gh[s], ref[s], GradHTolerance(ref[s], mag[s])) << s;
        }
      }
    }
  }
}

// Inputs in exact-size heap blocks (no guard slack), so that AddressSanitizer builds catch any
// read past an input's end (masked tails) on every ISA; the values are checked as above.
TEST(MhcOps, InputsAreReadWithinBounds) {
  for (aclnn_portable::Isa isa : aclnn_test::SupportedIsas()) {
    aclnn_test::ScopedIsa scoped(isa);
    for (const DtypeCase& c : AllDtypes())
      for (int64_t D : {1, 7, 17, 1023, 4097}) {
        const int64_t B = 2, S = 1, N = 3, E = S * D;
        std::vector<uint8_t> x(B * E * c.elem), many(B * N * E * c.elem), h(N * c.hElem);
        aclnn_test::Rng rng(D);
        FillRandom(c.dt, false, x.data(), B * E, rng, -2, 2);
        FillRandom(c.dt, false, many.data(), B * N * E, rng, -2, 2);
        FillRandom(c.dt, true, h.data(), N, rng, -1, 1);
        GuardedBuffer post(B * N * E * c.elem), pre(B * E * c.elem), gi(B * E * c.elem), gh(N * 4);
        c.post(0, nullptr, x.data(), h.data(), post.ptr(), B, S, D, N);
        c.pre(0, nullptr, many.data(), h.data(), pre.ptr(), B, S, D, N);
        c.backward(0, nullptr, many.data(), x.data(), h.data(), gi.ptr(), gh.ptr(), B, S, D, N);
        ASSERT_EQ(RecentMessage(), "");
        std::vector<uint8_t> want(B * N * E * c.elem);
        for (int64_t b = 0; b < B; ++b)
          for (int64_t s = 0; s < N; ++s)
            for (int64_t e = 0; e < E; ++e) ExpectedPost(c.dt, x.data(), b * E + e, h.data(), s, want.data(), (b * N + s) * E + e);
        ExpectSameElements(post.ptr(), want.data(), B * N * E, c.elem, std::string("exact-size post ") + c.name);
        CheckReduced(c.dt, many.data(), h.data(), pre.ptr(), B, E, N, std::string("exact-size pre ") + c.name);
        CheckReduced(c.dt, many.data(), h.data(), gi.ptr(), B, E, N, std::string("exact-size grad_input ") + c.name);
        for (const GuardedBuffer* g : {&post, &pre, &gi, &gh}) EXPECT_TRUE(g->GuardsIntact());
      }
  }
}
