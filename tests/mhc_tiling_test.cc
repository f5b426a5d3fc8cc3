// The mHC planner as a pure function: named-field expectations for a 2-core machine with a
// 512 KiB per-core budget and for the Ascend-like platform, plus invariants over many shapes.
#include <gtest/gtest.h>

#include <algorithm>

#include "ops/mhc/mhc_tiling.h"
#include "platform/platform_info.h"

using namespace aclnn_portable;

namespace {

constexpr PlatformInfo kTwoCores{2, 512 * 1024};

struct Expect {
  MhcStrategy strategy;
  int64_t tileElems, tilesPerRow, numTasks;
  int32_t usedCores;
  bool streamStores;
};

void ExpectPlan(const MhcTiling& t, const Expect& e) {
  EXPECT_EQ(t.strategy, e.strategy) << MhcStrategyName(t.strategy);
  EXPECT_EQ(t.tileElems, e.tileElems);
  EXPECT_EQ(t.tilesPerRow, e.tilesPerRow);
  EXPECT_EQ(t.numTasks, e.numTasks);
  EXPECT_EQ(t.usedCores, e.usedCores);
  EXPECT_EQ(t.streamStores, e.streamStores);
}

}  // namespace

TEST(MhcTiling, SeedShapeTwoCores) {
  // (2,64,256)xN=4 fp32: 640 KiB of traffic is less than a core's minimum (1 MiB): one core,
  // one tile per row, x read once (B).
  const MhcTiling t = PlanMhc(MhcOp::kPost, MhcDtype::kFp32, {2, 64, 256, 4}, 0, kTwoCores);
  ExpectPlan(t, {MhcStrategy::kReadOnce, /*tileElems=*/16384, /*tilesPerRow=*/1, /*numTasks=*/2, /*usedCores=*/1,
                 /*streamStores=*/false});
  EXPECT_EQ(t.rowElems, 16384);
  EXPECT_EQ(t.bytesReadOnce, 2u * 4 * 16384 * 4 + 2u * 16384 * 4);
  EXPECT_EQ(t.bytesPerStream, 2u * 4 * 16384 * 4 + 2u * 1 * 16384 * 4);  // x[b] cached: one core re-reads nothing
  // Four times the batch and rows: 10 MiB -> both cores, one 64K-element tile per row.
  const MhcTiling big = PlanMhc(MhcOp::kPost, MhcDtype::kFp32, {8, 256, 256, 4}, 0, kTwoCores);
  ExpectPlan(big, {MhcStrategy::kReadOnce, 65536, 1, 8, 2, false});
  EXPECT_EQ(big.bytesPerStream, 8u * 4 * 65536 * 4 + 2u * 8 * 65536 * 4);  // re-read once per core
}

TEST(MhcTiling, ShortRowsManyStreamsChoosePerStream) {
  // (1,2,512)xN=256: one row of 1024 elements cannot feed two cores, so A: 256 tasks, x cached.
  const MhcTiling t = PlanMhc(MhcOp::kPost, MhcDtype::kFp32, {1, 2, 512, 256}, 0, kTwoCores);
  ExpectPlan(t, {MhcStrategy::kPerStream, 1024, 1, 256, 2, false});
  EXPECT_EQ(t.bytesPerStream, t.bytesReadOnce + 4096);  // one extra read of the 4 KiB row
  // The same work limited to one core gains nothing from A.
  ExpectPlan(PlanMhc(MhcOp::kPost, MhcDtype::kFp32, {1, 2, 512, 256}, 1, kTwoCores),
             {MhcStrategy::kReadOnce, 1024, 1, 1, 1, false});
  // Pre and backward reduce over s inside a task: always (b, tile).
  EXPECT_EQ(PlanMhc(MhcOp::kPre, MhcDtype::kFp32, {1, 2, 512, 256}, 0, kTwoCores).strategy, MhcStrategy::kReadOnce);
  EXPECT_EQ(PlanMhc(MhcOp::kPostBackward, MhcDtype::kFp32, {1, 2, 512, 256}, 0, kTwoCores).strategy,
            MhcStrategy::kReadOnce);
}

