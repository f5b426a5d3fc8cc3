#include "platform/thread_pool.h"

#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define ACLNN_CPU_RELAX() _mm_pause()
#elif defined(__aarch64__)
#define ACLNN_CPU_RELAX() asm volatile("yield")
#else
#define ACLNN_CPU_RELAX() ((void)0)
#endif

namespace aclnn_portable {

int NumThreadsSetting() {
  if (const char* env = std::getenv("ACLNN_PORTABLE_NUM_THREADS")) {
    char* end = nullptr;
    const long v = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && v >= 1 && v <= 1024) return static_cast<int>(v);
  }
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  const unsigned hc = std::thread::hardware_concurrency();
  return hc > 0 ? static_cast<int>(hc) : 1;
}

namespace {
// How long an idle worker (or a caller waiting for workers) spins before it sleeps: long enough
// that back-to-back operator calls (a training step) find the workers awake, short enough not to
// steal a small machine from its caller. Measured in time, not iterations: PAUSE costs ~10 cycles
// on some cores and ~140 on others.
constexpr auto kSpinTime = std::chrono::microseconds(50);

// Spins until pred() or kSpinTime has passed; returns pred().
template <typename Pred>
bool SpinUntil(Pred pred) {
  const auto deadline = std::chrono::steady_clock::now() + kSpinTime;
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (pred()) return true;
      ACLNN_CPU_RELAX();
    }
    if (std::chrono::steady_clock::now() >= deadline) return pred();
  }
}
}  // namespace

struct ThreadPool::Impl {
  // A worker's offer word: (job sequence << 2) | state. The caller offers each job to the
  // helpers it wakes; a helper takes the offer before it reads the job, and once the caller has
  // run out of tasks it revokes the offers not yet taken and returns. So a call never waits for
  // a helper that the OS has not scheduled yet (another process's thread, or a spinning OpenMP
  // worker of the same process, holding its core), only for helpers that are running a task.
  static constexpr uint32_t kOffered = 0, kTaken = 1, kRevoked = 2;
  struct alignas(64) Worker {
    std::atomic<uint32_t> offer{kRevoked};
    // Set while the worker waits in the kernel for an offer (its spin over); read by callers
    // that wake only spinning helpers. A hint: the offer protocol is right either way.
    std::atomic<bool> asleep{false};
    int index = 0;  // its place in workers: the worker index its tasks see
    std::thread thread;
  };

  std::mutex call_mu;  // one call at a time; held by the calling thread for the whole call
  std::mutex life_mu;  // guards starting / stopping threads
  int num_threads = 1;
  std::vector<std::unique_ptr<Worker>> workers;  // workers[0] unused: the caller is worker 0
  bool started = false;
  std::atomic<bool> stop{false};

  // The current job: written by the caller only while no helper holds a taken offer.
  uint32_t job_seq = 0;
  TaskFn fn = nullptr;
  void* ctx = nullptr;
  int64_t num_tasks = 0;
  // When the last call through the pool ended, and how many calls before this one each began
  // within a spin of the last one's end (written by the caller holding call_mu).
  std::chrono::steady_clock::time_point last_end{};
  int run_length = 0;
  alignas(64) std::atomic<int64_t> next_task{0};
  alignas(64) std::atomic<int> pending_workers{0};

  void RunTasks(int worker) {
    for (;;) {
      const int64_t t = next_task.fetch_add(1, std::memory_order_relaxed);
      if (t >= num_tasks) break;
      fn(ctx, t, worker);
    }
  }

  void WorkerLoop(Worker* self) {
    uint32_t seen = kRevoked;  // the initial word (job 0, revoked), whatever has been offered since
    for (;;) {
      SpinUntil([&] { return self->offer.load(std::memory_order_acquire) != seen; });
      uint32_t o = self->offer.load(std::memory_order_acquire);
      while (o == seen) {
        self->asleep.store(true, std::memory_order_relaxed);
        self->offer.wait(seen, std::memory_order_acquire);
        self->asleep.store(false, std::memory_order_relaxed);
        o = self->offer.load(std::memory_order_acquire);
      }
      seen = o;  // a word other than this one is looked at again
      if ((o & 3) != kOffered) continue;  // revoked before this thread ran
      uint32_t expected = o;
      if (!self->offer.compare_exchange_strong(expected, o | kTaken, std::memory_order_acq_rel)) continue;
      seen = o | kTaken;
      if (stop.load(std::memory_order_acquire)) return;
      RunTasks(self->index);
      if (pending_workers.fetch_sub(1, std::memory_order_acq_rel) == 1) pending_workers.notify_one();
    }
  }

  // job_seq in [1, 2^30): it fits the offer word, and no offer is the initial word.
  void NextJob() { job_seq = job_seq + 1 < (1u << 30) ? job_seq + 1 : 1; }
  // Offers the current job (job_seq) to workers [1, helpers], except those from wake on that
  // are asleep; returns how many it offered it to.
  int Offer(int helpers, int wake) {
    int offered = 0;
    for (int i = 1; i <= helpers; ++i) {
      if (i >= wake && workers[i]->asleep.load(std::memory_order_relaxed)) continue;
      workers[i]->offer.store(job_seq << 2 | kOffered, std::memory_order_release);
      workers[i]->offer.notify_one();
      ++offered;
    }
    return offered;
  }

