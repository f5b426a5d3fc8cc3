// The SoftmaxCrossEntropyWithLogits planner, table-driven: named fields for a machine like this
// one {2 cores, 512 KiB} and an Ascend-like {40, 192 KiB}.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ops/softmax_cross_entropy_with_logits/sce_tiling.h"

using namespace aclnn_portable;

namespace {

constexpr PlatformInfo kThisLike{2, 512 * 1024};

SceProblem Nd(int64_t N, int64_t C, int32_t bytes = 4) {
  SceProblem p;
  p.dtypeBytes = bytes;
  p.N = p.featuresN = p.labelsN = N;
  p.C = p.featuresC = p.labelsC = C;
  return p;
}
SceProblem Nchw(int64_t N, int64_t C, int64_t H, int64_t W) {
  SceProblem p = Nd(N, C);
  p.layout = SceLayout::kNCHW;
  p.H = H;
  p.W = W;
  return p;
}

struct Row {
  std::string name;
  SceProblem problem;
  PlatformInfo platform;
  SceSchedule schId;
  SceKernel kernel;
  int64_t A, R, useCoreNum, blockFactor, realCoreNum, tailBlockFactor;
  int64_t rUbNumFactor, rLoopTime, rLoopTile;
  bool splitRAcrossCores;
  uint64_t workspaceBytes;
};

}  // namespace

