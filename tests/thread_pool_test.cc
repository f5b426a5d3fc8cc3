// The thread pool: every task runs exactly once, worker limits hold, concurrent callers from
// several host threads neither deadlock nor lose tasks, and Resize/Shutdown restart cleanly.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "platform/platform_info.h"
#include "platform/thread_pool.h"
#include "support/test_support.h"

using aclnn_portable::ThreadPool;

TEST(ThreadPool, RunsEveryTaskOnce) {
  for (int threads : {1, 2, 3, 8}) {
    aclnn_test::ScopedThreads scoped(threads);
    for (int64_t n : {0, 1, 2, 7, 1000}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      ThreadPool::Global().ParallelFor(n, 0, [&](int64_t t) { hits[t].fetch_add(1); });
      for (int64_t t = 0; t < n; ++t) EXPECT_EQ(hits[t].load(), 1) << "threads " << threads << " task " << t;
    }
  }
}

TEST(ThreadPool, NeverUsesMoreWorkersThanAllowedOrTasks) {
  aclnn_test::ScopedThreads scoped(8);
  for (auto [tasks, max_workers, limit] : {std::tuple{64, 3, 3}, {64, 0, 8}, {2, 0, 2}, {1, 0, 1}}) {
    std::mutex mu;
    std::set<std::thread::id> ids;
    ThreadPool::Global().ParallelFor(tasks, max_workers, [&](int64_t) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      std::lock_guard<std::mutex> lock(mu);
      ids.insert(std::this_thread::get_id());
    });
    EXPECT_LE(static_cast<int>(ids.size()), limit);
    EXPECT_TRUE(ids.count(std::this_thread::get_id())) << "the caller is worker 0";
  }
}

TEST(ThreadPool, ConcurrentCallersAllComplete) {
  aclnn_test::ScopedThreads scoped(4);
  std::atomic<int64_t> total{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 6; ++c) {
    callers.emplace_back([&] {
      for (int rep = 0; rep < 200; ++rep)
        ThreadPool::Global().ParallelFor(37, 0, [&](int64_t t) { total.fetch_add(t); });
    });
  }
  for (auto& t : callers) t.join();
  EXPECT_EQ(total.load(), 6 * 200 * (36 * 37 / 2));
}

TEST(ThreadPool, ShutdownThenRunRestarts) {
  aclnn_test::ScopedThreads scoped(3);
  ThreadPool::Global().Shutdown();
  std::atomic<int> n{0};
  ThreadPool::Global().ParallelFor(10, 0, [&](int64_t) { n++; });
  EXPECT_EQ(n.load(), 10);
}

TEST(PlatformInfo, ReflectsThePool) {
  aclnn_test::ScopedThreads scoped(3);
  const auto info = aclnn_portable::CurrentPlatform();
  EXPECT_EQ(info.coreNum, 3);
  EXPECT_GE(info.ubBytes, 4096u);
}
