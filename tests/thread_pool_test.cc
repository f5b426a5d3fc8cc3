// The thread pool: every task runs exactly once, worker limits hold, concurrent callers from
// several host threads neither deadlock nor lose tasks, and Resize/Shutdown restart cleanly.
#include <gtest/gtest.h>

#include <dirent.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
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

// body(task, worker): the index lies in [0, max_workers) and is never held by two running tasks
// at once (a call gives each index its own scratch); the caller's tasks see 0.
TEST(ThreadPool, WorkerIndexIsBelowTheLimitAndExclusive) {
  aclnn_test::ScopedThreads scoped(4);
  for (int max_workers : {0, 1, 2, 3, 8}) {
    const int limit = max_workers <= 0 ? 4 : std::min(max_workers, 4);
    std::vector<std::atomic<int>> busy(8);
    std::atomic<int> bad{0}, tasks{0};
    std::mutex mu;
    std::set<std::pair<std::thread::id, int>> seen;
    ThreadPool::Global().ParallelFor(200, max_workers, [&](int64_t, int worker) {
      if (worker < 0 || worker >= limit) {
        bad.fetch_add(1);
        return;
      }
      if (busy[worker].fetch_add(1) != 0) bad.fetch_add(1);
      std::this_thread::sleep_for(std::chrono::microseconds(50));
      busy[worker].fetch_sub(1);
      tasks.fetch_add(1);
      std::lock_guard<std::mutex> lock(mu);
      seen.insert({std::this_thread::get_id(), worker});
    });
    EXPECT_EQ(bad.load(), 0) << "max_workers " << max_workers;
    EXPECT_EQ(tasks.load(), 200);
    for (const auto& [id, worker] : seen) {
      if (id == std::this_thread::get_id()) {
        EXPECT_EQ(worker, 0) << "the caller is worker 0";
      }
    }
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

#if defined(__linux__)
namespace {
std::atomic<bool> g_hold{false};
std::atomic<int> g_held{0};
void HoldHere(int) {  // async-signal-safe: atomics and nanosleep
  g_held.fetch_add(1);
  while (g_hold.load()) {
    timespec ts{0, 100000};
    nanosleep(&ts, nullptr);
  }
}
std::vector<pid_t> PoolThreads() {  // named by the pool
  std::vector<pid_t> tids;
  if (DIR* d = opendir("/proc/self/task")) {
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] == '.') continue;
      std::ifstream comm(std::string("/proc/self/task/") + e->d_name + "/comm");
      std::string name;
      std::getline(comm, name);
      if (name == "aclnn_worker") tids.push_back(static_cast<pid_t>(std::stoi(e->d_name)));
    }
    closedir(d);
  }
  return tids;
}
}  // namespace

