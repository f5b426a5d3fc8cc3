#include "runtime/runtime.h"

#include <mutex>

#include "acl/acl.h"
#include "platform/thread_pool.h"
#include "runtime/error.h"
#include "runtime/executor.h"
#include "runtime/stream.h"
#include "runtime/tensor.h"

namespace aclnn_portable {
namespace {
std::mutex g_init_mu;
bool g_initialized = false;
}  // namespace
}  // namespace aclnn_portable

using namespace aclnn_portable;

extern "C" aclError aclInit(const char* configPath) {
  ClearRecentError();
  std::lock_guard<std::mutex> lock(g_init_mu);
  if (g_initialized)
    return Fail(ACL_ERROR_REPEAT_INITIALIZE, "aclInit", "already initialized (call aclFinalize first)");
  g_initialized = true;  // configPath is accepted and ignored: there is nothing to configure
  return ACL_SUCCESS;
}

extern "C" aclError aclFinalize(void) {
  ClearRecentError();
  std::lock_guard<std::mutex> lock(g_init_mu);
  if (!g_initialized)
    return Fail(ACL_ERROR_REPEAT_FINALIZE, "aclFinalize", "not initialized (aclInit was not called, or already finalized)");
  g_initialized = false;
  for (Stream* s : LiveStreams().TakeAll()) delete s;  // each drains its queue first
  for (aclOpExecutor* e : LiveExecutors().TakeAll()) delete e;
  for (aclTensor* t : LiveTensors().TakeAll()) delete t;
  ThreadPool::Global().Shutdown();
  FreeAllBlocks();
  return ACL_SUCCESS;
}

extern "C" aclError aclrtSetDevice(int32_t deviceId) {
  ClearRecentError();
  if (deviceId != 0)
    return Fail(ACL_ERROR_RT_INVALID_DEVICEID, "aclrtSetDevice",
                StrFormat("deviceId must be 0 (the host is the only device), got %d", deviceId));
  return ACL_SUCCESS;
}

extern "C" aclError aclrtResetDevice(int32_t deviceId) {
  ClearRecentError();
  if (deviceId != 0)
    return Fail(ACL_ERROR_RT_INVALID_DEVICEID, "aclrtResetDevice",
                StrFormat("deviceId must be 0 (the host is the only device), got %d", deviceId));
  return ACL_SUCCESS;
}

extern "C" aclError aclrtGetDevice(int32_t* deviceId) {
  ClearRecentError();
  if (deviceId == nullptr) return Fail(ACL_ERROR_INVALID_PARAM, "aclrtGetDevice", "deviceId must not be null");
  *deviceId = 0;
  return ACL_SUCCESS;
}

extern "C" aclError aclrtGetDeviceCount(uint32_t* count) {
  ClearRecentError();
  if (count == nullptr) return Fail(ACL_ERROR_INVALID_PARAM, "aclrtGetDeviceCount", "count must not be null");
  *count = 1;
  return ACL_SUCCESS;
}

extern "C" aclError aclrtSynchronizeDevice(void) {
  ClearRecentError();
  // Each stream is synchronized under the registry lock, so a concurrent aclrtDestroyStream
  // (which removes it first) cannot free it meanwhile; streams destroyed since the snapshot are
  // skipped. Stream work never takes the registry lock, so this cannot deadlock; other threads'
  // stream calls wait until the queue being synchronized has drained.
  for (Stream* s : LiveStreams().Snapshot())
    LiveStreams().WithLive(s, [](Stream* live) { live->Synchronize(); });
  return ACL_SUCCESS;
}

extern "C" const char* aclGetRecentErrMsg(void) { return RecentError(); }