TEST(SceTiling, Table) {
  using K = SceKernel;
  using S = SceSchedule;
  const std::vector<Row> rows = {
      // name, problem, platform, schId, kernel, A, R, use, bf, real, tail, rUb, rLoop, rTile, xcore, ws
      {"CANN sample [16,4]", Nd(16, 4), kThisLike, S::kFullLoad, K::kPackedRows, 16, 4, 1, 16, 1, 16, 0, 0, 0, false, 0},
      {"[16,4] Ascend", Nd(16, 4), kAscendLikePlatform, S::kFullLoad, K::kPackedRows, 16, 4, 1, 16, 1, 16, 0, 0, 0, false, 0},
      {"[4096,1000]", Nd(4096, 1000), kThisLike, S::kFullLoad, K::kRows, 4096, 1000, 2, 2048, 2, 2048, 0, 0, 0, false, 0},
      {"[4096,1000] Ascend", Nd(4096, 1000), kAscendLikePlatform, S::kFullLoad, K::kRows, 4096, 1000, 40, 103, 40, 79, 0, 0, 0, false, 0},
      {"[1024,32000]", Nd(1024, 32000), kThisLike, S::kSplitR, K::kRows, 1024, 32000, 2, 512, 2, 512, 4096, 8, 3328, false, 2 * 32000 * 4},
      {"[1024,32000] Ascend", Nd(1024, 32000), kAscendLikePlatform, S::kSplitR, K::kRows, 1024, 32000, 40, 26, 40, 10, 4096, 8, 3328, false, 40 * 32000 * 4},
      {"[64,131072] bf16", Nd(64, 131072, 2), kThisLike, S::kSplitR, K::kRows, 64, 131072, 2, 32, 2, 32, 4096, 32, 4096, false, 2 * 131072 * 4},
      {"[4,1048576]", Nd(4, 1 << 20), kThisLike, S::kSplitR, K::kRows, 4, 1 << 20, 2, 2, 2, 2, 4096, 256, 4096, false, 2 * (4 << 20)},
      // SplitR keeps an fp32 exp row per block (serial) or per row (A < cores).
      // A < cores: (row, chunk) tasks; 1024 chunk records (16 B) + 4 row records (16 B), 4 exp rows.
      {"[4,1048576] Ascend", Nd(4, 1 << 20), kAscendLikePlatform, S::kSplitR, K::kRows, 4, 1 << 20, 40, 26, 40, 10, 4096, 256, 4096, true, 16448 + 4 * (4 << 20)},
      {"[1,131072]", Nd(1, 131072), kThisLike, S::kSplitR, K::kRows, 1, 131072, 2, 16, 2, 16, 4096, 32, 4096, true, 576 + 131072 * 4},
      // The exp scratch only while the rows in flight fit cacheBytes (32 MiB here) with their
      // features: 2 rows x 4 Mi classes x (4 + 4 or 2) bytes do not, 1 row x 4 Mi x 8 does.
      {"[2,4194304]", Nd(2, 1 << 22), kThisLike, S::kSplitR, K::kRows, 2, 1 << 22, 2, 1, 2, 1, 4096, 1024, 4096, false, 0},
      {"[2,4194304] bf16", Nd(2, 1 << 22, 2), kThisLike, S::kSplitR, K::kRows, 2, 1 << 22, 2, 1, 2, 1, 4096, 1024, 4096, false, 0},
      {"[1,4194304]", Nd(1, 1 << 22), kThisLike, S::kSplitR, K::kRows, 1, 1 << 22, 2, 512, 2, 512, 4096, 1024, 4096, true, 16448 + (16 << 20)},
      {"[1,4194304] 16 MiB cache", Nd(1, 1 << 22), PlatformInfo{2, 512 * 1024, 16 << 20}, S::kSplitR, K::kRows, 1, 1 << 22, 2, 512, 2, 512, 4096, 1024, 4096, true, 16448},
      // Beyond 2^22 classes no exp scratch: 1025 chunk records + 1 row record, 64-byte aligned.
      {"[1,2^22+1]", Nd(1, (1 << 22) + 1), kThisLike, S::kSplitR, K::kRows, 1, (1 << 22) + 1, 2, 513, 2, 512, 4096, 1025, 1, true, 16448},
      {"[1048576,2]", Nd(1048576, 2), kThisLike, S::kFullLoad, K::kPackedRows, 1048576, 2, 2, 524288, 2, 524288, 0, 0, 0, false, 0},
      {"[65536,10]", Nd(65536, 10), kThisLike, S::kFullLoad, K::kPackedRows, 65536, 10, 2, 32768, 2, 32768, 0, 0, 0, false, 0},
      {"[100,16] small", Nd(100, 16), kThisLike, S::kFullLoad, K::kPackedRows, 100, 16, 1, 112, 1, 100, 0, 0, 0, false, 0},
      // C > 16: packed up to 63 classes (fp32) / 95 (16-bit), kRows from there.
      {"[100,17] small", Nd(100, 17), kThisLike, S::kFullLoad, K::kPackedRows, 100, 17, 1, 112, 1, 100, 0, 0, 0, false, 0},
      {"[100,48]", Nd(100, 48), kThisLike, S::kFullLoad, K::kPackedRows, 100, 48, 1, 112, 1, 100, 0, 0, 0, false, 0},
      {"[100,63]", Nd(100, 63), kThisLike, S::kFullLoad, K::kPackedRows, 100, 63, 1, 112, 1, 100, 0, 0, 0, false, 0},
      {"[100,64]", Nd(100, 64), kThisLike, S::kFullLoad, K::kRows, 100, 64, 1, 100, 1, 100, 0, 0, 0, false, 0},
      {"[100,65]", Nd(100, 65), kThisLike, S::kFullLoad, K::kRows, 100, 65, 1, 100, 1, 100, 0, 0, 0, false, 0},
      {"[100,95] bf16", Nd(100, 95, 2), kThisLike, S::kFullLoad, K::kPackedRows, 100, 95, 2, 64, 2, 36, 0, 0, 0, false, 0},
      {"[100,96] bf16", Nd(100, 96, 2), kThisLike, S::kFullLoad, K::kRows, 100, 96, 2, 50, 2, 50, 0, 0, 0, false, 0},
      {"[100,112] bf16", Nd(100, 112, 2), kThisLike, S::kFullLoad, K::kRows, 100, 112, 2, 50, 2, 50, 0, 0, 0, false, 0},
      {"[100,127] bf16", Nd(100, 127, 2), kThisLike, S::kFullLoad, K::kRows, 100, 127, 2, 50, 2, 50, 0, 0, 0, false, 0},
      {"[100,128] bf16", Nd(100, 128, 2), kThisLike, S::kFullLoad, K::kRows, 100, 128, 2, 50, 2, 50, 0, 0, 0, false, 0},
      {"[65536,24]", Nd(65536, 24), kThisLike, S::kFullLoad, K::kPackedRows, 65536, 24, 2, 32768, 2, 32768, 0, 0, 0, false, 0},
      {"[33,1]", Nd(33, 1), kThisLike, S::kFullLoad, K::kOneClass, 33, 1, 1, 33, 1, 33, 0, 0, 0, false, 0},
      {"[4,0]", Nd(4, 0), kThisLike, S::kFullLoad, K::kZeroClasses, 4, 0, 1, 4, 1, 4, 0, 0, 0, false, 0},
      {"[0,5]", Nd(0, 5), kThisLike, S::kEmpty, K::kNone, 0, 5, 0, 0, 0, 0, 0, 0, 0, false, 0},
      {"NCHW [8,19,256,256]", Nchw(8, 19, 256, 256), kThisLike, S::kFullLoad, K::kNchwLanes, 524288, 19, 2, 262144, 2, 262144, 0, 0, 0, false, 0},
      {"NCHW [8,19,256,256] Ascend", Nchw(8, 19, 256, 256), kAscendLikePlatform, S::kFullLoad, K::kNchwLanes, 524288, 19, 40, 13120, 40, 12608, 0, 0, 0, false, 0},
      {"NCHW [2,3,1,1] is ND", Nchw(2, 3, 1, 1), kThisLike, S::kFullLoad, K::kPackedRows, 2, 3, 1, 16, 1, 2, 0, 0, 0, false, 0},
      {"NCHW [3,1000,1,1]", Nchw(3, 1000, 1, 1), kThisLike, S::kFullLoad, K::kRows, 3, 1000, 1, 3, 1, 3, 0, 0, 0, false, 0},
  };
  for (const Row& r : rows) {
    const SceTiling t = PlanSce(r.problem, r.platform);
    SCOPED_TRACE(r.name);
    EXPECT_EQ(t.schId, r.schId) << SceScheduleName(t.schId);
    EXPECT_EQ(t.kernel, r.kernel) << SceKernelName(t.kernel);
    EXPECT_EQ(t.A, r.A);
    EXPECT_EQ(t.R, r.R);
    EXPECT_EQ(t.useCoreNum, r.useCoreNum);
    EXPECT_EQ(t.blockFactor, r.blockFactor);
    EXPECT_EQ(t.realCoreNum, r.realCoreNum);
    EXPECT_EQ(t.tailBlockFactor, r.tailBlockFactor);
    EXPECT_EQ(t.rUbNumFactor, r.rUbNumFactor);
    EXPECT_EQ(t.rLoopTime, r.rLoopTime);
    EXPECT_EQ(t.rLoopTile, r.rLoopTile);
    EXPECT_EQ(t.splitRAcrossCores, r.splitRAcrossCores);
    EXPECT_EQ(t.workspaceBytes, r.workspaceBytes);
    // Invariants of the seed's block split.
    if (t.schId != SceSchedule::kEmpty) {
      EXPECT_EQ(t.blockFactor * (t.realCoreNum - 1) + t.tailBlockFactor, t.splitRAcrossCores ? t.splitTasks : t.A);
      EXPECT_GT(t.tailBlockFactor, 0);
      EXPECT_LE(t.realCoreNum, r.platform.coreNum);
      EXPECT_GE(t.wakeCoreNum, 1);
      EXPECT_LE(t.wakeCoreNum, t.useCoreNum);
      // Pieces: whole blocks where a block owns scratch or cross-core tasks, else about
      // kScePieceElems elements or, waking cores, at most a kScePiecesPerCore-th of a block
      // (16-row multiples for the lane kernels), never more than a block.
      EXPECT_GT(t.pieceFactor, 0);
      EXPECT_LE(t.pieceFactor, t.blockFactor);
      const int64_t quarter = (t.blockFactor + kScePiecesPerCore - 1) / kScePiecesPerCore;
      if (t.schId == SceSchedule::kSplitR) {
        EXPECT_EQ(t.pieceFactor, t.blockFactor);
      } else if (t.pieceFactor < t.blockFactor) {
        EXPECT_TRUE(t.pieceFactor * std::max<int64_t>(t.R, 1) >= kScePieceElems - std::max<int64_t>(t.R, 1) ||
                    (t.wakeCoreNum > 1 && t.pieceFactor >= quarter))
            << t.pieceFactor;
      }
      if (t.kernel == SceKernel::kRows && t.schId == SceSchedule::kFullLoad && t.wakeCoreNum > 1) {
        EXPECT_LE(t.pieceFactor, quarter);
      }
      if (t.kernel == SceKernel::kNchwLanes) {
        EXPECT_GE(t.pieceFactor, std::min(t.blockFactor, kSceNchwPiecePositions));
      }
      if (t.kernel == SceKernel::kPackedRows || t.kernel == SceKernel::kNchwLanes) {
        EXPECT_TRUE(t.pieceFactor % 16 == 0 || t.pieceFactor == t.blockFactor);
      }
    }
  }
}

