#include "ops/softmax_cross_entropy_with_logits/sce_tiling.h"

#include <algorithm>

namespace aclnn_portable {
namespace {

constexpr uint64_t kAlign = 64;

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
uint64_t AlignUp(uint64_t v) { return (v + kAlign - 1) / kAlign * kAlign; }

// Places `bytes` at the end of the workspace; returns its offset.
uint64_t Carve(SceTiling& t, uint64_t bytes) {
  if (bytes == 0) return 0;
  const uint64_t off = t.workspaceBytes;
  t.workspaceBytes = AlignUp(off + bytes);
  return off;
}

}  // namespace

SceTiling PlanSce(const SceProblem& p, const PlatformInfo& platform) {
  SceTiling t;
  const bool nchw = p.layout == SceLayout::kNCHW;
  t.HW = nchw ? p.H * p.W : 1;
  t.A = p.N * t.HW;
  t.R = p.C;
  t.featuresBrc = !nchw && (p.featuresN != p.N || p.featuresC != p.C);
  t.labelsBrc = !nchw && (p.labelsN != p.N || p.labelsC != p.C);
  if (t.A == 0) return t;  // Empty: nothing to compute, nothing to write, no workspace

  const bool lanes = nchw && t.HW > 1;  // NCHW with H*W == 1 is ND
  if (t.R == 0) t.kernel = SceKernel::kZeroClasses;
  else if (t.R == 1) t.kernel = SceKernel::kOneClass;
  else if (lanes) t.kernel = SceKernel::kNchwLanes;
  else if (ScePackedTakes(t.R, p.dtypeBytes)) t.kernel = SceKernel::kPackedRows;
  else t.kernel = SceKernel::kRows;

  const bool split = t.kernel == SceKernel::kRows && t.R > kSceChunk;
  t.schId = split ? SceSchedule::kSplitR : SceSchedule::kFullLoad;
  if (split) {
    t.rUbNumFactor = kSceChunk;
    t.rLoopTime = CeilDiv(t.R, kSceChunk);
    t.rLoopTile = t.R % kSceChunk == 0 ? kSceChunk : t.R % kSceChunk;
  }

  // Seed 3.2.1.3, with a floor on the work per core so small problems stay on the caller.
  const int64_t cores = std::max<int32_t>(platform.coreNum, 1);
  const int64_t rowElems = std::max<int64_t>(t.R, 1);
  // Cores that get at least minElems elements each, in whole rows.
  auto coresFor = [&](int64_t minElems) {
    return std::max<int64_t>(1, std::min({t.A, cores, CeilDiv(t.A, std::max<int64_t>(1, minElems / rowElems))}));
  };
  t.useCoreNum = coresFor(kSceMinElemsPerAwakeCore);
  t.blockFactor = CeilDiv(t.A, t.useCoreNum);
  // Lanes hold 16 rows / positions: blocks start on a multiple of 16 so only the last is partial.
  if (t.kernel == SceKernel::kPackedRows || t.kernel == SceKernel::kNchwLanes)
    t.blockFactor = CeilDiv(t.blockFactor, 16) * 16;
  t.realCoreNum = CeilDiv(t.A, t.blockFactor);
  t.tailBlockFactor = t.A - t.blockFactor * (t.realCoreNum - 1);

  // Beyond the seed: too few rows to fill the cores with long rows -> (row, chunk) tasks.
  if (split && t.A < cores) {
    t.splitRAcrossCores = true;
    t.splitTasks = t.A * t.rLoopTime;
    // The seed's block split, over (row, chunk) tasks instead of rows.
    t.useCoreNum = std::min<int64_t>(cores, t.splitTasks);
    t.blockFactor = CeilDiv(t.splitTasks, t.useCoreNum);
    t.realCoreNum = CeilDiv(t.splitTasks, t.blockFactor);
    t.tailBlockFactor = t.splitTasks - t.blockFactor * (t.realCoreNum - 1);
  }
  // Cores worth waking: kSceMinElemsPerCore elements each (whole rows; (row, chunk) tasks: of
  // the call's elements).
  const int64_t wakeCores = t.splitRAcrossCores ? CeilDiv(t.A * rowElems, kSceMinElemsPerCore) : coresFor(kSceMinElemsPerCore);
  t.wakeCoreNum = std::max<int64_t>(1, std::min(t.useCoreNum, wakeCores));
  // Dynamic pieces where rows are independent and own no workspace (see SceTiling::pieceFactor).
  t.pieceFactor = t.blockFactor;
  if (!split) {
    int64_t piece = std::max<int64_t>(1, kScePieceElems / rowElems);
    // Calls that wake cores but are short: kScePiecesPerCore pieces per block (see there). A
    // call that wakes none keeps whole blocks: its helpers spin (they join at once) or stay out.
    if (t.wakeCoreNum > 1) piece = std::min(piece, CeilDiv(t.blockFactor, kScePiecesPerCore));
    // NCHW reads C class rows per position run, each prefetched ahead from its start: runs
    // of at least kSceNchwPiecePositions keep that unprefetched start a small part of the piece.
    if (t.kernel == SceKernel::kNchwLanes) piece = std::max(piece, kSceNchwPiecePositions);
    if (t.kernel == SceKernel::kPackedRows || t.kernel == SceKernel::kNchwLanes) piece = CeilDiv(piece, 16) * 16;
    t.pieceFactor = std::min(t.blockFactor, piece);
  }

  const uint64_t es = static_cast<uint64_t>(p.dtypeBytes);
  const uint64_t full = static_cast<uint64_t>(p.N * t.R * t.HW) * es;
  if (p.gatherFeatures) t.wsFeatures = static_cast<uint64_t>(p.featuresN * p.featuresC * t.HW) * es;
  if (p.gatherLabels) t.wsLabels = static_cast<uint64_t>(p.labelsN * p.labelsC * t.HW) * es;
  if (p.scatterBackprop) t.wsBackprop = full;
  if (p.scatterLoss) t.wsLoss = static_cast<uint64_t>(t.A) * es;
  if (t.splitRAcrossCores)
    t.wsSplit = static_cast<uint64_t>(t.splitTasks) * sizeof(SceChunkRecord) +
                static_cast<uint64_t>(t.A) * sizeof(SceRowRecord);
  // The exp scratch pays while the rows in flight (one per block, or every row across cores)
  // stay in the cache with their features until the apply pass reads both back; beyond it each
  // element would cost a scratch write and read from memory besides the features' second read,
  // and recomputing the exp (same bits) moves less. Measured on AVX-512 Zen 4 (24 MiB of
  // cacheBytes), 2 threads, bench/compare, three alternations, the time without the scratch:
  // [2, 4194304] fp32 0.74 / 0.75 / 0.95x (64 MiB in flight), bf16 0.91 / 0.78 / 0.97x (48 MiB);
  // fp32 [2, 2097152] and [1, 4194304] (32 MiB) 0.88 / 0.77 / 1.07x and 0.53 / 0.79 / 1.05x.
  // (rows <= coreNum and R <= 2^22 when the product is formed: no overflow)
  const int64_t scratchRows = t.splitRAcrossCores ? t.A : t.realCoreNum;
  if (split && t.R <= kSceExpScratchMaxR &&
      static_cast<uint64_t>(scratchRows) * static_cast<uint64_t>(t.R) *
              (sizeof(float) + static_cast<uint64_t>(p.dtypeBytes)) <= platform.cacheBytes) {
    t.expScratchStride = CeilDiv(t.R, 16) * 16;
    t.wsExp = static_cast<uint64_t>(scratchRows * t.expScratchStride) * sizeof(float);
  }
  // NCHW copy scratch (see kSceNchwMaxGroups): the stack's groups while they make runs of at
  // least 4 vectors (C <= 64), else as many as the budget holds, up to 8. Measured on AVX2 Zen
  // 3 against the stack alone, fp32, 1 thread: [2, C, 128, 128] C = 80 (3 groups on the stack)
  // 0.83x the time (bf16 1.0x), C = 100 (2) 0.63x; 2 threads: [4, 150, 128, 128] (1) 0.57x, bf16
  // 0.60x; [2, 256, 128, 128] 0.67x; [1, 512, 128, 128] (every pass from memory) 0.50x,
  // [1, 1000, 128, 128] 0.49x (4 groups; 256 KiB ubBytes), bf16 0.72x; [1, 2048, 64, 64] 0.74x.
  // But 8 groups from the workspace instead of 4-7 on the stack: C = 33 / 64 fp32 1.06-1.15x,
  // C = 48 / 64 bf16 1.09-1.11x (1 thread): the stack's 32 KiB stay in L1.
  if (t.kernel == SceKernel::kNchwLanes) {
    const int64_t groupFloats = 2 * 16 * t.R;
    const int64_t stackGroups = std::min(kSceNchwMaxGroups, kSceNchwStackFloats / groupFloats);
    const int64_t budgetGroups = std::min<int64_t>(
        kSceNchwMaxGroups, static_cast<int64_t>(2 * platform.ubBytes / sizeof(float)) / groupFloats);
    if (stackGroups >= kSceNchwMinStackGroups || budgetGroups <= stackGroups) {
      t.nchwGroups = stackGroups;
    } else {
      t.nchwGroups = budgetGroups;
      // + 16: the kernel rounds its region's start up to a 64-byte line.
      t.nchwScratchFloats = groupFloats * t.nchwGroups + 2 * 16 * t.R + 16;
      t.wsNchw = static_cast<uint64_t>(t.useCoreNum * t.nchwScratchFloats) * sizeof(float);
    }
    t.nchwAcrossImages = t.HW <= kSceNchwAcrossImagesMaxHW && t.nchwGroups > 0;
  }
  // Features, labels and backprop beyond the last-level cache: backprop would not survive.
  // In place, its lines were just read and plain stores need no extra read (measured on
  // [4096,1000] fp32 in place, 2 threads: 1.9 ms plain, 2.9 ms non-temporal).
  // PackedRows: C = 2, whose dense blocks are whole 64-byte lines, and C > 16 through an L1
  // stage (see PackedRowsT; for 2 < C <= 16 the stage measured slower than plain stores).
  // kRows: SplitR rows, FullLoad rows of fp32, and 16-bit FullLoad rows of at least
  // kSceStream16BitMinClasses. 16-bit FullLoad rows spend more time computing per byte; short
  // ones gain nothing from streaming (the copy out of the stage costs what plain stores' extra
  // line reads do). Streamed / plain time, 2 threads, [8M / C, C] (bf16 unless noted): AVX2
  // build on Zen 3, C = 129 / 257 / 400 1.04 / 1.06 / 1.04, C = 1023 / 2048 0.97 / 1.0; AVX-512
  // on an Intel Xeon guest, C = 129 / 257 0.98 / 1.0, 400 0.93, 1000 0.84-0.86 (fp16 0.65-0.68),
  // 2000 0.88, fp16 600 0.67, [16384, 4096] 0.93. fp32 FullLoad streamed 0.92-0.95x at
  // C = 65 / 100, 0.98-1.03x at C = 128 / 240 / 1024 (Zen 3; see simd::LineStream).
  const bool rowsStream = t.kernel == SceKernel::kRows &&
                          (split || p.dtypeBytes == 4 || t.R >= kSceStream16BitMinClasses);
  t.streamBackprop = (rowsStream || t.kernel == SceKernel::kNchwLanes ||
                      (t.kernel == SceKernel::kPackedRows && (t.R == 2 || t.R > 16))) &&
                    !p.scatterBackprop && !p.backpropAliasesInput && 3 * full > platform.cacheBytes;
  // Measured on the Zen 3 guest (AVX2 build), 2 threads, 4-8M elements, A/B in one process, two
  // runs, the same bits: fp32 C = 5 / 7 / 10 / 13 / 16 0.80-0.98x the time (most 0.81-0.89x),
  // bf16 C = 7 / 10 / 16 0.85-1.04x, C = 2 (fp32, bf16) 0.93-1.0x; in the cache (prefetching
  // always: [65536, 10] fp32, 1 and 2 threads) 1.0-1.07x, hence the bound.
  t.prefetchBlocks = t.kernel == SceKernel::kPackedRows && t.R <= 16 && 3 * full > platform.cacheBytes;
  t.fullLoadRereadX = t.kernel == SceKernel::kRows && !split && p.dtypeBytes == 4 && t.R >= kSceFullLoadRereadXMinClasses;
  t.offFeatures = Carve(t, t.wsFeatures);
  t.offLabels = Carve(t, t.wsLabels);
  t.offBackprop = Carve(t, t.wsBackprop);
  t.offLoss = Carve(t, t.wsLoss);
  t.offSplit = Carve(t, t.wsSplit);
  t.offExp = Carve(t, t.wsExp);
  t.offNchw = Carve(t, t.wsNchw);
  return t;
}

const char* SceKernelName(SceKernel k) {
  switch (k) {
    case SceKernel::kNone: return "None";
    case SceKernel::kZeroClasses: return "ZeroClasses";
    case SceKernel::kOneClass: return "OneClass";
    case SceKernel::kPackedRows: return "PackedRows";
    case SceKernel::kRows: return "Rows";
    case SceKernel::kNchwLanes: return "NchwLanes";
  }
  return "?";
}

const char* SceScheduleName(SceSchedule s) {
  switch (s) {
    case SceSchedule::kEmpty: return "Empty";
    case SceSchedule::kFullLoad: return "FullLoad";
    case SceSchedule::kSplitR: return "SplitR";
  }
  return "?";
}

}  // namespace aclnn_portable