TEST(MhcTiling, OneLongRowKeepsBothCoresBusy) {
  // (1,4096,4096)xN=4 fp32: the tile of x stays within the 512 KiB budget -> 128 tiles of 128K
  // elements; the 256 MiB output is far larger than the caches -> non-temporal stores.
  ExpectPlan(PlanMhc(MhcOp::kPost, MhcDtype::kFp32, {1, 4096, 4096, 4}, 0, kTwoCores),
             {MhcStrategy::kReadOnce, 131072, 128, 128, 2, true});
  // Pre reads N streams per tile element: tiles four times shorter.
  ExpectPlan(PlanMhc(MhcOp::kPre, MhcDtype::kFp32, {1, 4096, 4096, 4}, 0, kTwoCores),
             {MhcStrategy::kReadOnce, 32768, 512, 512, 2, true});
  // Backward reads N grad_out streams and x; its 32 MiB grad_input is 64 budgets -> streamed.
  const MhcTiling b = PlanMhc(MhcOp::kPostBackward, MhcDtype::kBf16, {1, 4096, 4096, 4}, 0, kTwoCores);
  ExpectPlan(b, {MhcStrategy::kReadOnce, 53248, 316, 316, 2, true});
  EXPECT_EQ(b.blocksPerRow, 16384);
  // A medium row, B = 1 (1.5 MiB): split along S*D into 4 tasks per core.
  ExpectPlan(PlanMhc(MhcOp::kPost, MhcDtype::kFp16, {1, 512, 512, 2}, 0, kTwoCores),
             {MhcStrategy::kReadOnce, 32768, 8, 8, 2, false});
}

TEST(MhcTiling, SmallWorkStaysOnOneCore) {
  ExpectPlan(PlanMhc(MhcOp::kPost, MhcDtype::kFp32, {1, 1, 16, 2}, 0, kTwoCores),
             {MhcStrategy::kReadOnce, 16, 1, 1, 1, false});
  ExpectPlan(PlanMhc(MhcOp::kPre, MhcDtype::kFp16, {2, 8, 64, 4}, 0, kTwoCores),
             {MhcStrategy::kReadOnce, 512, 1, 2, 1, false});
}

TEST(MhcTiling, EmptyWork) {
  for (MhcShape s : {MhcShape{0, 5, 5, 3}, MhcShape{2, 0, 5, 3}, MhcShape{2, 5, 0, 3}}) {
    const MhcTiling t = PlanMhc(MhcOp::kPostBackward, MhcDtype::kFp32, s, 0, kTwoCores);
    EXPECT_EQ(t.strategy, MhcStrategy::kEmpty);
    EXPECT_EQ(t.numTasks, 0);
    EXPECT_EQ(t.numStreams, 3);
  }
}

TEST(MhcTiling, AscendLikePlatform) {
  // (8,256,256)xN=4 fp32 on 40 cores with 192 KiB: 10 MiB of traffic wants 10 cores (1 MiB
  // each), 40 tasks -> 5 tiles per row of 13312 elements (rounded up to the 1024 alignment).
  ExpectPlan(PlanMhc(MhcOp::kPost, MhcDtype::kFp32, {8, 256, 256, 4}, 0, kAscendLikePlatform),
             {MhcStrategy::kReadOnce, 13312, 5, 40, 10, false});
  // The seed shape is one core's work.
  ExpectPlan(PlanMhc(MhcOp::kPost, MhcDtype::kFp32, {2, 64, 256, 4}, 0, kAscendLikePlatform),
             {MhcStrategy::kReadOnce, 16384, 1, 2, 1, false});
  // (1,1,2048)xN=256: two tiles cannot feed 3 cores; x[b] (8 KiB) fits the budget -> A.
  ExpectPlan(PlanMhc(MhcOp::kPost, MhcDtype::kFp32, {1, 1, 2048, 256}, 0, kAscendLikePlatform),
             {MhcStrategy::kPerStream, 2048, 1, 256, 3, false});
  // A big shape uses all 40 cores, 160+ tasks, tiles within 192 KiB, streaming stores.
  const MhcTiling big = PlanMhc(MhcOp::kPost, MhcDtype::kBf16, {16, 512, 4096, 4}, 0, kAscendLikePlatform);
  ExpectPlan(big, {MhcStrategy::kReadOnce, 96256, 22, 352, 40, true});
  EXPECT_LE(static_cast<uint64_t>(big.tileElems) * 2, kAscendLikePlatform.ubBytes);
  // blockDim caps the cores.
  EXPECT_EQ(PlanMhc(MhcOp::kPost, MhcDtype::kBf16, {16, 512, 4096, 4}, 8, kAscendLikePlatform).usedCores, 8);
}

