// Concurrency stress (runs under ThreadSanitizer in scripts/ci_hardening.sh): 8 host threads
// share the library for a bounded time — each with its own stream and executors, some on the
// null stream, some on one shared stream — and every result is checked against a reference
// computed by the test. Also: destroying streams with queued work, a repeatable executor run
// many times while other threads plan, and aclFinalize with live objects.
// ACLNN_STRESS_SECONDS sets the duration of the timed tests (default 2 s each).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_softmax_cross_entropy_with_logits.h"
#include "mhc/mhc.h"
#include "platform/thread_pool.h"
#include "runtime/stream.h"
#include "support/hardening_support.h"
#include "support/test_support.h"

using namespace aclnn_portable;
using aclnn_test::Rng;

namespace {

constexpr int kHostThreads = 8;

double StressSeconds() {
  if (const char* env = std::getenv("ACLNN_STRESS_SECONDS")) {
    const double v = std::atof(env);
    if (v > 0) return v;
  }
  return 2.0;
}

// A plan that, like the real operators, splits its work over the global thread pool:
// out[i] = in[i] * scale, in tasks of 1024 elements.
class PoolScalePlan final : public OpPlan {
 public:
  PoolScalePlan(int64_t n, float scale) : n_(n), scale_(scale) {}
  const char* ApiName() const override { return "aclnnTestPoolScale"; }
  size_t NumInputs() const override { return 1; }
  size_t NumOutputs() const override { return 1; }
  uint64_t WorkspaceSize() const override { return 0; }
  aclnnStatus CheckAddrs(const TensorAddrs& a) const override {
    if (a.inputs[0] == nullptr || a.outputs[0] == nullptr)
      return Fail(ACLNN_ERR_PARAM_NULLPTR, ApiName(), "input and output must not be null");
    return ACLNN_SUCCESS;
  }
  void Run(const TensorAddrs& a, void*) const override {
    const float* in = static_cast<const float*>(a.inputs[0]);
    float* out = static_cast<float*>(a.outputs[0]);
    const int64_t tasks = (n_ + 1023) / 1024;
    ThreadPool::Global().ParallelFor(tasks, 0, [&](int64_t t) {
      const int64_t end = std::min(n_, (t + 1) * 1024);
      for (int64_t i = t * 1024; i < end; ++i) out[i] = in[i] * scale_;
    });
  }