// Dynamic pieces: 65536 / R rows (16-row multiples for the lane kernels), capped at a block and,
// when the call wakes cores, at a quarter of a block; SplitR keeps whole blocks (the serial
// path's scratch row per block, the cross-core tasks).
TEST(SceTiling, PieceFactor) {
  EXPECT_EQ(PlanSce(Nd(4096, 1000), kThisLike).pieceFactor, 65);
  EXPECT_EQ(PlanSce(Nd(65536, 10), kThisLike).pieceFactor, 6560);      // 6553 -> 6560
  EXPECT_EQ(PlanSce(Nd(64, 1000), kThisLike).pieceFactor, 8);          // a quarter of 32 rows
  EXPECT_EQ(PlanSce(Nd(160, 1000), kThisLike).pieceFactor, 20);
  EXPECT_EQ(PlanSce(Nd(4096, 10), kThisLike).pieceFactor, 512);        // a quarter of 2048 rows
  EXPECT_EQ(PlanSce(Nd(1000, 100), kThisLike).pieceFactor, 125);
  EXPECT_EQ(PlanSce(Nd(32, 1000), kThisLike).pieceFactor, 16);         // wakes no core: blocks
  EXPECT_EQ(PlanSce(Nd(8, 1000), kThisLike).pieceFactor, 8);           // one core: the block
  EXPECT_EQ(PlanSce(Nd(1048576, 2), kThisLike).pieceFactor, 32768);
  EXPECT_EQ(PlanSce(Nchw(8, 19, 256, 256), kThisLike).pieceFactor, 32768);  // at least 32768 positions
  EXPECT_EQ(PlanSce(Nchw(2, 3, 100, 100), kThisLike).pieceFactor, 10000);   // a block (10000) is less
  EXPECT_EQ(PlanSce(Nd(16, 4), kThisLike).pieceFactor, 16);           // one block, on the caller
  EXPECT_EQ(PlanSce(Nd(1024, 32000), kThisLike).pieceFactor, 512);    // SplitR: the block
  EXPECT_EQ(PlanSce(Nd(4, 1 << 20), kThisLike).pieceFactor, 2);
  EXPECT_EQ(PlanSce(Nd(1, 131072), kThisLike).pieceFactor, 16);       // cross-core: 16 tasks a block
}