  void StartLocked() {
    if (started) return;
    stop.store(false);
    workers.clear();
    workers.resize(num_threads);
    for (int i = 1; i < num_threads; ++i) {
      workers[i] = std::make_unique<Worker>();
      Worker* w = workers[i].get();
      w->index = i;
      w->thread = std::thread([this, w] { WorkerLoop(w); });
#if defined(__linux__)
      pthread_setname_np(w->thread.native_handle(), "aclnn_worker");  // for top, gdb and tests
#endif
    }
    started = true;
  }

  void StopLocked() {
    if (!started) return;
    stop.store(true, std::memory_order_release);
    NextJob();  // an offer every worker takes, and stops at
    Offer(num_threads - 1, num_threads);
    for (int i = 1; i < num_threads; ++i) workers[i]->thread.join();
    workers.clear();
    started = false;
  }
};

ThreadPool::ThreadPool() : impl_(new Impl) { impl_->num_threads = NumThreadsSetting(); }
ThreadPool::~ThreadPool() {
  Shutdown();
  delete impl_;
}

ThreadPool& ThreadPool::Global() {
  static ThreadPool pool;  // joined by its destructor at exit if aclFinalize did not
  return pool;
}

int ThreadPool::size() const { return impl_->num_threads; }

int ThreadPool::Run(int64_t num_tasks, int max_workers, TaskFn fn, void* ctx, int wake_workers) {
  if (num_tasks <= 0) return 0;
  Impl& p = *impl_;
  int64_t want = max_workers <= 0 ? p.num_threads : std::min(max_workers, p.num_threads);
  want = std::min<int64_t>(want, num_tasks);
  int wake = wake_workers <= 0 ? static_cast<int>(want) : std::min<int>(wake_workers, static_cast<int>(want));
  std::unique_lock<std::mutex> call(p.call_mu, std::defer_lock);
  auto serial = [&] {
    for (int64_t t = 0; t < num_tasks; ++t) fn(ctx, t, 0);
    return 1;
  };
  // Nothing to share, or the pool is serving another call.
  if (want <= 1 || !call.try_lock()) return serial();
  bool started;
  {
    std::lock_guard<std::mutex> life(p.life_mu);
    started = p.started;
  }
  // Helpers beyond wake that sleep (or were never started) are left out, unless this call is
  // the third or later of a run, each call beginning within a spin of the last one's end: the
  // next calls of the run then find the woken helpers spinning. Without this the helpers of a
  // loop of short calls would never wake; two calls in a row (two losses of a step) do not wake
  // them.
  const auto start = std::chrono::steady_clock::now();
  p.run_length = start - p.last_end < kSpinTime ? p.run_length + 1 : 0;
  if (wake < want) {
    bool asleep = !started;
    for (int i = wake; i < want && !asleep; ++i) asleep = p.workers[i]->asleep.load(std::memory_order_relaxed);
    if (asleep && p.run_length >= 2) wake = static_cast<int>(want);
  }
  if (!started) {
    if (wake <= 1) {  // no thread to share the call with without waking one
      serial();
      p.last_end = std::chrono::steady_clock::now();
      return 1;
    }
    std::lock_guard<std::mutex> life(p.life_mu);
    p.StartLocked();
  }
  p.fn = fn;
  p.ctx = ctx;
  p.num_tasks = num_tasks;
  p.next_task.store(0, std::memory_order_relaxed);
  const int helpers = static_cast<int>(want) - 1;
  // Counted before the offers (a helper may finish before Offer returns), less the helpers
  // passed over (asleep, beyond wake) after it.
  p.pending_workers.store(helpers, std::memory_order_release);
  p.NextJob();
  const int offered = p.Offer(helpers, wake);
  if (offered < helpers) p.pending_workers.fetch_sub(helpers - offered, std::memory_order_acq_rel);
  p.RunTasks(0);
  // Every task is claimed now. Helpers that have not taken their offer never will: revoke it
  // and count them done (a helper passed over holds an older word, which the exchange leaves).
  // The others are running (or finishing) a task: wait for them.
  for (int i = 1; i <= helpers; ++i) {
    uint32_t o = p.job_seq << 2 | Impl::kOffered;
    // No notify: the offer's notify has woken the helper already, and it reads the word again.
    if (p.workers[i]->offer.compare_exchange_strong(o, p.job_seq << 2 | Impl::kRevoked, std::memory_order_acq_rel))
      p.pending_workers.fetch_sub(1, std::memory_order_acq_rel);
  }
  SpinUntil([&] { return p.pending_workers.load(std::memory_order_acquire) == 0; });
  int left = p.pending_workers.load(std::memory_order_acquire);
  while (left != 0) {
    p.pending_workers.wait(left, std::memory_order_acquire);
    left = p.pending_workers.load(std::memory_order_acquire);
  }
  p.last_end = std::chrono::steady_clock::now();
  return offered + 1;
}

int ThreadPool::SleepingWorkers() const {
  std::lock_guard<std::mutex> life(impl_->life_mu);
  int n = 0;
  if (impl_->started)
    for (int i = 1; i < impl_->num_threads; ++i) n += impl_->workers[i]->asleep.load(std::memory_order_relaxed);
  return n;
}

void ThreadPool::Shutdown() {
  std::lock_guard<std::mutex> call(impl_->call_mu);
  std::lock_guard<std::mutex> life(impl_->life_mu);
  impl_->StopLocked();
}

void ThreadPool::Resize(int num_threads) {
  std::lock_guard<std::mutex> call(impl_->call_mu);
  std::lock_guard<std::mutex> life(impl_->life_mu);
  impl_->StopLocked();
  impl_->num_threads = std::max(1, num_threads);
}

}  // namespace aclnn_portable
