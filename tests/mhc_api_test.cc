// The mhc C entry points' argument rules: every bad argument writes nothing and leaves a
// message naming the argument, the expectation and the value; zero-size work succeeds; streams
// queue the work in order and complete with aclrtSynchronizeStream.
#include <gtest/gtest.h>

#include <climits>
#include <cstring>
#include <thread>

#include "mhc_test_util.h"

using namespace mhc_test;

namespace {

constexpr int64_t kB = 2, kS = 3, kD = 40, kN = 3, kE = kS * kD;

// Buffers for one call of any of the three ops, sized for (kB, kS, kD, kN); all start as sentinels.
struct Call {
  const DtypeCase& c;
  GuardedBuffer one, many, h, one2, gh;  // [B,S,D], [B*N,S,D], h, second [B,S,D], grad_h
  explicit Call(const DtypeCase& dc)
      : c(dc), one(kB * kE * dc.elem), many(kB * kN * kE * dc.elem), h(kN * dc.hElem), one2(kB * kE * dc.elem), gh(kN * 4) {}
  bool NothingWritten() const {
    return one.Untouched() && many.Untouched() && h.Untouched() && one2.Untouched() && gh.Untouched();
  }
};

enum class Op { kPost, kPre, kBackward };
const char* OpName(Op op) { return op == Op::kPost ? "mhc_post_do_" : (op == Op::kPre ? "mhc_pre_do_" : "mhc_post_backward_do_"); }

// Runs `op` with the buffers of `call`, replacing pointer `nullIndex` (in signature order) by NULL.
void Invoke(Op op, Call& call, int nullIndex, int64_t B, int64_t S, int64_t D, int64_t N, void* stream = nullptr,
            uint32_t blockDim = 0) {
  auto p = [&](int i, GuardedBuffer& b) { return i == nullIndex ? nullptr : b.ptr(); };
  switch (op) {
    case Op::kPost: call.c.post(blockDim, stream, p(0, call.one), p(1, call.h), p(2, call.many), B, S, D, N); break;
    case Op::kPre: call.c.pre(blockDim, stream, p(0, call.many), p(1, call.h), p(2, call.one), B, S, D, N); break;
    case Op::kBackward:
      call.c.backward(blockDim, stream, p(0, call.many), p(1, call.one), p(2, call.h), p(3, call.one2), p(4, call.gh), B,
                      S, D, N);
      break;
  }
}

const std::vector<std::vector<const char*>> kPointerNames = {
    {"input", "h_post", "output"}, {"input", "h_pre", "output"}, {"grad_out", "input", "h_post", "grad_input", "grad_h_post"}};

void ExpectRejected(Op op, Call& call, const std::string& api, const std::vector<std::string>& fragments) {
  EXPECT_TRUE(call.NothingWritten()) << api;
  const std::string msg = RecentMessage();
  EXPECT_NE(msg.find(api), std::string::npos) << "message '" << msg << "' should name " << api;
  for (const std::string& f : fragments) EXPECT_NE(msg.find(f), std::string::npos) << "message '" << msg << "' lacks '" << f << "'";
}

}  // namespace

TEST(MhcApi, NullPointersWriteNothing) {
  for (const DtypeCase& c : AllDtypes())
    for (Op op : {Op::kPost, Op::kPre, Op::kBackward}) {
      const auto& names = kPointerNames[static_cast<int>(op)];
      for (int i = 0; i < static_cast<int>(names.size()); ++i) {
        Call call(c);
        Invoke(op, call, i, kB, kS, kD, kN);
        ExpectRejected(op, call, std::string(OpName(op)) + c.name, {std::string(names[i]) + " must be a non-null pointer", "NULL"});
      }
    }
}