// Cores: one per kSceMinElemsPerAwakeCore (8192) elements while the workers spin (useCoreNum),
// one per kSceMinElemsPerCore (32768) to wake them from sleep (wakeCoreNum), whole rows;
// cross-core SplitR wakes one per 32768 of the call's elements.
TEST(SceTiling, CoresUsedAndWoken) {
  struct Row {
    const char* name;
    SceProblem p;
    PlatformInfo pi;
    int64_t use, wake;
  };
  for (const Row& r : std::vector<Row>{
           {"[16,4]", Nd(16, 4), kThisLike, 1, 1},
           {"[8,1000]", Nd(8, 1000), kThisLike, 1, 1},            // 8000: the caller alone
           {"[16,1000]", Nd(16, 1000), kThisLike, 2, 1},          // 8 rows of 8192 / 1000
           {"[32,1000]", Nd(32, 1000), kThisLike, 2, 1},
           {"[40,1000]", Nd(40, 1000), kThisLike, 2, 2},          // 32 rows of 32768 / 1000
           {"[128,64]", Nd(128, 64), kThisLike, 1, 1},            // 8192: one core's worth
           {"[256,100]", Nd(256, 100), kThisLike, 2, 1},
           {"[4096,1000]", Nd(4096, 1000), kThisLike, 2, 2},
           {"[1,8192] cross-core", Nd(1, 8192), kThisLike, 2, 1},
           {"[1,131072] cross-core", Nd(1, 131072), kThisLike, 2, 2},
           {"[256,100] Ascend", Nd(256, 100), kAscendLikePlatform, 4, 1},  // 81 / 327 rows a core
           {"[4096,1000] Ascend", Nd(4096, 1000), kAscendLikePlatform, 40, 40},
       }) {
    SCOPED_TRACE(r.name);
    const SceTiling t = PlanSce(r.p, r.pi);
    EXPECT_EQ(t.useCoreNum, r.use);
    EXPECT_EQ(t.wakeCoreNum, r.wake);
  }
}