// A helper that the OS does not run (here: held in a signal handler; in practice a core taken by
// another thread, e.g. a spinning OpenMP worker) must not hold up a call: once the caller has run
// every task it revokes the helper's unclaimed offer and returns. Before, it waited for the
// helper to check in, which on a loaded machine cost a scheduler time slice per call.
TEST(ThreadPool, ACallDoesNotWaitForAHelperThatCannotRun) {
  aclnn_test::ScopedThreads scoped(2);
  ThreadPool::Global().ParallelFor(4, 0, [](int64_t) {});  // the helper thread exists
  const std::vector<pid_t> helpers = PoolThreads();
  ASSERT_EQ(helpers.size(), 1u);
  struct sigaction sa = {}, old = {};
  sa.sa_handler = HoldHere;
  sigemptyset(&sa.sa_mask);
  ASSERT_EQ(sigaction(SIGUSR1, &sa, &old), 0);
  g_hold = true;
  g_held = 0;
  ASSERT_EQ(syscall(SYS_tgkill, getpid(), helpers[0], SIGUSR1), 0);
  for (int i = 0; i < 5000 && g_held.load() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_EQ(g_held.load(), 1) << "the helper did not enter the handler";
  // If the call waited for the helper, this releases it after 3 s (and the test fails).
  std::atomic<bool> done{false};
  std::thread watchdog([&] {
    for (int i = 0; i < 300 && !done.load(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    g_hold = false;
  });
  std::vector<std::atomic<int>> hits(64);
  ThreadPool::Global().ParallelFor(64, 0, [&](int64_t t) { hits[t].fetch_add(1); });
  const bool returned_while_held = g_hold.load();
  done = true;
  watchdog.join();
  g_hold = false;
  sigaction(SIGUSR1, &old, nullptr);
  EXPECT_TRUE(returned_while_held) << "the call waited for a helper that could not run";
  for (int t = 0; t < 64; ++t) EXPECT_EQ(hits[t].load(), 1) << "task " << t;
  // The released helper takes part in the next calls again.
  std::atomic<int> n{0};
  for (int rep = 0; rep < 100; ++rep) ThreadPool::Global().ParallelFor(16, 0, [&](int64_t) { n.fetch_add(1); });
  EXPECT_EQ(n.load(), 1600);
}

namespace {
// Waits (up to 5 s) until n helpers sleep, their spin over.
bool WaitUntilSleeping(int n) {
  for (int i = 0; i < 5000; ++i) {
    if (ThreadPool::Global().SleepingWorkers() == n) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}
}  // namespace

// wake_workers: a call that may use a helper but not wake it runs alone while the helper sleeps
// (no system call, no late helper to wait for), and does not start the threads of a fresh pool.
TEST(ThreadPool, ACallDoesNotWakeHelpersBeyondItsWakeLimit) {
  aclnn_test::ScopedThreads scoped(2);
  ThreadPool::Global().Shutdown();
  std::this_thread::sleep_for(std::chrono::milliseconds(2));  // not in a run with an earlier call
  std::vector<int> worker_of(64, -1);
  ThreadPool::Global().ParallelFor(64, 2, [&](int64_t t, int w) { worker_of[t] = w; }, 1);
  EXPECT_TRUE(PoolThreads().empty()) << "threads started for a call that wakes none";
  for (int w : worker_of) EXPECT_EQ(w, 0);
  ThreadPool::Global().ParallelFor(4, 0, [](int64_t) {});  // starts the helper
  ASSERT_TRUE(WaitUntilSleeping(1)) << "the helper never went to sleep";
  std::this_thread::sleep_for(std::chrono::milliseconds(2));  // no call in a run
  // Two calls in a row (the second within a spin of the first) leave it asleep too.
  for (int call = 0; call < 2; ++call) {
    std::fill(worker_of.begin(), worker_of.end(), -1);
    ThreadPool::Global().ParallelFor(64, 2, [&](int64_t t, int w) {
      std::this_thread::sleep_for(std::chrono::microseconds(5));
      worker_of[t] = w;
    }, 1);
    for (int t = 0; t < 64; ++t)
      EXPECT_EQ(worker_of[t], 0) << "call " << call << " task " << t << " ran on a helper that was asleep";
  }
  EXPECT_EQ(ThreadPool::Global().SleepingWorkers(), 1);
}

// ... but from the third call of a run (each within a spin of the last) such calls wake it, and
// it takes part: otherwise the helpers of a loop of short calls would sleep forever.
TEST(ThreadPool, CallsInARunWakeTheHelper) {
  aclnn_test::ScopedThreads scoped(2);
  ThreadPool::Global().ParallelFor(4, 0, [](int64_t) {});
  ASSERT_TRUE(WaitUntilSleeping(1)) << "the helper never went to sleep";
  std::atomic<int> on_helper{0}, n{0};
  int reps = 0;
  for (; reps < 500 && on_helper.load() == 0; ++reps) {
    ThreadPool::Global().ParallelFor(16, 2, [&](int64_t, int w) {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
      if (w != 0) on_helper.fetch_add(1);
      n.fetch_add(1);
    }, 1);
  }
  EXPECT_GT(on_helper.load(), 0) << "the helper never joined a run of calls";
  EXPECT_EQ(n.load(), 16 * reps);
}

#endif

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
