// A fixed pool of worker threads: the CPU stand-in for an NPU's AI cores (blockDim = workers
// used, blockIdx = task index). The caller is worker 0, so a one-task call never wakes a thread,
// and a call with T tasks wakes at most T - 1 workers. Tasks are claimed dynamically, but every
// task's data is fixed by the planner, so results never depend on how many workers ran them.
// A call returns once every task is done: woken workers that have not started by then (the OS
// gave their core to another thread) are released from the call rather than waited for.
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
  using TaskFn = void (*)(void* ctx, int64_t task);

  // The process-wide pool, created on first use with NumThreadsSetting() workers.
  static ThreadPool& Global();

  // Workers including the caller.
  int size() const;

  // Runs fn(ctx, t) for every t in [0, num_tasks) on at most max_workers threads (<= 0: all).
  void Run(int64_t num_tasks, int max_workers, TaskFn fn, void* ctx);

  template <typename F>
  void ParallelFor(int64_t num_tasks, int max_workers, F&& body) {
    using Body = std::remove_reference_t<F>;
    Run(num_tasks, max_workers,
        [](void* ctx, int64_t task) { (*static_cast<Body*>(ctx))(task); },
        const_cast<void*>(static_cast<const void*>(&body)));
  }

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