// NCHW copy scratch: groups of 16 positions (2 * 16 * C floats each) in the kernel's 32 KiB stack
// scratch while it holds 4 (C <= 64); beyond, up to 8 from the workspace (and an exp scratch of
// 2 * 16 * C floats, and 16 floats to align the region), one region per worker, the copy within
// twice ubBytes; no copy when one group exceeds both.
TEST(SceTiling, NchwCopyScratch) {
  struct Row {
    SceProblem p;
    PlatformInfo pi;
    int64_t groups, floats;
  };
  const PlatformInfo zen3{2, 256 * 1024}, noBudget{2, 0};
  for (const Row& r : std::vector<Row>{
           {Nchw(8, 19, 256, 256), kThisLike, 8, 0},
           {Nchw(8, 32, 64, 64), kThisLike, 8, 0},
           {Nchw(8, 33, 64, 64), kThisLike, 7, 0},
           {Nchw(8, 64, 64, 64), kThisLike, 4, 0},
           {Nchw(8, 65, 64, 64), kThisLike, 8, 65 * 32 * 9 + 16},
           {Nchw(8, 65, 64, 64), noBudget, 3, 0},  // the stack alone
           {Nchw(8, 300, 64, 64), noBudget, 0, 0},
           {Nchw(4, 150, 128, 128), kThisLike, 8, 150 * 32 * 9 + 16},
           {Nchw(1, 1000, 128, 128), zen3, 4, 1000 * 32 * 5 + 16},  // 512 KiB of copy
           {Nchw(1, 4096, 64, 64), zen3, 1, 4096 * 32 * 2 + 16},
           {Nchw(1, 4097, 64, 64), zen3, 0, 0},  // one group exceeds the budget: no copy
           {Nchw(8, 150, 64, 64), kAscendLikePlatform, 8, 150 * 32 * 9 + 16},
       }) {
    const SceTiling t = PlanSce(r.p, r.pi);
    SCOPED_TRACE("C " + std::to_string(r.p.C) + " ub " + std::to_string(r.pi.ubBytes));
    EXPECT_EQ(t.nchwGroups, r.groups);
    EXPECT_EQ(t.nchwScratchFloats, r.floats);
    EXPECT_EQ(t.wsNchw, static_cast<uint64_t>(t.useCoreNum * r.floats) * sizeof(float));
    if (r.floats > 0) {
      EXPECT_EQ(t.offNchw % 64, 0u);
      EXPECT_GE(t.workspaceBytes, t.offNchw + t.wsNchw);
    } else {
      EXPECT_EQ(t.workspaceBytes, 0u);
    }
  }
}

// NCHW maps of up to kSceNchwAcrossImagesMaxHW positions fill lane groups across images, when
// groups fit the scratch; larger maps, ND, and NCHW with H*W = 1 (ND) do not.
TEST(SceTiling, NchwAcrossImages) {
  const PlatformInfo noBudget{2, 0};
  EXPECT_TRUE(PlanSce(Nchw(128, 1000, 2, 2), kThisLike).nchwAcrossImages);
  EXPECT_TRUE(PlanSce(Nchw(4096, 10, 1, 2), kThisLike).nchwAcrossImages);
  EXPECT_TRUE(PlanSce(Nchw(64, 19, 1, kSceNchwAcrossImagesMaxHW), kThisLike).nchwAcrossImages);
  EXPECT_FALSE(PlanSce(Nchw(64, 19, 1, kSceNchwAcrossImagesMaxHW + 1), kThisLike).nchwAcrossImages);
  EXPECT_FALSE(PlanSce(Nchw(8, 19, 256, 256), kThisLike).nchwAcrossImages);
  EXPECT_FALSE(PlanSce(Nchw(8, 300, 2, 2), noBudget).nchwAcrossImages);  // no group in the scratch
  EXPECT_FALSE(PlanSce(Nchw(8, 19, 1, 1), kThisLike).nchwAcrossImages);  // ND
  EXPECT_FALSE(PlanSce(Nd(4096, 4), kThisLike).nchwAcrossImages);
}

