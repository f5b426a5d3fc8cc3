// SoftmaxCrossEntropyWithLogits planner (seed 3.2.1.3-3.2.1.5): a pure function of the problem
// (shapes, which tensors need a copy, dtype size) and PlatformInfo -> tiling + kernel variant.
//
// The math of a row is fixed by R (the class count) and the dtype alone, never by the platform, so every
// machine, thread count and ISA writes the same bits:
//   R == 0          kZeroClasses: loss = 0 (the empty sum), backprop empty
//   R == 1          kOneClass:    loss = y*(0 - z), backprop = (1 + z) - y with z = x - x
//                                 (exactly 0 and 1 - y for finite x; NaN for inf/NaN as in TF)
//   2 <= R <= 63,   kPackedRows:  16 rows transposed into the 16 lanes, classes walked in order
//   16-bit R <= 95                (ScePackedTakes)
//   larger R        kRows:        chunks of kSceChunk classes; one chunk = FullLoad (3 passes
//                                 from L1), more = SplitR (online (max, sum) per chunk, combined
//                                 in chunk order in double, then one apply pass)
//   NCHW, H*W > 1   kNchwLanes:   lanes = 16 consecutive positions, classes walked with stride
//                                 H*W (the same lane algorithm as kPackedRows)
// SplitR rows with fewer rows than cores also split R across cores (splitRAcrossCores): the
// same per-chunk quantities, computed as (row, chunk) tasks and combined in chunk order.
#pragma once

#include <cstdint>

#include "platform/platform_info.h"

