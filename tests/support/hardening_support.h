// Helpers shared by the runtime, limits and stress tests: an operator plan written only for the
// tests (so the runtime's executor/stream contracts are tested without depending on any real
// operator), and a buffer with guard zones that proves nothing was written outside it.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/error.h"
#include "runtime/executor.h"

namespace aclnn_test {

// out[i] = in[i] * 2 + 1 over n floats. The workspace (when the plan asks for one) is filled
// with a pattern and read back, so a launch with a too-small workspace would be caught by ASan.
class AffinePlan final : public aclnn_portable::OpPlan {
 public:
  AffinePlan(int64_t n, uint64_t workspace_bytes) : n_(n), workspace_(workspace_bytes) {}
  const char* ApiName() const override { return "aclnnTestAffine"; }
  size_t NumInputs() const override { return 1; }
  size_t NumOutputs() const override { return 1; }
  uint64_t WorkspaceSize() const override { return workspace_; }
  aclnnStatus CheckAddrs(const aclnn_portable::TensorAddrs& a) const override {
    if (n_ > 0 && (a.inputs[0] == nullptr || a.outputs[0] == nullptr))
      return aclnn_portable::Fail(ACLNN_ERR_PARAM_NULLPTR, ApiName(),
                                  "input 0 and output 0 must not be null");
    return ACLNN_SUCCESS;
  }
  void Run(const aclnn_portable::TensorAddrs& a, void* workspace) const override {
    if (workspace_ > 0) std::memset(workspace, 0x5a, workspace_);
    unsigned sum = 0;
    for (uint64_t i = 0; i < workspace_; ++i) sum += static_cast<unsigned char*>(workspace)[i];
    const float bias = sum == 0x5a * workspace_ ? 1.0f : -1e30f;  // a wrong workspace shows
    const float* in = static_cast<const float*>(a.inputs[0]);
    float* out = static_cast<float*>(a.outputs[0]);
    for (int64_t i = 0; i < n_; ++i) out[i] = in[i] * 2.0f + bias;
  }

 private:
  int64_t n_;
  uint64_t workspace_;
};

// A plan's executor bound to in/out.
inline aclOpExecutor* NewAffineExecutor(int64_t n, uint64_t workspace_bytes, const float* in,
                                        float* out) {
  aclnn_portable::TensorAddrs addrs;
  addrs.inputs[0] = const_cast<float*>(in);
  addrs.outputs[0] = out;
  return aclnn_portable::NewExecutor(std::make_shared<AffinePlan>(n, workspace_bytes), addrs);
}

inline aclnnStatus LaunchAffine(void* ws, uint64_t ws_size, aclOpExecutor* e, aclrtStream s) {
  return aclnn_portable::Launch("aclnnTestAffine", ws, ws_size, e, s);
}

// `size` bytes with kGuard bytes of a sentinel before and after; Intact() checks the guards.
class GuardedBuffer {
 public:
  static constexpr size_t kGuard = 64;
  static constexpr unsigned char kSentinel = 0xa5;
  explicit GuardedBuffer(size_t size) : size_(size), bytes_(size + 2 * kGuard + 64, kSentinel) {
    // keep data() 64-byte aligned, like aclrtMalloc
    const uintptr_t raw = reinterpret_cast<uintptr_t>(bytes_.data()) + kGuard;
    lead_ = kGuard + ((64 - raw % 64) % 64);
  }
  void* data() { return bytes_.data() + lead_; }
  size_t size() const { return size_; }
  bool Intact() const {
    for (size_t i = 0; i < lead_; ++i)
      if (bytes_[i] != kSentinel) return false;
    for (size_t i = lead_ + size_; i < bytes_.size(); ++i)
      if (bytes_[i] != kSentinel) return false;
    return true;
  }

 private:
  size_t size_;
  size_t lead_ = kGuard;
  std::vector<unsigned char> bytes_;
};

inline std::string RecentMessage() { return aclGetRecentErrMsg(); }

}  // namespace aclnn_test