// fp32 FullLoad rows from kSceFullLoadRereadXMinClasses classes on take x - max from x again
// in the apply pass; shorter rows, 16-bit rows (their stage holds x widened) and SplitR keep the
// copy (SplitR has none).
TEST(SceTiling, FullLoadRereadX) {
  EXPECT_TRUE(PlanSce(Nd(2048, kSceFullLoadRereadXMinClasses), kThisLike).fullLoadRereadX);
  EXPECT_TRUE(PlanSce(Nd(1000, 3001), kThisLike).fullLoadRereadX);
  EXPECT_TRUE(PlanSce(Nd(3, kSceChunk), kAscendLikePlatform).fullLoadRereadX);
  EXPECT_FALSE(PlanSce(Nd(2048, kSceFullLoadRereadXMinClasses - 1), kThisLike).fullLoadRereadX);
  EXPECT_FALSE(PlanSce(Nd(4096, 1000), kThisLike).fullLoadRereadX);
  EXPECT_FALSE(PlanSce(Nd(1000, 3001, 2), kThisLike).fullLoadRereadX);  // bf16 / fp16
  EXPECT_FALSE(PlanSce(Nd(64, kSceChunk + 1), kThisLike).fullLoadRereadX);  // SplitR
  EXPECT_FALSE(PlanSce(Nchw(2, 3000, 4, 4), kThisLike).fullLoadRereadX);
}

TEST(SceTiling, BroadcastFlags) {
  SceProblem p = Nd(100, 30);
  p.labelsN = 1;
  SceTiling t = PlanSce(p, kThisLike);
  EXPECT_FALSE(t.featuresBrc);
  EXPECT_TRUE(t.labelsBrc);
  p = Nd(100, 30);
  p.featuresC = 1;
  p.labelsN = 1;
  t = PlanSce(p, kThisLike);
  EXPECT_TRUE(t.featuresBrc);
  EXPECT_TRUE(t.labelsBrc);
  EXPECT_EQ(t.workspaceBytes, 0u);
  // A gathered [1, C] labels row costs C elements of workspace, whatever N.
  p = Nd(100000, 1000);
  p.labelsN = 1;
  p.gatherLabels = true;
  t = PlanSce(p, kAscendLikePlatform);
  EXPECT_EQ(t.wsLabels, 4000u);
  EXPECT_EQ(t.workspaceBytes, 4032u);
}

TEST(SceTiling, WorkspaceLayoutForCopies) {
  SceProblem p = Nd(100, 50, 2);
  p.gatherFeatures = p.gatherLabels = p.scatterBackprop = p.scatterLoss = true;
  const SceTiling t = PlanSce(p, kThisLike);
  EXPECT_EQ(t.wsFeatures, 10000u);
  EXPECT_EQ(t.offFeatures, 0u);
  EXPECT_EQ(t.offLabels, 10048u);
  EXPECT_EQ(t.offBackprop, 20096u);
  EXPECT_EQ(t.wsLoss, 200u);
  EXPECT_EQ(t.offLoss, 30144u);
  EXPECT_EQ(t.workspaceBytes, 30400u);
}

