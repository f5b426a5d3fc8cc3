// "Device" memory is host memory. Blocks are tracked so aclrtFree of a foreign or freed pointer
// fails cleanly, and aclFinalize can release what is left.
#include <sys/sysinfo.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "acl/acl.h"
#include "runtime/error.h"
#include "runtime/runtime.h"

namespace aclnn_portable {
namespace {

struct Blocks {
  std::mutex mu;
  std::unordered_map<void*, size_t> live;  // pointer -> padded size
};
Blocks& AllBlocks() {
  static auto* blocks = new Blocks();
  return *blocks;
}

constexpr size_t kAlignment = 64;

// RAM + swap of this host, 0 when unknown.
uint64_t HostMemoryBytes() {
  static const uint64_t bytes = [] {
    struct sysinfo info;
    if (sysinfo(&info) != 0) return uint64_t{0};
    return (static_cast<uint64_t>(info.totalram) + info.totalswap) * info.mem_unit;
  }();
  return bytes;
}

aclError Allocate(const char* api, void** ptr, size_t size) {
  if (ptr == nullptr) return Fail(ACL_ERROR_INVALID_PARAM, api, "devPtr must not be null");
  if (size == 0) return Fail(ACL_ERROR_INVALID_PARAM, api, "size must be > 0, got 0");
  // CANN pads every block: the size rounded up to 32 bytes, plus 32.
  if (size > (SIZE_MAX - 128) / 2)
    return Fail(ACL_ERROR_BAD_ALLOC, api, StrFormat("size %zu is too large to allocate", size));
  // Like a device's memory size: a block larger than this host's RAM + swap can never be
  // backed, so refuse it here rather than leave it to the allocator (ASan's aborts on sizes
  // beyond its own limit instead of returning null).
  if (const uint64_t host = HostMemoryBytes(); host > 0 && size > host)
    return Fail(ACL_ERROR_RT_MEMORY_ALLOCATION, api,
                StrFormat("size %zu bytes exceeds this host's memory (%llu bytes of RAM + swap)",
                          size, static_cast<unsigned long long>(host)));
  size_t padded = (size + 31) / 32 * 32 + 32;
  padded = (padded + kAlignment - 1) / kAlignment * kAlignment;
  void* p = std::aligned_alloc(kAlignment, padded);
  if (p == nullptr)
    return Fail(ACL_ERROR_RT_MEMORY_ALLOCATION, api,
                StrFormat("cannot allocate %zu bytes (out of memory)", size));
  Blocks& b = AllBlocks();
  std::lock_guard<std::mutex> lock(b.mu);
  b.live[p] = padded;
  *ptr = p;
  return ACL_SUCCESS;
}

aclError Release(const char* api, void* ptr) {
  if (ptr == nullptr) return Fail(ACL_ERROR_INVALID_PARAM, api, "devPtr must not be null");
  Blocks& b = AllBlocks();
  {
    std::lock_guard<std::mutex> lock(b.mu);
    if (b.live.erase(ptr) == 0)
      return Fail(ACL_ERROR_INVALID_PARAM, api,
                  "devPtr was not returned by aclrtMalloc/aclrtMallocHost, or is already freed");
  }
  std::free(ptr);
  return ACL_SUCCESS;
}

}  // namespace

void FreeAllBlocks() {
  Blocks& b = AllBlocks();
  std::unordered_map<void*, size_t> live;
  {
    std::lock_guard<std::mutex> lock(b.mu);
    live.swap(b.live);
  }
  for (auto& [p, size] : live) std::free(p);
}

}  // namespace aclnn_portable

using namespace aclnn_portable;

extern "C" aclError aclrtMalloc(void** devPtr, size_t size, aclrtMemMallocPolicy policy) {
  ClearRecentError();
  const int raw_policy = RawEnumValue(policy);
  if (raw_policy < ACL_MEM_MALLOC_HUGE_FIRST || raw_policy > ACL_MEM_MALLOC_NORMAL_ONLY_P2P)
    return Fail(ACL_ERROR_INVALID_PARAM, "aclrtMalloc",
                StrFormat("policy must be an aclrtMemMallocPolicy (0..5), got %d", raw_policy));
  return Allocate("aclrtMalloc", devPtr, size);
}
extern "C" aclError aclrtFree(void* devPtr) {
  ClearRecentError();
  return Release("aclrtFree", devPtr);
}
extern "C" aclError aclrtMallocHost(void** hostPtr, size_t size) {
  ClearRecentError();
  return Allocate("aclrtMallocHost", hostPtr, size);
}
extern "C" aclError aclrtFreeHost(void* hostPtr) {
  ClearRecentError();
  return Release("aclrtFreeHost", hostPtr);
}

extern "C" aclError aclrtMemcpy(void* dst, size_t destMax, const void* src, size_t count,
                                aclrtMemcpyKind kind) {
  ClearRecentError();
  const int raw_kind = RawEnumValue(kind);
  if (raw_kind < ACL_MEMCPY_HOST_TO_HOST || raw_kind > ACL_MEMCPY_DEFAULT)
    return Fail(ACL_ERROR_INVALID_PARAM, "aclrtMemcpy",
                StrFormat("kind must be an aclrtMemcpyKind (0..4), got %d", raw_kind));
  if (count > destMax)
    return Fail(ACL_ERROR_INVALID_PARAM, "aclrtMemcpy",
                StrFormat("count (%zu bytes) must not exceed destMax (%zu bytes)", count, destMax));
  if (count == 0) return ACL_SUCCESS;
  if (dst == nullptr || src == nullptr)
    return Fail(ACL_ERROR_INVALID_PARAM, "aclrtMemcpy",
                StrFormat("dst and src must not be null for count %zu (dst %p, src %p)", count, dst, src));
  std::memmove(dst, src, count);
  return ACL_SUCCESS;
}

extern "C" aclError aclrtMemset(void* devPtr, size_t maxCount, int32_t value, size_t count) {
  ClearRecentError();
  if (count > maxCount)
    return Fail(ACL_ERROR_INVALID_PARAM, "aclrtMemset",
                StrFormat("count (%zu bytes) must not exceed maxCount (%zu bytes)", count, maxCount));
  if (count == 0) return ACL_SUCCESS;
  if (devPtr == nullptr) return Fail(ACL_ERROR_INVALID_PARAM, "aclrtMemset", "devPtr must not be null");
  std::memset(devPtr, value, count);
  return ACL_SUCCESS;
}