TEST(MhcApi, BadSizesWriteNothing) {
  struct Bad {
    int64_t B, S, D, N;
    std::vector<std::string> fragments;
  };
  const int64_t big = INT64_MAX / 2;
  const std::vector<Bad> cases = {
      {-1, kS, kD, kN, {"batch must be >= 0", "got -1"}},
      {kB, -5, kD, kN, {"seq_len must be >= 0", "got -5"}},
      {kB, kS, -7, kN, {"dim must be >= 0", "got -7"}},
      {kB, kS, kD, 0, {"num_streams must be >= 1", "got 0"}},
      {kB, kS, kD, -3, {"num_streams must be >= 1", "got -3"}},
      {INT64_MIN, kS, kD, kN, {"batch must be >= 0"}},
      {big, kS, kD, 4, {"batch * num_streams", "overflows", "batch=4611686018427387903"}},
      {0, big, 4, kN, {"seq_len * dim", "overflows"}},
      {1 << 20, 1 << 20, 1 << 20, 1 << 10, {"batch * num_streams * seq_len * dim", "overflows"}},
      {1, 1, int64_t{1} << 61, 2, {"size in bytes", "overflows"}},
  };
  for (const DtypeCase& c : AllDtypes())
    for (Op op : {Op::kPost, Op::kPre, Op::kBackward})
      for (const Bad& bad : cases) {
        Call call(c);
        Invoke(op, call, -1, bad.B, bad.S, bad.D, bad.N);
        SCOPED_TRACE(testing::Message() << bad.B << "," << bad.S << "," << bad.D << "," << bad.N);
        ExpectRejected(op, call, std::string(OpName(op)) + c.name, bad.fragments);
      }
}

TEST(MhcApi, BadStreamWritesNothing) {
  aclrtStream dead = nullptr;
  ASSERT_EQ(aclrtCreateStream(&dead), ACL_SUCCESS);
  ASSERT_EQ(aclrtDestroyStream(dead), ACL_SUCCESS);
  int notAStream = 0;
  for (void* stream : {static_cast<void*>(dead), static_cast<void*>(&notAStream)})
    for (const DtypeCase& c : AllDtypes())
      for (Op op : {Op::kPost, Op::kPre, Op::kBackward}) {
        Call call(c);
        Invoke(op, call, -1, kB, kS, kD, kN, stream);
        ExpectRejected(op, call, std::string(OpName(op)) + c.name, {"stream is not a live aclrtStream"});
      }
}

TEST(MhcApi, SuccessClearsThePreviousMessage) {
  Call call(AllDtypes()[0]);
  Invoke(Op::kPost, call, 0, kB, kS, kD, kN);
  ASSERT_NE(RecentMessage(), "");
  aclnn_test::Rng rng(1);
  FillRandom(Dt::kFp32, false, call.one.ptr(), kB * kE, rng, -1, 1);
  FillRandom(Dt::kFp32, true, call.h.ptr(), kN, rng, -1, 1);
  Invoke(Op::kPost, call, -1, kB, kS, kD, kN);
  EXPECT_EQ(RecentMessage(), "");
}

// B, S or D = 0: success, nothing written to the zero-size outputs; backward's grad_h (N
// elements) is the empty sum, zeros.
TEST(MhcApi, ZeroSizeWorkSucceeds) {
  struct Shape {
    int64_t B, S, D;
  };
  for (const DtypeCase& c : AllDtypes())
    for (const Shape& s : {Shape{0, kS, kD}, Shape{kB, 0, kD}, Shape{kB, kS, 0}, Shape{0, 0, 0}}) {
      for (Op op : {Op::kPost, Op::kPre}) {
        Call call(c);
        Invoke(op, call, -1, s.B, s.S, s.D, kN);
        EXPECT_EQ(RecentMessage(), "");
        EXPECT_TRUE(call.NothingWritten());
      }
      Call call(c);
      Invoke(Op::kBackward, call, -1, s.B, s.S, s.D, kN);
      EXPECT_EQ(RecentMessage(), "");
      EXPECT_TRUE(call.many.Untouched() && call.one.Untouched() && call.one2.Untouched() && call.h.Untouched());
      for (int64_t i = 0; i < kN; ++i) {
        float v;
        std::memcpy(&v, call.gh.ptr() + 4 * i, 4);
        EXPECT_EQ(FloatBits(v), 0u) << "grad_h[" << i << "] must be +0";
      }
      EXPECT_TRUE(call.gh.GuardsIntact());
    }
}

