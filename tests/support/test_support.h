// Shared test helpers: scoped thread-count and ISA overrides, deterministic random data, hashes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "platform/cpu_features.h"

namespace aclnn_test {

// Resizes the global thread pool for the scope (results must not change with it).
class ScopedThreads {
 public:
  explicit ScopedThreads(int n);
  ~ScopedThreads();
 private:
  int saved_;
};

// Forces a kernel ISA for the scope; has no effect when the CPU lacks it (check IsaSupported).
class ScopedIsa {
 public:
  explicit ScopedIsa(aclnn_portable::Isa isa);
  ~ScopedIsa();
 private:
  aclnn_portable::Isa saved_;
};

std::vector<aclnn_portable::Isa> SupportedIsas();

// splitmix64-based generator: the same numbers on every machine.
class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed) {}
  uint64_t Next();
  double Uniform(double lo, double hi);  // [lo, hi)
 private:
  uint64_t s_;
};

uint64_t HashBytes(const void* data, size_t n);  // FNV-1a 64

}  // namespace aclnn_test