// Invariants over a grid of shapes, ops, dtypes, platforms and blockDims.
TEST(MhcTiling, Invariants) {
  const PlatformInfo platforms[] = {kTwoCores, kAscendLikePlatform, {1, 4096}, {8, 1 << 20}, {3, 0}};
  for (const PlatformInfo& p : platforms)
    for (MhcOp op : {MhcOp::kPost, MhcOp::kPre, MhcOp::kPostBackward})
      for (MhcDtype dt : {MhcDtype::kFp32, MhcDtype::kFp16, MhcDtype::kBf16})
        for (int64_t B : {1, 2, 7, 64})
          for (int64_t E : {1, 15, 1000, 1024, 1025, 40000, 1 << 20})
            for (int64_t N : {1, 3, 8, 64})
              for (uint32_t blockDim : {0u, 1u, 3u}) {
                const MhcTiling t = PlanMhc(op, dt, {B, 1, E, N}, blockDim, p);
                SCOPED_TRACE(testing::Message() << "B=" << B << " E=" << E << " N=" << N << " blockDim=" << blockDim);
                ASSERT_NE(t.strategy, MhcStrategy::kEmpty);
                if (op != MhcOp::kPost) {
                  EXPECT_EQ(t.strategy, MhcStrategy::kReadOnce);
                }
                // Tiles cover the row exactly; tiles start on the alignment (and grad_h block) grid.
                EXPECT_TRUE(t.tilesPerRow == 1 ? t.tileElems == E : t.tileElems % kMhcTileAlignElems == 0);
                EXPECT_LT((t.tilesPerRow - 1) * t.tileElems, E);
                EXPECT_GE(t.tilesPerRow * t.tileElems, E);
                const int64_t units = t.strategy == MhcStrategy::kPerStream ? B * N : B;
                EXPECT_EQ(t.numTasks, units * t.tilesPerRow);
                EXPECT_GE(t.usedCores, 1);
                EXPECT_LE(t.usedCores, std::max(p.coreNum, 1));
                if (blockDim > 0) {
                  EXPECT_LE(t.usedCores, static_cast<int32_t>(blockDim));
                }
                EXPECT_LE(t.usedCores, t.numTasks);
                EXPECT_EQ(t.blocksPerRow, (E + kMhcReduceBlockElems - 1) / kMhcReduceBlockElems);
                EXPECT_LE(t.bytesReadOnce, op == MhcOp::kPost ? t.bytesPerStream : t.bytesReadOnce);
              }
}

// The largest shapes validation lets through plan without overflow (the estimates saturate).
TEST(MhcTiling, HugeShapesDoNotOverflow) {
  const int64_t e = (int64_t{1} << 61) - 1;  // [1, e] fp32 is just under 2^63 bytes
  for (MhcOp op : {MhcOp::kPost, MhcOp::kPre, MhcOp::kPostBackward}) {
    const MhcTiling t = PlanMhc(op, MhcDtype::kFp32, {1, 1, e, 1}, 0, kAscendLikePlatform);
    EXPECT_EQ(t.strategy, MhcStrategy::kReadOnce);
    EXPECT_EQ(t.usedCores, 40);
    EXPECT_GE(t.bytesReadOnce, static_cast<uint64_t>(e) * 8);
    EXPECT_LE((t.tilesPerRow - 1) * t.tileElems, e);
    EXPECT_GE(t.tilesPerRow * t.tileElems, e);
    EXPECT_TRUE(t.streamStores);
  }
  const MhcTiling many = PlanMhc(MhcOp::kPostBackward, MhcDtype::kFp16, {1, 1, 1, (int64_t{1} << 62) - 1}, 0, kTwoCores);
  EXPECT_EQ(many.numTasks, 1);
  EXPECT_EQ(many.usedCores, 1);
}
