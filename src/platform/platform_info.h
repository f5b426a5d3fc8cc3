// PlatformInfo: the machine as the planners see it. It is an input of every planner, never read
// inside one, so tiling is a pure function that tests can run for any machine (this one, or an
// Ascend-like {coreNum: 40, ubBytes: 192 KiB}).
#pragma once

#include <cstdint>

namespace aclnn_portable {

struct PlatformInfo {
  int32_t coreNum = 1;    // cores a call may use (the NPU's AIV core count)
  uint64_t ubBytes = 0;   // per-core scratch budget (the NPU's UB): sized from the private L2
};

// This machine: coreNum from the thread pool (ACLNN_PORTABLE_NUM_THREADS), ubBytes from the L2
// size (ACLNN_PORTABLE_UB_BYTES overrides it, for experiments).
PlatformInfo CurrentPlatform();

// Ascend 910B-like numbers, for planner tests.
constexpr PlatformInfo kAscendLikePlatform{40, 192 * 1024};

}  // namespace aclnn_portable
