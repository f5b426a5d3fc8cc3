// PlatformInfo: the machine as the planners see it. It is an input of every planner, never read
// inside one, so tiling is a pure function that tests can run for any machine (this one, or an
// Ascend-like {coreNum: 40, ubBytes: 192 KiB}).
#pragma once

#include <cstdint>

namespace aclnn_portable {

struct PlatformInfo {
  int32_t coreNum = 1;    // cores a call may use (the NPU's AIV core count)
  uint64_t ubBytes = 0;   // per-core scratch budget (the NPU's UB): sized from the private L2
  // The last-level cache a core sees (its L3 slice / CCD): data moved beyond it does not survive
  // until the next call, so outputs that size are written with non-temporal stores.
  uint64_t cacheBytes = uint64_t{32} << 20;
};

// This machine: coreNum from the thread pool (ACLNN_PORTABLE_NUM_THREADS), ubBytes from the L2
// size (ACLNN_PORTABLE_UB_BYTES overrides it, for experiments), cacheBytes from the L3 that
// cpu0 shares (sysfs; 32 MiB when unknown), at most 12 MiB per online CPU (VM guests see the
// whole socket's L3); ACLNN_PORTABLE_CACHE_BYTES overrides it.
PlatformInfo CurrentPlatform();

// Ascend 910B-like numbers, for planner tests.
constexpr PlatformInfo kAscendLikePlatform{40, 192 * 1024};

}  // namespace aclnn_portable