namespace aclnn_portable {

// Fixed chunk of the class dimension (elements). A constant, never derived from the platform:
// it fixes the accumulation order. 4096 x (x, y, backprop, fp32 exp) <= 64 KiB fits every UB.
constexpr int64_t kSceChunk = 4096;
// SplitR keeps exp(x - chunk max) of a row in an fp32 workspace scratch (one exp per element
// instead of two) for rows of up to this many classes (16 MiB of scratch per row), while the rows
// in flight fit PlatformInfo::cacheBytes with their features (PlanSce); otherwise the apply pass
// recomputes the exp (same bits, one more exp per element).
constexpr int64_t kSceExpScratchMaxR = int64_t{1} << 22;
constexpr int64_t kSceExpScratchMaxChunks = kSceExpScratchMaxR / kSceChunk;
// The packed small-C path takes C <= 16 (one copy per C) and larger C (one copy for all of
// them, C read at run time) up to 63 classes (fp32) / 95 (fp16, bf16); kRows takes longer rows,
// and its FullLoad rows of up to 80 (fp32) / 192 (16-bit) classes go 16 at a time
// (FullLoadRowBlocks: the reductions of 16 rows side by side). Measured on the Intel Xeon guest,
// 1 thread, ~65536 elements, both libraries alternating in one process, row blocks against
// packed, AVX-512: C = 17-60 packed is faster (blocks 1.09-2.6x the time, fp32 and bf16), C =
// 63 1.05x (16-bit), bf16 C = 64 / 72 / 80 / 88 0.88 / 0.95-0.99 / 0.84 / 1.09x, C = 96 / 104 /
// 120 / 127 0.72 / 0.86 / 0.83 / 0.74x (fp16 C = 96 / 120 / 127 0.71 / 0.80 / 0.54x); the AVX2
// tier on the same core: bf16 C = 64 / 72 / 88 1.12 / 1.15 / 1.07x, C = 96 / 104 / 120 / 127
// 0.89 / 1.02 / 0.97 / 0.92x. So 16-bit rows of 64-95 classes stay packed. (Before the row
// blocks the packed path also took 16-bit rows of up to 127 classes not a multiple of 16,
// measured against single rows on AVX-512 Zen 4.)
constexpr int64_t kScePackedMaxC32 = 63;
constexpr int64_t kScePackedMaxC16 = 95;
// Largest class count of the packed path: its scratch holds this many.
constexpr int64_t kScePackedMaxC = kScePackedMaxC16;
inline bool ScePackedTakes(int64_t C, int64_t dtypeBytes) {
  return C <= (dtypeBytes == 4 ? kScePackedMaxC32 : kScePackedMaxC16);
}
// A sleeping core is woken only when it gets at least this many elements: waking a worker
// costs more than computing a small problem. On the Zen 3 guest the futex wake alone took the
// caller ~8 us (median; the woken thread ran ~28 us later), and a second core from 16384
// elements made calls 300 us apart 1.3-1.9x slower.
constexpr int64_t kSceMinElemsPerCore = 32768;
// A core is used from this many elements on (useCoreNum) when its worker need not be woken: it
// still spins after an earlier call, or the call is the third or later of a run of calls (see
// SceTiling::wakeCoreNum, ThreadPool::Run). Measured there, 2 threads, A/B in one process, the
// same bits: back to back, [16, 1000] / [32, 1000] / [64, 256] / [256, 100] / [512, 40]
// 0.60-0.84 / 0.56-0.76 / 0.58-0.78 / 0.53-0.89 / 0.45-0.59x the time (the host's noise, across
// runs); 300 us apart 0.94-1.13x (mostly 0.99-1.04x).
// From 4096 elements per core, calls of 4096-8192 elements took 1.06-1.42x back to back.
// (The CANN sample [16, 4] runs on the caller alone.)
constexpr int64_t kSceMinElemsPerAwakeCore = 8192;
// Elements per piece of work a worker claims at a time (see SceTiling::pieceFactor): ~15-40 us of
// work, against one atomic increment per piece.
constexpr int64_t kScePieceElems = 65536;
// A call that wakes several cores (wakeCoreNum > 1) has at least this many pieces per core
// (fewer elements per piece than kScePieceElems when a core's block is under 4 x 65536
// elements); one that wakes none keeps a block per piece (its helpers spin and join at once,
// or stay out: with quarter blocks, calls 300 us apart took 1.01-1.08x the time). A helper that
// was asleep (its spin over: the call follows other work) joins tens of microseconds late, and
// waking it costs the caller too; with one piece per core there was often nothing left for it
// to take by then (or it took the last piece and the caller waited for all of it), so such a
// call took longer than on one core. Measured on the Zen 3 guest, 2 threads, calls 300 us
// apart (bench/ab_sce --gap-us 300, the same bits), median single-call time against pieces of
// 65536 elements: [64, 1000] 0.94x, [160, 1000] 0.86x, [1024, 64] 0.77x, [512, 100] 0.90x,
// [1024, 256] 0.95x, [4096, 10] 1.01x; back-to-back calls (workers awake) 0.85-1.03x, but
// [4096, 10] / [16384, 4] 0.84-1.30x between runs (noise around no change). Unchanged: calls
// on one core (kSceMinElemsPerCore) and large ones.
constexpr int64_t kScePiecesPerCore = 4;
// NCHW pieces span at least this many positions (128 KiB of each fp32 class row).
constexpr int64_t kSceNchwPiecePositions = 32768;
// NCHW copy scratch (see NchwLanes): features and labels of up to kSceNchwMaxGroups groups of
// 16 positions are copied together, 2 * 16 * C floats per group, so that each class row is read
// in runs of up to 8 x 64 bytes. The kernel's own (stack) scratch holds kSceNchwStackFloats (32
// KiB, which stays in L1): 8 groups up to C = 32, and it is used while it holds at least
// kSceNchwMinStackGroups (C <= 64). More classes take the copy scratch, and an exp scratch of
// 2 * 16 * C floats, from the workspace, one region per worker, with at most twice
// PlatformInfo::ubBytes (the private L2) for the copy. With the stack alone the runs shrank to
// one 64-byte line per class row from C = 129 (the rows of a group are H*W apart: every line a
// separate access to another page), and from C = 257 every pass read memory.
constexpr int64_t kSceNchwMaxGroups = 8;
constexpr int64_t kSceNchwStackFloats = 8192;
constexpr int64_t kSceNchwMinStackGroups = 4;
// NCHW maps of at most this many positions fill a lane group with positions of consecutive
// images (SceTiling::nchwAcrossImages, NchwAcrossImages in the kernels): one image per group
// would leave at least half of the 16 lanes idle. The kernels keep one copy routine per map
// size up to this bound.
// Measured on the Zen 3 guest (AVX2), 2 threads, A/B in one process, the same bits, the time
// against one image per group (C = 10 to 1000): fp32 H*W = 2 / 3 / 4 / 5 / 6 / 7 / 8 0.22-0.24 /
// 0.44 / 0.42-0.54 / 0.61 / 0.82 / 0.80-0.97 / 0.65x, bf16 0.22 / - / 0.33-0.35 / 0.63 / 0.63 /
// 0.86 / 0.64x, fp16 H*W = 4 / 7 0.47 / 0.80x. Before whole images had their own copies (every
// run through LoadAsN / StoreAsN) H*W = 9 / 15 took 1.08 / 1.52x (fp32), 1.12 / 1.44x (bf16):
// a group then holds at most one whole image, and the bound stays at 8.
constexpr int64_t kSceNchwAcrossImagesMaxHW = 8;
// 16-bit FullLoad rows of at least this many classes stream their backprop beyond the
// last-level cache (fp32 rows and SplitR at any length); see PlanSce.
constexpr int64_t kSceStream16BitMinClasses = 512;
// fp32 FullLoad rows of at least this many classes keep no copy of x - max between their exp
// pass and their apply pass (SceTiling::fullLoadRereadX): the apply pass subtracts again from
// x. A row's x, labels, exp values, x - max and backprop stage (20 bytes per class) outgrow L1
// from about 1600 (32 KiB L1d) or 2400 classes (48 KiB); without the copy 16 bytes per class
// stay. Measured on an Intel Xeon guest (AVX-512, L1d 48 KiB), both builds alternating in one
// process, ~4M elements, the same bits: 1 thread C = 1500 / 2000 / 2047 / 3000 / 4000 / 4095
// 0.97 / 0.91 / 0.92 / 0.95-0.97 / 0.92 / 0.93x the time, 2 threads 0.98 / 0.88 / 0.96 / 0.97-0.98
// / 0.90 / 0.93x, in L2 (1 thread, 128K elements) C = 2000 / 4000 0.99 / 0.86x; but C = 1000 /
// 1001 1.01-1.04x (1 thread; 2 threads 0.98 / 1.02x), in L2 1.06x: short rows fit L1 either way
// and the subtraction costs more than the copy's load.
constexpr int64_t kSceFullLoadRereadXMinClasses = 1536;

enum class SceLayout : int32_t { kND = 0, kNCHW = 1 };
enum class SceSchedule : int32_t { kEmpty = 0, kFullLoad = 1, kSplitR = 2 };
enum class SceKernel : int32_t {
  kNone = 0,  // empty: nothing to run
  kZeroClasses,
  kOneClass,
  kPackedRows,
  kRows,
  kNchwLanes,
};

// The problem as the planner sees it (after validation and broadcasting).
struct SceProblem {
  SceLayout layout = SceLayout::kND;
  int32_t dtypeBytes = 4;
  int64_t N = 0, C = 0, H = 1, W = 1;  // broadcast shape; ND: H = W = 1
  int64_t featuresN = 0, featuresC = 0;  // ND input shapes (broadcast when 1 != N or C)
  int64_t labelsN = 0, labelsC = 0;
  // Tensors whose views the kernels cannot address directly: inputs gathered into the
  // workspace, outputs computed into it and scattered.
  bool gatherFeatures = false, gatherLabels = false;
  bool scatterBackprop = false, scatterLoss = false;
  // Backprop overlaps features or labels (in place): its lines are in the cache already (just
  // read), so plain stores cost no extra read and non-temporal ones only evict them.
  bool backpropAliasesInput = false;
};

struct SceTiling {
  SceSchedule schId = SceSchedule::kEmpty;
  SceKernel kernel = SceKernel::kNone;
  // Seed names: A logical rows (ND: N; NCHW: N*H*W positions), R classes.
  int64_t A = 0, R = 0;
  int64_t HW = 1;  // NCHW: class stride and positions per image; ND: 1
  int64_t useCoreNum = 0, blockFactor = 0, realCoreNum = 0, tailBlockFactor = 0;
  // Of the useCoreNum cores, those the call may wake from sleep (caller included): the others
  // join only if their workers still spin after an earlier call, or from the third call of a
  // run of calls (ThreadPool::Run's wake_workers). useCoreNum counts kSceMinElemsPerAwakeCore
  // elements per core, wakeCoreNum kSceMinElemsPerCore. Run-time state picks who runs a piece,
  // never what a piece is.
  int64_t wakeCoreNum = 0;
  // Rows (positions) per piece: the useCoreNum workers claim pieces of the A rows one at a time
  // (dynamic scheduling, so a core that another tenant slows down takes fewer pieces; every row's
  // bits are the same in any piece). pieceFactor = blockFactor (the seed's one block per core)
  // where a block owns workspace (the serial SplitR exp scratch row) or tasks share a core's
  // cache across phases (cross-core SplitR); otherwise about kScePieceElems elements, or a
  // kScePiecesPerCore-th of a block where that is less and several cores share the call, a
  // multiple of 16 for the lane kernels.
  int64_t pieceFactor = 0;
  // SplitR: the class chunk, chunks per row, the last chunk's length.
  int64_t rUbNumFactor = 0, rLoopTime = 0, rLoopTile = 0;
  // SplitR with A < coreNum: (row, chunk) tasks on all cores; blockFactor, realCoreNum and
  // tailBlockFactor then count tasks (row * rLoopTime + chunk), not rows.
  bool splitRAcrossCores = false;
  int64_t splitTasks = 0;
  // Issue 7 (seed tilingKey bits): an input broadcast along N and/or C.
  bool featuresBrc = false, labelsBrc = false;
  // SplitR exp scratch: floats per scratch row (R rounded up to 16), 0 when not used; rows =
  // realCoreNum blocks (serial) or A (splitRAcrossCores).
  int64_t expScratchStride = 0;
  // kRows (SplitR, and FullLoad fp32 rows), kNchwLanes, kPackedRows with R = 2 or R > 16:
  // backprop (and, R = 2, loss) written with non-temporal stores (features + labels + backprop exceed
  // PlatformInfo::cacheBytes, backprop is not in place, and the kernel never reads it back); only the store path
  // changes, not the bits.
  bool streamBackprop = false;
  // kPackedRows with R <= 16 (blocks of a compile-time class count): the kernel hints the next
  // block's features and labels into the cache while it computes this one, when features +
  // labels + backprop exceed PlatformInfo::cacheBytes (in the cache the hints only cost
  // instructions). Only the loads' timing changes, not the bits.
  bool prefetchBlocks = false;
  // kRows FullLoad fp32 rows of at least kSceFullLoadRereadXMinClasses: the apply pass takes
  // x - max from the features again instead of a copy the exp pass stored (the same bits).
  bool fullLoadRereadX = false;
  // kNchwLanes: groups of 16 positions copied together (0: too many classes for one group in
  // the scratch budget, every pass reads memory), and the floats of one worker's workspace
  // scratch (copy, then exp; useCoreNum of them), 0 when the kernel's stack scratch holds the
  // groups.
  int64_t nchwGroups = 0;
  int64_t nchwScratchFloats = 0;
  // kNchwLanes with H*W <= kSceNchwAcrossImagesMaxHW and groups in the scratch: a group takes 16
  // consecutive positions across images (each position keeps its bits; only the copies change).
  bool nchwAcrossImages = false;
  // Workspace layout (bytes, each part 64-byte aligned; 0 when absent).
  uint64_t wsFeatures = 0, wsLabels = 0, wsBackprop = 0, wsLoss = 0, wsSplit = 0, wsExp = 0, wsNchw = 0;
  uint64_t offFeatures = 0, offLabels = 0, offBackprop = 0, offLoss = 0, offSplit = 0, offExp = 0, offNchw = 0;
  uint64_t workspaceBytes = 0;
};

// Per (row, chunk) record of the cross-core SplitR path, and per row.
// The sum of a chunk is kept as k + t: k counts the exp values rounded to 1 (the maxima, in
// practice) and t sums the rest, so that log(s) stays accurate when s is close to 1.
struct SceChunkRecord {
  float m, k, t, lossPart;
};
struct SceRowRecord {
  double S;
  float m, L;
};

SceTiling PlanSce(const SceProblem& problem, const PlatformInfo& platform);

const char* SceKernelName(SceKernel k);
const char* SceScheduleName(SceSchedule s);

}  // namespace aclnn_portable
