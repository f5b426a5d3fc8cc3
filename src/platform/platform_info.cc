#include "platform/platform_info.h"

#include <unistd.h>

#include <cstdlib>

#include "platform/thread_pool.h"

namespace aclnn_portable {
namespace {

uint64_t DetectUbBytes() {
  if (const char* env = std::getenv("ACLNN_PORTABLE_UB_BYTES")) {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(env, &end, 10);
    if (end != env && *end == '\0' && v >= 4096) return v;
  }
  long l2 = -1;
#ifdef _SC_LEVEL2_CACHE_SIZE
  l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
  if (l2 <= 0) l2 = 512 * 1024;  // a conservative private L2 when the OS does not say
  // Half of L2 for the working set: the other half keeps the next block's prefetched lines and
  // whatever the caller had there.
  return static_cast<uint64_t>(l2) / 2;
}

}  // namespace

PlatformInfo CurrentPlatform() {
  static const uint64_t ub = DetectUbBytes();
  PlatformInfo info;
  info.coreNum = ThreadPool::Global().size();
  info.ubBytes = ub;
  return info;
}

}  // namespace aclnn_portable
