#include "ops/mhc/mhc_tiling.h"

#include <algorithm>
#include <cstdint>

namespace aclnn_portable {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The byte estimates saturate instead of wrapping (validated shapes keep each tensor's size in
// int64, but a sum of three of them may exceed uint64).
uint64_t SatAdd(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }
uint64_t SatMul(uint64_t a, uint64_t b) { return b != 0 && a > UINT64_MAX / b ? UINT64_MAX : a * b; }
uint64_t CeilDivU(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }

}  // namespace

int64_t MhcElemBytes(MhcDtype dtype) { return dtype == MhcDtype::kFp32 ? 4 : 2; }

const char* MhcStrategyName(MhcStrategy s) {
  switch (s) {
    case MhcStrategy::kEmpty: return "Empty";
    case MhcStrategy::kPerStream: return "PerStream(A)";
    case MhcStrategy::kReadOnce: return "ReadOnce(B)";
  }
  return "?";
}

MhcTiling PlanMhc(MhcOp op, MhcDtype dtype, const MhcShape& shape, uint32_t blockDim,
                  const PlatformInfo& platform) {
  MhcTiling t;
  t.op = op;
  t.dtype = dtype;
  t.batch = shape.batch;
  t.numStreams = shape.numStreams;
  t.rowElems = shape.seqLen * shape.dim;
  const int64_t B = t.batch, N = t.numStreams, E = t.rowElems;
  const uint64_t elem = static_cast<uint64_t>(MhcElemBytes(dtype));
  // A budget of 0 (unknown) is treated as a small cache rather than as "nothing fits".
  const uint64_t ub = std::max<uint64_t>(platform.ubBytes, 4096);
  int64_t maxCores = std::max<int32_t>(platform.coreNum, 1);
  if (blockDim > 0) maxCores = std::min<int64_t>(maxCores, blockDim);

  t.blocksPerRow = E > 0 ? CeilDiv(E, kMhcReduceBlockElems) : 0;
  if (B == 0 || E == 0) {
    t.strategy = MhcStrategy::kEmpty;
    return t;
  }

  // The N-stream side ([B*N, S, D]) and the single-stream side ([B, S, D]) in bytes.
  const uint64_t manyBytes = static_cast<uint64_t>(B) * N * E * elem;
  const uint64_t oneBytes = static_cast<uint64_t>(B) * E * elem;
  const uint64_t rowBytes = static_cast<uint64_t>(E) * elem;
  // Every element crosses memory once when each input tile is read once (Strategy B); backward
  // moves grad_out, x and grad_input.
  t.bytesReadOnce = SatAdd(SatAdd(manyBytes, oneBytes), op == MhcOp::kPostBackward ? oneBytes : 0);
  const int64_t wantCores = std::clamp<int64_t>(
      static_cast<int64_t>(std::min<uint64_t>(CeilDivU(t.bytesReadOnce, kMhcMinBytesPerCore), INT32_MAX)), 1, maxCores);
  if (op == MhcOp::kPost) {
    // Strategy A re-reads x[b] once per stream: from the cache when the row fits the per-core
    // budget (at most once per core then), from memory otherwise.
    const uint64_t rereads = rowBytes <= ub ? static_cast<uint64_t>(std::min<int64_t>(N, wantCores)) : N;
    t.bytesPerStream = SatAdd(manyBytes, SatMul(rereads, oneBytes));
  }

  const int64_t targetTasks = wantCores == 1 ? 1 : wantCores * kMhcTasksPerCore;
  const int64_t maxTilesPerRow = CeilDiv(E, kMhcTileAlignElems);

  // Strategy B moves the fewest bytes and is the default. A is chosen only when B cannot give
  // every wanted core a task (few rows, short rows) and costs no extra memory traffic, because
  // x[b] stays in the cache across its N streams.
  const bool perStream = op == MhcOp::kPost && N > 1 && wantCores > 1 && B * maxTilesPerRow < wantCores &&
                         rowBytes <= ub;
  t.strategy = perStream ? MhcStrategy::kPerStream : MhcStrategy::kReadOnce;

  // Input bytes one tile element brings into a task: post reads x (1), pre reads N streams,
  // backward N grad_out streams and x. A task's input tile stays within the per-core budget.
  const uint64_t inPerElem = SatMul(elem, op == MhcOp::kPost ? 1 : (op == MhcOp::kPre ? N : SatAdd(N, 1)));
  const int64_t units = perStream ? B * N : B;
  const int64_t tilesForCores = CeilDiv(targetTasks, units);
  const int64_t tilesForBudget =
      static_cast<int64_t>(std::min<uint64_t>(CeilDivU(SatMul(static_cast<uint64_t>(E), inPerElem), ub), INT64_MAX / 2));
  const int64_t tiles = std::clamp<int64_t>(std::max(tilesForCores, tilesForBudget), 1, maxTilesPerRow);
  t.tileElems = tiles == 1 ? E : CeilDiv(CeilDiv(E, tiles), kMhcTileAlignElems) * kMhcTileAlignElems;
  t.tilesPerRow = CeilDiv(E, t.tileElems);
  t.numTasks = units * t.tilesPerRow;
  t.usedCores = static_cast<int32_t>(std::min<int64_t>(wantCores, t.numTasks));

  // Non-temporal stores once the bytes a call moves exceed the last-level cache (the output would
  // not survive until it is read); below that a benchmark loop or the next op finds it in L3.
  t.streamStores = manyBytes + oneBytes > platform.cacheBytes;
  return t;
}

}  // namespace aclnn_portable