 private:
  int64_t n_;
  float scale_;
};

aclOpExecutor* NewScaleExecutor(int64_t n, float scale, const float* in, float* out) {
  TensorAddrs addrs;
  addrs.inputs[0] = const_cast<float*>(in);
  addrs.outputs[0] = out;
  return NewExecutor(std::make_shared<PoolScalePlan>(n, scale), addrs);
}

aclnnStatus LaunchScale(aclOpExecutor* e, aclrtStream s) {
  return Launch("aclnnTestPoolScale", nullptr, 0, e, s);
}

std::vector<float> RandomFloats(Rng& rng, int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = static_cast<float>(rng.Uniform(-4, 4));
  return v;
}

bool ScaledEquals(const std::vector<float>& in, float scale, const std::vector<float>& out) {
  for (size_t i = 0; i < in.size(); ++i)
    if (out[i] != in[i] * scale) return false;
  return true;
}

struct Counters {
  std::atomic<int64_t> calls{0};
  std::atomic<int64_t> failures{0};
};

// One step of a host thread: a few launches on `stream` (queued back to back, then
// synchronized), tensors created and destroyed alongside, an invalid call whose message must
// be this thread's own. Returns false (and counts) on any wrong result.
void HostStep(aclrtStream stream, Rng& rng, Counters& c, int thread_index) {
  const int launches = 1 + static_cast<int>(rng.Next() % 4);
  std::vector<std::vector<float>> ins, outs;
  std::vector<float> scales;
  for (int l = 0; l < launches; ++l) {
    const int64_t n = 1 + static_cast<int64_t>(rng.Next() % 6000);
    ins.push_back(RandomFloats(rng, n));
    outs.emplace_back(static_cast<size_t>(n), 0.0f);
    scales.push_back(static_cast<float>(1 + rng.Next() % 7));
  }
  for (int l = 0; l < launches; ++l) {
    int64_t dims[1] = {static_cast<int64_t>(ins[l].size())};
    aclTensor* t = aclCreateTensor(dims, 1, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, dims, 1, ins[l].data());
    aclOpExecutor* e = NewScaleExecutor(dims[0], scales[l], ins[l].data(), outs[l].data());
    if (t == nullptr || LaunchScale(e, stream) != ACLNN_SUCCESS) c.failures.fetch_add(1);
    aclDestroyTensor(t);
    c.calls.fetch_add(3);
  }
  // An invalid call: the message is ours even while 7 other threads fail and succeed.
  const int32_t bad_device = 100 + thread_index;
  if (aclrtSetDevice(bad_device) != ACL_ERROR_RT_INVALID_DEVICEID ||
      std::string(aclGetRecentErrMsg()).find("got " + std::to_string(bad_device)) == std::string::npos)
    c.failures.fetch_add(1);
  if (aclrtSynchronizeStream(stream) != ACL_SUCCESS) c.failures.fetch_add(1);
  c.calls.fetch_add(2);
  for (int l = 0; l < launches; ++l)
    if (!ScaledEquals(ins[l], scales[l], outs[l])) c.failures.fetch_add(1);
}

// One SoftmaxCrossEntropyWithLogits ND fp32 call on `stream` through the public API, checked
// against an fp64 reference written here (DESIGN §5). The executor is made repeatable and run
// twice now and then.
void SceStep(aclrtStream stream, Rng& rng, Counters& c) {
  const int64_t n = 1 + static_cast<int64_t>(rng.Next() % 24), k = 1 + static_cast<int64_t>(rng.Next() % 300);
  std::vector<float> x = RandomFloats(rng, n * k), y(static_cast<size_t>(n * k)), loss(n, -1.0f), bp(n * k, -1.0f);
  for (auto& v : y) v = static_cast<float>(rng.Uniform(0, 1));
  const int64_t dims[2] = {n, k}, ldims[1] = {n};
  aclTensor* tf = aclCreateTensor(dims, 2, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, dims, 2, x.data());
  aclTensor* tl = aclCreateTensor(dims, 2, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, dims, 2, y.data());
  aclTensor* tloss = aclCreateTensor(ldims, 1, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, ldims, 1, loss.data());
  aclTensor* tbp = aclCreateTensor(dims, 2, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, dims, 2, bp.data());
  uint64_t ws_size = 0;
  aclOpExecutor* e = nullptr;
  if (aclnnSoftmaxCrossEntropyWithLogitsGetWorkspaceSize(tf, tl, tloss, tbp, &ws_size, &e) != ACLNN_SUCCESS) {
    c.failures.fetch_add(1);
    return;
  }
  std::vector<uint8_t> ws(ws_size + 1);
  const bool twice = rng.Next() % 4 == 0;
  if (twice && aclSetAclOpExecutorRepeatable(e) != ACLNN_SUCCESS) c.failures.fetch_add(1);
  for (int run = 0; run < (twice ? 2 : 1); ++run)
    if (aclnnSoftmaxCrossEntropyWithLogits(ws.data(), ws_size, e, stream) != ACLNN_SUCCESS) c.failures.fetch_add(1);
  if (aclrtSynchronizeStream(stream) != ACL_SUCCESS) c.failures.fetch_add(1);
  if (twice && aclDestroyAclOpExecutor(e) != ACLNN_SUCCESS) c.failures.fetch_add(1);
  for (aclTensor* t : {tf, tl, tloss, tbp}) aclDestroyTensor(t);
  c.calls.fetch_add(twice ? 12 : 10);
  for (int64_t r = 0; r < n; ++r) {
    double m = -INFINITY, sum = 0, ref = 0;
    for (int64_t j = 0; j < k; ++j) m = std::max(m, static_cast<double>(x[r * k + j]));
    for (int64_t j = 0; j < k; ++j) sum += std::exp(x[r * k + j] - m);
    for (int64_t j = 0; j < k; ++j) {
      const double z = x[r * k + j] - m;
      ref += y[r * k + j] * (std::log(sum) - z);
      if (std::fabs(bp[r * k + j] - (std::exp(z) / sum - y[r * k + j])) > 1e-6) c.failures.fetch_add(1);
    }
    if (std::fabs(loss[r] - ref) > 1e-5 * (1 + std::fabs(ref))) c.failures.fetch_add(1);
  }
}

// One mhc_post + mhc_pre fp32 pair on `stream`: post is checked bit for bit (one IEEE multiply),
// pre against an fp64 sum.
void MhcStep(aclrtStream stream, Rng& rng, Counters& c) {
  const int64_t b = 1 + static_cast<int64_t>(rng.Next() % 3), sq = 1 + static_cast<int64_t>(rng.Next() % 16);
  const int64_t d = 1 + static_cast<int64_t>(rng.Next() % 200), nst = 1 + static_cast<int64_t>(rng.Next() % 6);
  const int64_t plane = sq * d;
  std::vector<float> x = RandomFloats(rng, b * plane), h = RandomFloats(rng, nst);
  std::vector<float> post(static_cast<size_t>(b * nst * plane), -1.0f), pre(static_cast<size_t>(b * plane), -1.0f);
  auto u8 = [](std::vector<float>& v) { return reinterpret_cast<uint8_t*>(v.data()); };
  mhc_post_do_fp32(static_cast<uint32_t>(rng.Next() % 3), stream, u8(x), u8(h), u8(post), b, sq, d, nst);
  mhc_pre_do_fp32(0, stream, u8(post), u8(h), u8(pre), b, sq, d, nst);  // in order after post
  if (aclGetRecentErrMsg()[0] != '\0' || aclrtSynchronizeStream(stream) != ACL_SUCCESS) c.failures.fetch_add(1);
  c.calls.fetch_add(3);
  for (int64_t bb = 0; bb < b; ++bb)
    for (int64_t e = 0; e < plane; ++e) {
      double ref = 0, mag = 0;
      for (int64_t s = 0; s < nst; ++s) {
        const float want = x[bb * plane + e] * h[s];
        if (post[(bb * nst + s) * plane + e] != want) c.failures.fetch_add(1);
        ref += static_cast<double>(want) * h[s];
        mag += std::fabs(static_cast<double>(want) * h[s]);
      }
      if (std::fabs(pre[bb * plane + e] - ref) > 1e-6 * (mag + 1)) c.failures.fetch_add(1);
    }
}

}  // namespace

