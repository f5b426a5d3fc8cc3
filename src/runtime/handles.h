// A set of live handles of one kind (tensors, executors, streams). Public calls look a handle up
// before touching it, so a destroyed, finalized or foreign pointer fails with a message instead
// of crashing.
#pragma once

#include <mutex>
#include <unordered_set>
#include <vector>

namespace aclnn_portable {

template <typename T>
class HandleRegistry {
 public:
  void Add(T* p) {
    std::lock_guard<std::mutex> lock(mu_);
    live_.insert(p);
  }
  // Returns false when p was not live (and so must not be deleted by the caller).
  bool Remove(const T* p) {
    std::lock_guard<std::mutex> lock(mu_);
    return live_.erase(const_cast<T*>(p)) > 0;
  }
  bool Contains(const T* p) const {
    std::lock_guard<std::mutex> lock(mu_);
    return live_.count(const_cast<T*>(p)) > 0;
  }
  // Runs fn(p) under the registry lock when p is live (so p cannot be removed meanwhile).
  template <typename Fn>
  bool WithLive(T* p, Fn&& fn) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!live_.count(p)) return false;
    fn(p);
    return true;
  }
  std::vector<T*> Snapshot() const {
    std::lock_guard<std::mutex> lock(mu_);
    return std::vector<T*>(live_.begin(), live_.end());
  }
  // Empties the registry and hands every live handle to the caller (aclFinalize).
  std::vector<T*> TakeAll() {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<T*> all(live_.begin(), live_.end());
    live_.clear();
    return all;
  }

 private:
  mutable std::mutex mu_;
  std::unordered_set<T*> live_;
};

}  // namespace aclnn_portable
