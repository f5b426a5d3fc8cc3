// Per-ISA kernels of the mHC stream operators (mhc_kernels.cc, compiled once per ISA). Each runs
// one task of a plan (the task index is the NPU's blockIdx); none allocates, validates or
// spawns threads. Pointers may be unaligned; dtype and strategy come from the tiling.
#pragma once

#include <cstdint>

#include "ops/mhc/mhc_tiling.h"
#include "platform/dispatch.h"

namespace aclnn_portable {

struct MhcPostArgs {
  const void* x;  // [B, S, D]
  const void* h;  // [N] (fp16 for fp16, fp32 otherwise)
  void* out;      // [B*N, S, D]
};

struct MhcPreArgs {
  const void* x;  // [B*N, S, D]
  const void* h;  // [N]
  void* out;      // [B, S, D]
};

struct MhcBackwardArgs {
  const void* gradOut;  // [B*N, S, D]
  const void* x;        // [B, S, D]
  const void* h;        // [N]
  void* gradInput;      // [B, S, D]
  float* partials;      // [N][B * blocksPerRow] fp32 block sums of grad_h (workspace)
};

using MhcPostTaskFn = void (*)(const MhcTiling&, const MhcPostArgs&, int64_t task);
using MhcPreTaskFn = void (*)(const MhcTiling&, const MhcPreArgs&, int64_t task);
using MhcBackwardTaskFn = void (*)(const MhcTiling&, const MhcBackwardArgs&, int64_t task);
// grad_h[s] = sum over (b, block) in order of partials[s][...], accumulated in double, rounded
// once to fp32 (zeros when there are no blocks).
using MhcCombineGradHFn = void (*)(const MhcTiling&, const float* partials, void* gradH);

ACLNN_DECLARE_FOR_EACH_ISA(void MhcPostTask(const MhcTiling&, const MhcPostArgs&, int64_t task))
ACLNN_DECLARE_FOR_EACH_ISA(void MhcPreTask(const MhcTiling&, const MhcPreArgs&, int64_t task))
ACLNN_DECLARE_FOR_EACH_ISA(void MhcBackwardTask(const MhcTiling&, const MhcBackwardArgs&, int64_t task))
ACLNN_DECLARE_FOR_EACH_ISA(void MhcCombineGradH(const MhcTiling&, const float* partials, void* gradH))

}  // namespace aclnn_portable