TEST(Stress, EightHostThreadsShareTheLibrary) {
  aclnn_test::ScopedThreads pool(2);
  aclrtStream shared = nullptr;
  ASSERT_EQ(aclrtCreateStream(&shared), ACL_SUCCESS);
  Counters c;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(StressSeconds());
  std::vector<std::thread> threads;
  for (int k = 0; k < kHostThreads; ++k)
    threads.emplace_back([&, k] {
      Rng rng(1000 + k);
      // Threads 0-3: a stream of their own (re-created now and then); 4-5: the null stream;
      // 6-7: the shared stream.
      aclrtStream own = nullptr;
      if (k < 4 && aclrtCreateStream(&own) != ACL_SUCCESS) c.failures.fetch_add(1);
      int64_t steps = 0;
      while (std::chrono::steady_clock::now() < deadline) {
        aclrtStream s = k < 4 ? own : (k < 6 ? nullptr : shared);
        switch (rng.Next() % 3) {
          case 0: HostStep(s, rng, c, k); break;
          case 1: SceStep(s, rng, c); break;
          default: MhcStep(s, rng, c); break;
        }
        if (k < 4 && ++steps % 25 == 0) {
          if (aclrtDestroyStream(own) != ACL_SUCCESS || aclrtCreateStream(&own) != ACL_SUCCESS)
            c.failures.fetch_add(1);
          c.calls.fetch_add(2);
        }
      }
      if (own != nullptr && aclrtDestroyStream(own) != ACL_SUCCESS) c.failures.fetch_add(1);
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(aclrtDestroyStream(shared), ACL_SUCCESS);
  EXPECT_EQ(c.failures.load(), 0);
  EXPECT_GT(c.calls.load(), 100);
  std::printf("[ stress ] %d host threads, %.1f s: %lld API calls, results checked\n", kHostThreads,
              StressSeconds(), static_cast<long long>(c.calls.load()));
}

// One thread launches a repeatable executor over and over on its stream, rebinding its output
// each time (the queued runs keep the addresses they were launched with), while other threads
// plan, launch and destroy executors of their own.
TEST(Stress, RepeatableExecutorWhileOthersPlan) {
  aclnn_test::ScopedThreads pool(2);
  constexpr int64_t kN = 3000;
  constexpr int kRuns = 64;
  Rng rng(7);
  const std::vector<float> in = RandomFloats(rng, kN);
  std::vector<std::vector<float>> outs(kRuns, std::vector<float>(kN, 0.0f));
  aclOpExecutor* rep = NewScaleExecutor(kN, 3.0f, in.data(), outs[0].data());
  ASSERT_EQ(aclSetAclOpExecutorRepeatable(rep), ACLNN_SUCCESS);
  std::atomic<bool> stop{false};
  Counters c;
  std::vector<std::thread> planners;
  for (int k = 0; k < 3; ++k)
    planners.emplace_back([&, k] {
      Rng r(50 + k);
      while (!stop.load()) {
        HostStep(nullptr, r, c, k);
        SceStep(nullptr, r, c);
        MhcStep(nullptr, r, c);
      }
    });
  aclrtStream s = nullptr;
  ASSERT_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(StressSeconds() / 2);
  int64_t rounds = 0;
  bool ok = true;
  while (ok && (rounds == 0 || std::chrono::steady_clock::now() < deadline)) {
    for (int r = 0; r < kRuns; ++r) {
      std::fill(outs[r].begin(), outs[r].end(), 0.0f);
      ok &= aclSetOutputTensorAddr(rep, 0, nullptr, outs[r].data()) == ACLNN_SUCCESS;
      ok &= LaunchScale(rep, s) == ACLNN_SUCCESS;
    }
    ok &= aclrtSynchronizeStream(s) == ACL_SUCCESS;
    for (int r = 0; r < kRuns; ++r) ok &= ScaledEquals(in, 3.0f, outs[r]);
    ++rounds;
  }
  stop.store(true);
  EXPECT_TRUE(ok) << "a repeatable run was refused or gave a wrong result in round " << rounds;
  for (auto& t : planners) t.join();
  EXPECT_EQ(aclDestroyAclOpExecutor(rep), ACLNN_SUCCESS);
  EXPECT_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
  EXPECT_EQ(c.failures.load(), 0);
  std::printf("[ stress ] repeatable executor: %lld runs while 3 threads made %lld calls\n",
              static_cast<long long>(rounds * kRuns), static_cast<long long>(c.calls.load()));
}

// The same, with a real operator: one repeatable SoftmaxCrossEntropyWithLogits executor is
// launched again and again on a stream, each run rebound to its own loss/backprop buffers, while
// three threads plan and run SCE and mHC calls. Every run must give the first run's bits, and
// the first run matches the fp64 reference.
TEST(Stress, RepeatableSceExecutorWhileOthersPlan) {
  aclnn_test::ScopedThreads pool(2);
  constexpr int64_t kN = 48, kC = 1000;
  constexpr int kRuns = 16;
  Rng rng(11);
  std::vector<float> x = RandomFloats(rng, kN * kC), y(kN * kC);
  for (auto& v : y) v = static_cast<float>(rng.Uniform(0, 1));
  std::vector<std::vector<float>> loss(kRuns, std::vector<float>(kN)), bp(kRuns, std::vector<float>(kN * kC));
  const int64_t dims[2] = {kN, kC}, ldims[1] = {kN};
  aclTensor* tf = aclCreateTensor(dims, 2, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, dims, 2, x.data());
  aclTensor* tl = aclCreateTensor(dims, 2, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, dims, 2, y.data());
  aclTensor* tloss = aclCreateTensor(ldims, 1, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, ldims, 1, loss[0].data());
  aclTensor* tbp = aclCreateTensor(dims, 2, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, dims, 2, bp[0].data());
  uint64_t ws_size = 0;
  aclOpExecutor* e = nullptr;
  ASSERT_EQ(aclnnSoftmaxCrossEntropyWithLogitsGetWorkspaceSize(tf, tl, tloss, tbp, &ws_size, &e), ACLNN_SUCCESS)
      << aclGetRecentErrMsg();
  ASSERT_EQ(aclSetAclOpExecutorRepeatable(e), ACLNN_SUCCESS);
  std::vector<uint8_t> ws(ws_size + 1);
  std::atomic<bool> stop{false};
  Counters c;
  std::vector<std::thread> planners;
  for (int k = 0; k < 3; ++k)
    planners.emplace_back([&, k] {
      Rng r(70 + k);
      while (!stop.load()) {
        SceStep(nullptr, r, c);
        MhcStep(nullptr, r, c);
      }
    });
  aclrtStream s = nullptr;
  ASSERT_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(StressSeconds() / 2);
  int64_t rounds = 0;
  bool ok = true;
  while (ok && (rounds == 0 || std::chrono::steady_clock::now() < deadline)) {
    for (int r = 0; r < kRuns; ++r) {
      std::fill(loss[r].begin(), loss[r].end(), -1.0f);
      ok &= aclSetOutputTensorAddr(e, 0, tloss, loss[r].data()) == ACLNN_SUCCESS;
      ok &= aclSetOutputTensorAddr(e, 1, tbp, bp[r].data()) == ACLNN_SUCCESS;
      ok &= aclnnSoftmaxCrossEntropyWithLogits(ws.data(), ws_size, e, s) == ACLNN_SUCCESS;
    }
    ok &= aclrtSynchronizeStream(s) == ACL_SUCCESS;
    for (int r = 1; r < kRuns; ++r) ok &= loss[r] == loss[0] && bp[r] == bp[0];
    ++rounds;
  }
  stop.store(true);
  for (auto& t : planners) t.join();
  EXPECT_TRUE(ok) << "a repeatable SCE run was refused or gave different bits in round " << rounds;
  for (int64_t r = 0; r < kN; ++r) {
    double m = -INFINITY, sum = 0, ref = 0;
    for (int64_t j = 0; j < kC; ++j) m = std::max(m, static_cast<double>(x[r * kC + j]));
    for (int64_t j = 0; j < kC; ++j) sum += std::exp(x[r * kC + j] - m);
    for (int64_t j = 0; j < kC; ++j) ref += y[r * kC + j] * (std::log(sum) - (x[r * kC + j] - m));
    EXPECT_NEAR(loss[0][r], ref, 1e-5 * (1 + std::fabs(ref))) << r;
  }
  EXPECT_EQ(aclDestroyAclOpExecutor(e), ACLNN_SUCCESS);
  for (aclTensor* t : {tf, tl, tloss, tbp}) aclDestroyTensor(t);
  EXPECT_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
  EXPECT_EQ(c.failures.load(), 0);
  std::printf("[ stress ] repeatable SCE executor: %lld runs while 3 threads made %lld checked calls\n",
              static_cast<long long>(rounds * kRuns), static_cast<long long>(c.calls.load()));
}

// Streams destroyed right after work was queued on them, from several threads at once: the
// destroy returns only after the queued work has run, and every result is complete.
TEST(Stress, DestroyStreamsWithQueuedWork) {
  aclnn_test::ScopedThreads pool(2);
  Counters c;
  std::vector<std::thread> threads;
  for (int k = 0; k < kHostThreads; ++k)
    threads.emplace_back([&, k] {
      Rng rng(300 + k);
      for (int rep = 0; rep < 20; ++rep) {
        aclrtStream s = nullptr;
        if (aclrtCreateStream(&s) != ACL_SUCCESS) { c.failures.fetch_add(1); return; }
        std::vector<std::vector<float>> ins, outs;
        for (int l = 0; l < 8; ++l) {
          ins.push_back(RandomFloats(rng, 2048 + l));
          outs.emplace_back(ins.back().size(), 0.0f);
          aclOpExecutor* e = NewScaleExecutor(static_cast<int64_t>(ins[l].size()), 5.0f, ins[l].data(), outs[l].data());
          if (LaunchScale(e, s) != ACLNN_SUCCESS) c.failures.fetch_add(1);
        }
        if (aclrtDestroyStream(s) != ACL_SUCCESS) c.failures.fetch_add(1);  // no synchronize
        for (int l = 0; l < 8; ++l)
          if (!ScaledEquals(ins[l], 5.0f, outs[l])) c.failures.fetch_add(1);
        c.calls.fetch_add(10);
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(c.failures.load(), 0);
}

// aclrtSynchronizeDevice on one thread while others create, use and destroy streams: the
// device-wide synchronize must never touch a stream that is being destroyed.
TEST(Stress, SynchronizeDeviceWhileStreamsComeAndGo) {
  std::atomic<bool> stop{false};
  Counters c;
  std::vector<std::thread> churn;
  for (int k = 0; k < 3; ++k)
    churn.emplace_back([&, k] {
      Rng rng(500 + k);
      std::vector<float> in = RandomFloats(rng, 4096), out(4096);
      while (!stop.load()) {
        aclrtStream s = nullptr;
        if (aclrtCreateStream(&s) != ACL_SUCCESS) c.failures.fetch_add(1);
        if (LaunchScale(NewScaleExecutor(4096, 2.0f, in.data(), out.data()), s) != ACLNN_SUCCESS) c.failures.fetch_add(1);
        if (aclrtDestroyStream(s) != ACL_SUCCESS) c.failures.fetch_add(1);
        if (!ScaledEquals(in, 2.0f, out)) c.failures.fetch_add(1);
        c.calls.fetch_add(3);
      }
    });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(StressSeconds() / 4);
  int64_t syncs = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    EXPECT_EQ(aclrtSynchronizeDevice(), ACL_SUCCESS);
    ++syncs;
  }
  stop.store(true);
  for (auto& t : churn) t.join();
  EXPECT_EQ(c.failures.load(), 0);
  std::printf("[ stress ] %lld device synchronizes while 3 threads made %lld stream calls\n",
              static_cast<long long>(syncs), static_cast<long long>(c.calls.load()));
}

// aclFinalize while tensors, executors, streams (with queued work) and blocks from several
// threads are alive: the queued work completes, every handle is released and refused after,
// and the library works again after aclInit. Runs last in this binary (and alone under ctest).
TEST(StressFinalize, FinalizeWithLiveObjectsFromManyThreads) {
  ASSERT_EQ(aclInit(nullptr), ACL_SUCCESS);
  constexpr int64_t kN = 4096;
  struct PerThread {
    std::vector<float> in, out;
    aclrtStream stream = nullptr;
    aclTensor* tensor = nullptr;
    aclOpExecutor* idle_executor = nullptr;
    void* block = nullptr;
  };
  std::vector<PerThread> per(kHostThreads);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int k = 0; k < kHostThreads; ++k)
    threads.emplace_back([&, k] {
      PerThread& p = per[k];
      Rng rng(900 + k);
      p.in = RandomFloats(rng, kN);
      p.out.assign(kN, 0.0f);
      int64_t dims[1] = {kN};
      p.tensor = aclCreateTensor(dims, 1, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, dims, 1, p.in.data());
      if (p.tensor == nullptr || aclrtCreateStream(&p.stream) != ACL_SUCCESS ||
          aclrtMalloc(&p.block, 1 << 16, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS)
        failures.fetch_add(1);
      p.idle_executor = NewScaleExecutor(kN, 2.0f, p.in.data(), p.out.data());
      // Queue several runs (the last one writes the final result) and leave them queued.
      for (int l = 0; l < 6; ++l) {
        aclOpExecutor* e = NewScaleExecutor(kN, static_cast<float>(l + 1), p.in.data(), p.out.data());
        if (LaunchScale(e, p.stream) != ACLNN_SUCCESS) failures.fetch_add(1);
      }
    });
  for (auto& t : threads) t.join();
  ASSERT_EQ(failures.load(), 0);
  ASSERT_EQ(aclFinalize(), ACL_SUCCESS);
  for (PerThread& p : per) {
    EXPECT_TRUE(ScaledEquals(p.in, 6.0f, p.out));  // every queued run happened, in order
    EXPECT_EQ(aclDestroyTensor(p.tensor), ACLNN_ERR_PARAM_INVALID);
    EXPECT_EQ(aclDestroyAclOpExecutor(p.idle_executor), ACLNN_ERR_PARAM_INVALID);
    EXPECT_EQ(aclrtSynchronizeStream(p.stream), ACL_ERROR_INVALID_RESOURCE_HANDLE);
    EXPECT_EQ(aclrtFree(p.block), ACL_ERROR_INVALID_PARAM);
  }
  ASSERT_EQ(aclInit(nullptr), ACL_SUCCESS);
  std::vector<float> out(kN, 0.0f);
  aclOpExecutor* e = NewScaleExecutor(kN, 2.0f, per[0].in.data(), out.data());
  ASSERT_EQ(LaunchScale(e, nullptr), ACLNN_SUCCESS);
  EXPECT_TRUE(ScaledEquals(per[0].in, 2.0f, out));
  EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
}
