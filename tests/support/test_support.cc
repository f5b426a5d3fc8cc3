#include "support/test_support.h"

#include "platform/thread_pool.h"

namespace aclnn_test {

using aclnn_portable::Isa;
using aclnn_portable::ThreadPool;

ScopedThreads::ScopedThreads(int n) : saved_(ThreadPool::Global().size()) { ThreadPool::Global().Resize(n); }
ScopedThreads::~ScopedThreads() { ThreadPool::Global().Resize(saved_); }

ScopedIsa::ScopedIsa(Isa isa) : saved_(aclnn_portable::ActiveIsa()) { aclnn_portable::TrySetActiveIsa(isa); }
ScopedIsa::~ScopedIsa() { aclnn_portable::TrySetActiveIsa(saved_); }

std::vector<Isa> SupportedIsas() {
  std::vector<Isa> out;
  for (Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512, Isa::kAvx512Bf16})
    if (aclnn_portable::IsaSupported(isa)) out.push_back(isa);
  return out;
}

uint64_t Rng::Next() {
  uint64_t z = (s_ += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

double Rng::Uniform(double lo, double hi) {
  return lo + (hi - lo) * (static_cast<double>(Next() >> 11) * (1.0 / 9007199254740992.0));
}

uint64_t HashBytes(const void* data, size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

}  // namespace aclnn_test
