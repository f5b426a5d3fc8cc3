// A fixed pool of worker threads: the CPU stand-in for an NPU's AI cores (blockDim = workers
// used, blockIdx = task index). The caller is worker 0, so a one-task call never wakes a thread,
// and a call with T tasks wakes at most T - 1 workers. Tasks are claimed dynamically, but every
// task's data is fixed by the planner, so results never depend on how many workers ran them.
// A call returns once every task is done: woken workers that have not started by then (the OS
// gave their core to another thread) are released from the call rather than waited for.
// An idle worker spins a while (kSpinTime in thread_pool.cc) before it sleeps. A call may limit
// the helpers it wakes from sleep (wake_workers) below those it may use (max_workers): a helper
// still spinning costs a call little (a store it sees within ~1 us), a sleeping one a system call
// and tens of microseconds before it runs, more than a short call takes.
//
// The pool serves one call at a time; a call made while it is busy (from another stream or host
// thread) runs its tasks on the calling thread instead of waiting, which keeps concurrent callers
// deadlock-free and results unchanged.
#pragma once

#include <cstdint>
#include <type_traits>

namespace aclnn_portable {

class ThreadPool {
 public:
  // worker: the index of the thread running the task, in [0, max_workers) (the caller is 0);
  // no two tasks of one call run at the same time with the same index, so a call can give each
  // index its own scratch (a core's UB on the NPU).
  using TaskFn = void (*)(void* ctx, int64_t task, int worker);

  // The process-wide pool, created on first use with NumThreadsSetting() workers.
  static ThreadPool& Global();

  // Workers including the caller.
  int size() const;

  // Runs fn(ctx, t, worker) for every t in [0, num_tasks) on at most max_workers threads (<= 0:
  // all), of which at most wake_workers (caller included; <= 0: max_workers) are woken from
  // sleep: helpers beyond those join only if they are still spinning, or if the call is the
  // third or later of a run of calls, each beginning within a spin of the last one's end.
  // Returns the threads offered the call, the caller included (an upper bound on those that ran
  // tasks).
  int Run(int64_t num_tasks, int max_workers, TaskFn fn, void* ctx, int wake_workers = 0);

  // body(task), or body(task, worker) (see TaskFn).
  template <typename F>
  int ParallelFor(int64_t num_tasks, int max_workers, F&& body, int wake_workers = 0) {
    using Body = std::remove_reference_t<F>;
    return Run(num_tasks, max_workers,
        [](void* ctx, int64_t task, int worker) {
          if constexpr (std::is_invocable_v<Body&, int64_t, int>) (*static_cast<Body*>(ctx))(task, worker);
          else (*static_cast<Body*>(ctx))(task);
        },
        const_cast<void*>(static_cast<const void*>(&body)), wake_workers);
  }

  // Workers (not counting the caller) asleep now, their spin over (tests).
  int SleepingWorkers() const;

  // Stops and joins the worker threads (aclFinalize); the next Run starts them again.
  void Shutdown();
  // Changes the number of workers (tests; the environment sets it for a process).
  void Resize(int num_threads);

  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

 private:
  ThreadPool();
  ~ThreadPool();
  struct Impl;
  Impl* impl_;
};

// ACLNN_PORTABLE_NUM_THREADS when set to a positive integer, else the CPUs this process may use.
int NumThreadsSetting();

}  // namespace aclnn_portable