// post -> pre -> backward queued on one stream (pre consumes post's output), then synchronize.
TEST(MhcApi, StreamsRunInOrder) {
  aclrtStream stream = nullptr;
  ASSERT_EQ(aclrtCreateStream(&stream), ACL_SUCCESS);
  for (const DtypeCase& c : AllDtypes()) {
    const int64_t B = 3, S = 50, D = 333, N = 4, E = S * D;
    GuardedBuffer x(B * E * c.elem), h(N * c.hElem), expanded(B * N * E * c.elem), reduced(B * E * c.elem),
        gi(B * E * c.elem), gh(N * 4), want(B * N * E * c.elem);
    aclnn_test::Rng rng(11);
    FillRandom(c.dt, false, x.ptr(), B * E, rng, -2, 2);
    FillRandom(c.dt, true, h.ptr(), N, rng, -1, 1);
    c.post(0, stream, x.ptr(), h.ptr(), expanded.ptr(), B, S, D, N);
    ASSERT_EQ(RecentMessage(), "");
    c.pre(0, stream, expanded.ptr(), h.ptr(), reduced.ptr(), B, S, D, N);
    ASSERT_EQ(RecentMessage(), "");
    c.backward(2, stream, expanded.ptr(), x.ptr(), h.ptr(), gi.ptr(), gh.ptr(), B, S, D, N);
    ASSERT_EQ(RecentMessage(), "");
    ASSERT_EQ(aclrtSynchronizeStream(stream), ACL_SUCCESS);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t s = 0; s < N; ++s)
        for (int64_t e = 0; e < E; ++e) ExpectedPost(c.dt, x.ptr(), b * E + e, h.ptr(), s, want.ptr(), (b * N + s) * E + e);
    EXPECT_EQ(std::memcmp(expanded.ptr(), want.ptr(), expanded.size()), 0) << c.name;
    CheckReduced(c.dt, expanded.ptr(), h.ptr(), reduced.ptr(), B, E, N, std::string("stream pre ") + c.name);
    CheckReduced(c.dt, expanded.ptr(), h.ptr(), gi.ptr(), B, E, N, std::string("stream grad_input ") + c.name);
    std::vector<double> ref, mag;
    ReferenceGradH(c.dt, expanded.ptr(), x.ptr(), B, E, N, &ref, &mag);
    for (int64_t s = 0; s < N; ++s) {
      float got;
      std::memcpy(&got, gh.ptr() + 4 * s, 4);
      EXPECT_NEAR(got, ref[s], 72 * 0x1p-24 * mag[s] + 0x1p-24 * std::fabs(ref[s])) << c.name << " grad_h " << s;
    }
    for (const GuardedBuffer* b : {&expanded, &reduced, &gi, &gh}) EXPECT_TRUE(b->GuardsIntact()) << c.name;
  }
  // Zero-size backward on a stream still zero-fills grad_h, in order.
  GuardedBuffer gh(kN * 4), dummy(64);
  mhc_post_backward_do_fp32(0, stream, dummy.ptr(), dummy.ptr(), dummy.ptr(), dummy.ptr(), gh.ptr(), 0, kS, kD, kN);
  ASSERT_EQ(aclrtSynchronizeStream(stream), ACL_SUCCESS);
  for (int64_t i = 0; i < kN; ++i) {
    float v;
    std::memcpy(&v, gh.ptr() + 4 * i, 4);
    EXPECT_EQ(v, 0.0f);
  }
  EXPECT_TRUE(dummy.Untouched());
  ASSERT_EQ(aclrtDestroyStream(stream), ACL_SUCCESS);
}

// Calls from several host threads at once (the pool serves one; the others run on their own
// thread) give the same bits as a call alone.
TEST(MhcApi, ConcurrentCallersGetTheSameBits) {
  const int64_t B = 2, S = 64, D = 300, N = 4, E = S * D;
  std::vector<uint8_t> go(B * N * E * 4), x(B * E * 4), h(N * 4);
  aclnn_test::Rng rng(3);
  FillRandom(Dt::kFp32, false, go.data(), B * N * E, rng, -1, 1);
  FillRandom(Dt::kFp32, false, x.data(), B * E, rng, -1, 1);
  FillRandom(Dt::kFp32, true, h.data(), N, rng, -1, 1);
  auto run = [&](std::vector<uint8_t>& gi, std::vector<uint8_t>& gh) {
    mhc_post_backward_do_fp32(0, nullptr, go.data(), x.data(), h.data(), gi.data(), gh.data(), B, S, D, N);
  };
  std::vector<uint8_t> wantGi(B * E * 4), wantGh(N * 4);
  run(wantGi, wantGh);
  ASSERT_EQ(RecentMessage(), "");
  constexpr int kThreads = 4;
  std::vector<std::vector<uint8_t>> gi(kThreads, std::vector<uint8_t>(B * E * 4)), gh(kThreads, std::vector<uint8_t>(N * 4));
  std::vector<int> mismatches(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int rep = 0; rep < 20; ++rep) {
        run(gi[t], gh[t]);
        mismatches[t] += RecentMessage() != "" || gi[t] != wantGi || gh[t] != wantGh;
      }
    });
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(mismatches[t], 0) << "thread " << t;
}
