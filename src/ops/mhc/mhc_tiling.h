// Planner for the mHC stream operators (mhc_post, mhc_pre, mhc_post backward): a pure function
// of (op, dtype, shape, blockDim, PlatformInfo) -> MhcTiling. It assumes the API layer has
// validated the shape (non-negative sizes, N >= 1, no overflowing products).
//
// Work is split along the row of E = S*D elements into tiles; a task is (b, tile) or, for
// post's per-stream strategy, (b, s, tile). See docs/mhc.md for the selection rule.
#pragma once

#include <cstdint>

#include "platform/platform_info.h"

namespace aclnn_portable {

enum class MhcOp : uint8_t { kPost, kPre, kPostBackward };
enum class MhcDtype : uint8_t { kFp32, kFp16, kBf16 };

enum class MhcStrategy : uint8_t {
  kEmpty,      // no element to compute (B, S or D is 0); backward still zero-fills grad_h
  kPerStream,  // Strategy A (post only): task (b, s, tile), x[b] read once per stream
  kReadOnce,   // Strategy B: task (b, tile), each input tile read once, all N streams handled
};

struct MhcShape {
  int64_t batch = 0, seqLen = 0, dim = 0, numStreams = 1;
};

// Tiles start at multiples of this (also the grad_h reduction block, which is fixed so that the
// reduction order never depends on the tiling or the thread count).
constexpr int64_t kMhcTileAlignElems = 1024;
constexpr int64_t kMhcReduceBlockElems = 1024;
// Below this many bytes of traffic per core, waking another core costs more than it saves: a
// core moves 1 MiB of cached data in ~10 us, about what a worker that went to sleep (or lost
// its core on a busy machine) needs to start.
constexpr uint64_t kMhcMinBytesPerCore = 1024 * 1024;
// Tasks per core used, so that dynamic claiming evens out cores that are slowed down.
constexpr int64_t kMhcTasksPerCore = 4;

struct MhcTiling {
  MhcOp op = MhcOp::kPost;
  MhcDtype dtype = MhcDtype::kFp32;
  MhcStrategy strategy = MhcStrategy::kEmpty;
  int64_t batch = 0;
  int64_t numStreams = 1;
  int64_t rowElems = 0;      // E = seq_len * dim
  int64_t tileElems = 0;     // elements per tile (the last tile of a row may be shorter)
  int64_t tilesPerRow = 0;   // ceil(E / tileElems)
  int64_t numTasks = 0;      // (B or B*N) * tilesPerRow; the task index is the blockIdx
  int32_t usedCores = 1;     // workers the call may use (<= blockDim when blockDim > 0)
  bool streamStores = false; // outputs written with non-temporal stores (bytes moved > cacheBytes)
  int64_t blocksPerRow = 0;  // backward: ceil(E / kMhcReduceBlockElems) grad_h partials per row
  // Estimated memory traffic of the two strategies (bytes), the basis of the choice.
  uint64_t bytesReadOnce = 0;
  uint64_t bytesPerStream = 0;
};

int64_t MhcElemBytes(MhcDtype dtype);

MhcTiling PlanMhc(MhcOp op, MhcDtype dtype, const MhcShape& shape, uint32_t blockDim,
                  const PlatformInfo& platform);

const char* MhcStrategyName(MhcStrategy s);

}  // namespace aclnn_portable