// The math (kernel and chunking) depends on R and the layout only, never on the platform:
// that is what makes results identical on every machine and thread count.
TEST(SceTiling, MathIndependentOfPlatform) {
  for (int64_t C : {0, 1, 2, 8, 16, 17, 4096, 4097, 100000})
    for (int64_t N : {1, 3, 1000}) {
      const SceTiling a = PlanSce(Nd(N, C), PlatformInfo{1, 64 * 1024});
      for (PlatformInfo pi : {kThisLike, kAscendLikePlatform, PlatformInfo{3, 4096}, PlatformInfo{8, 1 << 24}}) {
        const SceTiling b = PlanSce(Nd(N, C), pi);
        EXPECT_EQ(a.kernel, b.kernel);
        EXPECT_EQ(a.schId, b.schId);
        EXPECT_EQ(a.rUbNumFactor, b.rUbNumFactor);
        EXPECT_EQ(a.rLoopTime, b.rLoopTime);
        EXPECT_EQ(a.rLoopTile, b.rLoopTile);
      }
    }
}

TEST(SceTiling, StreamsBackpropOnlyWhenLargerThanTheLastLevelCache) {
  PlatformInfo pi{2, 256 * 1024, 32 << 20};
  EXPECT_FALSE(PlanSce(Nd(64, 1000), pi).streamBackprop);         // 3 x 256 KB
  EXPECT_FALSE(PlanSce(Nd(2048, 1024), pi).streamBackprop);       // 3 x 8 MiB = 24 MiB <= 32 MiB
  EXPECT_TRUE(PlanSce(Nd(4096, 1000), pi).streamBackprop);        // 3 x 15.6 MiB
  EXPECT_FALSE(PlanSce(Nd(4096, 1000, 2), PlatformInfo{2, 256 * 1024, 64 << 20}).streamBackprop);
  EXPECT_TRUE(PlanSce(Nd(1024, 32000), pi).streamBackprop);
  EXPECT_TRUE(PlanSce(Nd(65536, 100), pi).streamBackprop);        // 3 x 25 MiB
  // 16-bit rows stream through SplitR, and as FullLoad rows of at least 512 classes.
  EXPECT_EQ(PlanSce(Nd(16384, 4096, 2), pi).schId, SceSchedule::kFullLoad);
  EXPECT_TRUE(PlanSce(Nd(16384, 4096, 2), pi).streamBackprop);    // 3 x 128 MiB of bf16
  EXPECT_FALSE(PlanSce(Nd(65536, 400, 2), pi).streamBackprop);    // 3 x 50 MiB, 400 classes
  EXPECT_TRUE(PlanSce(Nd(4096, 4097, 2), pi).streamBackprop);     // SplitR
  EXPECT_FALSE(PlanSce(Nd(1 << 22, 10), pi).streamBackprop);      // packed C = 10 stores pieces
  EXPECT_TRUE(PlanSce(Nd(1 << 22, 2), pi).streamBackprop);        // packed C = 2: whole lines
  EXPECT_FALSE(PlanSce(Nd(1 << 20, 2), pi).streamBackprop);       // 3 x 8 MiB
  // Packed C <= 16 fetches the next block ahead beyond the cache only.
  EXPECT_TRUE(PlanSce(Nd(1 << 22, 10), pi).prefetchBlocks);        // 3 x 160 MiB
  EXPECT_TRUE(PlanSce(Nd(1 << 22, 2), pi).prefetchBlocks);
  EXPECT_FALSE(PlanSce(Nd(65536, 10), pi).prefetchBlocks);         // 3 x 2.5 MiB
  EXPECT_FALSE(PlanSce(Nd(1 << 20, 17), pi).prefetchBlocks);       // packed C > 16: its own fetch
  EXPECT_FALSE(PlanSce(Nd(4096, 1000), pi).prefetchBlocks);        // kRows
  SceProblem inPlace = Nd(4096, 1000);
  inPlace.backpropAliasesInput = true;  // its lines were just read: plain stores
  EXPECT_FALSE(PlanSce(inPlace, pi).streamBackprop);
  EXPECT_TRUE(PlanSce(Nchw(8, 19, 256, 256), pi).streamBackprop);   // 3 x 38 MiB, NCHW class runs
  EXPECT_FALSE(PlanSce(Nchw(1, 19, 256, 256), pi).streamBackprop);  // 3 x 4.75 MiB
  SceProblem scattered = Nd(4096, 1024);
  scattered.scatterBackprop = true;  // written to the workspace, read back by the scatter
  EXPECT_FALSE(PlanSce(scattered, pi).streamBackprop);
}
