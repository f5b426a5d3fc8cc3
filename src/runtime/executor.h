// Executors (aclOpExecutor): what an operator's GetWorkspaceSize returns. An executor holds a
// plan (validated shapes, tiling, kernel choice; immutable and shared) and the addresses of the
// tensors bound to it. Launch() checks the workspace, snapshots plan + addresses into the stream
// work, and consumes the executor unless it is repeatable.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "acl/acl.h"
#include "runtime/handles.h"

namespace aclnn_portable {

constexpr size_t kMaxOpTensors = 8;

struct TensorAddrs {
  std::array<void*, kMaxOpTensors> inputs{};
  std::array<void*, kMaxOpTensors> outputs{};
};

class OpPlan {
 public:
  virtual ~OpPlan() = default;
  virtual const char* ApiName() const = 0;  // the second-stage entry point, for messages
  virtual size_t NumInputs() const = 0;
  virtual size_t NumOutputs() const = 0;
  virtual uint64_t WorkspaceSize() const = 0;
  // Rules that depend on addresses (null data, aliasing), checked again at launch after
  // aclSet{Input,Output}TensorAddr. Fails with a message, like the first stage.
  virtual aclnnStatus CheckAddrs(const TensorAddrs& addrs) const = 0;
  // Runs the operator. Cannot fail; never allocates for contiguous tensors.
  virtual void Run(const TensorAddrs& addrs, void* workspace) const = 0;
};

}  // namespace aclnn_portable

struct aclOpExecutor {
  std::shared_ptr<const aclnn_portable::OpPlan> plan;
  aclnn_portable::TensorAddrs addrs;
  bool repeatable = false;
};

namespace aclnn_portable {

HandleRegistry<aclOpExecutor>& LiveExecutors();

// Registers a new executor for `plan` bound to `addrs`.
aclOpExecutor* NewExecutor(std::shared_ptr<const OpPlan> plan, const TensorAddrs& addrs);

// The body of every operator's second stage (aclnnXxx(workspace, size, executor, stream)).
aclnnStatus Launch(const char* api, void* workspace, uint64_t workspace_size,
                   aclOpExecutor* executor, aclrtStream stream);

}  // namespace aclnn_portable
