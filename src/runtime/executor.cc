#include "runtime/executor.h"

#include "runtime/error.h"
#include "runtime/stream.h"
#include "runtime/tensor.h"

namespace aclnn_portable {

HandleRegistry<aclOpExecutor>& LiveExecutors() {
  static auto* registry = new HandleRegistry<aclOpExecutor>();
  return *registry;
}

aclOpExecutor* NewExecutor(std::shared_ptr<const OpPlan> plan, const TensorAddrs& addrs) {
  auto* e = new aclOpExecutor;
  e->plan = std::move(plan);
  e->addrs = addrs;
  LiveExecutors().Add(e);
  return e;
}

aclnnStatus Launch(const char* api, void* workspace, uint64_t workspace_size,
                   aclOpExecutor* executor, aclrtStream stream) {
  if (executor == nullptr) return Fail(ACLNN_ERR_PARAM_NULLPTR, api, "executor must not be null");
  if (!LiveExecutors().Contains(executor))
    return Fail(ACLNN_ERR_PARAM_INVALID, api,
                "executor is not live (already run and not repeatable, destroyed, or released by "
                "aclFinalize)");
  const OpPlan& plan = *executor->plan;
  const uint64_t need = plan.WorkspaceSize();
  if (need > 0 && workspace == nullptr)
    return Fail(ACLNN_ERR_PARAM_INVALID, api,
                StrFormat("workspace is null but the executor needs %llu bytes",
                          static_cast<unsigned long long>(need)));
  if (workspace_size < need)
    return Fail(ACLNN_ERR_PARAM_INVALID, api,
                StrFormat("workspaceSize must be at least %llu bytes (from GetWorkspaceSize), got %llu",
                          static_cast<unsigned long long>(need),
                          static_cast<unsigned long long>(workspace_size)));
  if (const aclnnStatus st = plan.CheckAddrs(executor->addrs); st != ACLNN_SUCCESS) return st;
  if (stream != nullptr && !LiveStreams().Contains(static_cast<Stream*>(stream)))
    return Fail(ACLNN_ERR_PARAM_INVALID, api,
                "stream is not a live aclrtStream (not created by aclrtCreateStream, or destroyed)");

  std::shared_ptr<const OpPlan> keep = executor->plan;
  const TensorAddrs addrs = executor->addrs;
  if (!executor->repeatable && LiveExecutors().Remove(executor)) delete executor;
  if (stream == nullptr) {
    keep->Run(addrs, workspace);
    return ACLNN_SUCCESS;
  }
  return SubmitToStream(api, stream, [keep, addrs, workspace] { keep->Run(addrs, workspace); });
}

namespace {

aclnnStatus SetAddr(const char* api, aclOpExecutor* executor, size_t index, aclTensor* tensor,
                    void* addr, bool input) {
  if (executor == nullptr) return Fail(ACLNN_ERR_PARAM_NULLPTR, api, "executor must not be null");
  if (!LiveExecutors().Contains(executor))
    return Fail(ACLNN_ERR_PARAM_INVALID, api, "executor is not live (consumed, destroyed or finalized)");
  const size_t count = input ? executor->plan->NumInputs() : executor->plan->NumOutputs();
  if (index >= count)
    return Fail(ACLNN_ERR_PARAM_INVALID, api,
                StrFormat("index must be < %zu (the operator's %s), got %zu", count,
                          input ? "inputs" : "outputs", index));
  if (tensor != nullptr && !LiveTensors().Contains(tensor))
    return Fail(ACLNN_ERR_PARAM_INVALID, api, "tensor is not a live aclTensor");
  (input ? executor->addrs.inputs : executor->addrs.outputs)[index] = addr;
  if (tensor != nullptr) tensor->data = addr;
  return ACLNN_SUCCESS;
}

}  // namespace
}  // namespace aclnn_portable

using namespace aclnn_portable;

extern "C" aclnnStatus aclSetAclOpExecutorRepeatable(aclOpExecutor* executor) {
  ClearRecentError();
  if (executor == nullptr)
    return Fail(ACLNN_ERR_PARAM_NULLPTR, "aclSetAclOpExecutorRepeatable", "executor must not be null");
  if (!LiveExecutors().Contains(executor))
    return Fail(ACLNN_ERR_PARAM_INVALID, "aclSetAclOpExecutorRepeatable",
                "executor is not live (consumed, destroyed or finalized)");
  executor->repeatable = true;
  return ACLNN_SUCCESS;
}

extern "C" aclnnStatus aclDestroyAclOpExecutor(aclOpExecutor* executor) {
  ClearRecentError();
  if (executor == nullptr) return ACLNN_SUCCESS;
  if (!LiveExecutors().Remove(executor))
    return Fail(ACLNN_ERR_PARAM_INVALID, "aclDestroyAclOpExecutor",
                "executor is not live (consumed by its run, already destroyed, or finalized)");
  delete executor;  // queued runs keep the plan alive through their own reference
  return ACLNN_SUCCESS;
}

extern "C" aclnnStatus aclSetInputTensorAddr(aclOpExecutor* executor, const size_t index,
                                             aclTensor* tensor, void* addr) {
  ClearRecentError();
  return SetAddr("aclSetInputTensorAddr", executor, index, tensor, addr, true);
}

extern "C" aclnnStatus aclSetOutputTensorAddr(aclOpExecutor* executor, const size_t index,
                                              aclTensor* tensor, void* addr) {
  ClearRecentError();
  return SetAddr("aclSetOutputTensorAddr", executor, index, tensor, addr, false);
}
