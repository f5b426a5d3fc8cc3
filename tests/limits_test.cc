// Size limits: counts and byte sizes that overflow int64/size_t, negative or absurd dims,
// storage shorter than the view, allocations beyond this host's memory — each a clean error
// with a message, never undefined behaviour (this binary runs under UBSan in CI). Views of more
// than 2^31 elements are created and reasoned about without touching their memory.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_softmax_cross_entropy_with_logits.h"
#include "mhc/mhc.h"
#include "numeric/half.h"
#include "ops/mhc/mhc_tiling.h"
#include "ops/softmax_cross_entropy_with_logits/sce_tiling.h"
#include "runtime/tensor.h"
#include "support/hardening_support.h"

using namespace aclnn_portable;
using aclnn_test::RecentMessage;

namespace {

constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t k2Pow31 = int64_t{1} << 31;

aclTensor* Create(std::vector<int64_t> dims, std::vector<int64_t> strides, int64_t offset,
                  std::vector<int64_t> storage, aclDataType dtype = ACL_FLOAT) {
  return aclCreateTensor(dims.data(), dims.size(), dtype, strides.empty() ? nullptr : strides.data(),
                         offset, ACL_FORMAT_ND, storage.data(), storage.size(), nullptr);
}

void ExpectFails(aclTensor* t, const std::string& needle) {
  EXPECT_EQ(t, nullptr);
  EXPECT_NE(RecentMessage().find(needle), std::string::npos) << RecentMessage();
  aclDestroyTensor(t);
}

}  // namespace

TEST(Limits, ElementCountsThatOverflowInt64) {
  ExpectFails(Create({int64_t{1} << 32, int64_t{1} << 32}, {}, 0, {1}), "element count of viewDims");
  ExpectFails(Create({kI64Max, 2}, {}, 0, {1}), "overflows int64");
  ExpectFails(Create({3, 3, 3, 3, 3, 3, 3, kI64Max / 100}, {}, 0, {1}), "overflows int64");
  ExpectFails(Create({1}, {}, 0, {int64_t{1} << 40, int64_t{1} << 40}), "element count of storageDims");
  // The storage's element count fits, its byte count does not.
  ExpectFails(Create({1}, {}, 0, {int64_t{1} << 62}, ACL_FLOAT), "byte size of storageDims");
  ExpectFails(Create({1}, {}, 0, {kI64Max / 8 + 1}, ACL_DOUBLE), "byte size of storageDims");
}

TEST(Limits, ViewOffsetsThatOverflowInt64) {
  // (dim - 1) * stride overflows, the sum of the steps overflows, offset + step overflows.
  ExpectFails(Create({3}, {int64_t{1} << 62}, 0, {1}), "largest element offset overflows int64");
  ExpectFails(Create({2, 2}, {kI64Max / 2 + 1, kI64Max / 2 + 1}, 0, {1}), "overflows int64");
  ExpectFails(Create({2}, {1}, kI64Max, {1}), "overflows int64");
  ExpectFails(Create({2}, {kI64Max}, 1, {1}), "overflows int64");
}

TEST(Limits, NegativeAndAbsurdDims) {
  ExpectFails(Create({-1}, {}, 0, {1}), "viewDims[0] must be >= 0, got -1");
  ExpectFails(Create({4, std::numeric_limits<int64_t>::min()}, {}, 0, {1}), "viewDims[1] must be >= 0");
  ExpectFails(Create({4}, {std::numeric_limits<int64_t>::min()}, 0, {4}), "stride[0] must be >= 0");
  ExpectFails(Create({4}, {}, std::numeric_limits<int64_t>::min(), {4}), "offset must be >= 0");
  ExpectFails(Create({4}, {}, 0, {-1}), "storageDims[0] must be >= 0");
  ExpectFails(Create({kI64Max}, {}, 0, {kI64Max - 1}, ACL_INT8), "reaches element");
}

TEST(Limits, StorageShorterThanTheView) {
  ExpectFails(Create({2, 3}, {}, 0, {5}), "reaches element 5 but the storage [5] holds 5 elements");
  ExpectFails(Create({2, 3}, {1, 2}, 0, {5}), "reaches element 5");  // transposed, one short
  ExpectFails(Create({4}, {2}, 0, {6}), "reaches element 6");        // gaps count too
  ExpectFails(Create({1}, {}, 8, {8}), "reaches element 8");
  ExpectFails(Create({2}, {}, 0, {}), "holds 1 elements");           // rank-0 storage: one element
}

// Empty views with huge dims: their default strides are not representable, and nothing may
// overflow computing them (UBSan would report it); they touch no memory.
TEST(Limits, EmptyViewsWithHugeDims) {
  aclTensor* t = Create({0, int64_t{1} << 62, int64_t{1} << 62}, {}, 0, {0});
  ASSERT_NE(t, nullptr) << RecentMessage();
  EXPECT_EQ(NumElements(*t), 0);
  EXPECT_TRUE(ViewSpan(*t, nullptr).empty());
  EXPECT_TRUE(IsContiguous(*t));
  EXPECT_EQ(aclDestroyTensor(t), ACLNN_SUCCESS);
  t = Create({kI64Max, 0, kI64Max}, {}, kI64Max, {0});
  ASSERT_NE(t, nullptr) << RecentMessage();
  EXPECT_TRUE(IsContiguous(*t));
  EXPECT_EQ(aclDestroyTensor(t), ACLNN_SUCCESS);
}

// A view of more than 2^31 (and of 2^63 - 1) elements: created over storage that is never
// touched, its element count and byte span computed in 64 bits.
TEST(Limits, ViewsBeyond2Pow31Elements) {
  const int64_t c = (int64_t{1} << 30) + 3;
  aclTensor* t = Create({2, c}, {}, 0, {2, c}, ACL_FLOAT16);
  ASSERT_NE(t, nullptr) << RecentMessage();
  EXPECT_EQ(NumElements(*t), 2 * c);
  EXPECT_GT(NumElements(*t), k2Pow31);
  EXPECT_TRUE(IsContiguous(*t));
  const ByteSpan span = ViewSpan(*t, nullptr);
  EXPECT_EQ(span.end - span.begin, static_cast<uintptr_t>(2 * c * 2));  // 4 GiB + 12 bytes
  EXPECT_EQ(aclDestroyTensor(t), ACLNN_SUCCESS);
  // The transposed view of the same storage ends at the same element.
  t = Create({c, 2}, {1, c}, 0, {2 * c}, ACL_FLOAT16);
  ASSERT_NE(t, nullptr) << RecentMessage();
  EXPECT_EQ(ViewSpan(*t, nullptr).end, static_cast<uintptr_t>(2 * c * 2));
  EXPECT_EQ(aclDestroyTensor(t), ACLNN_SUCCESS);
  // The largest representable view: 2^63 - 1 one-byte elements.
  t = Create({kI64Max}, {}, 0, {kI64Max}, ACL_INT8);
  ASSERT_NE(t, nullptr) << RecentMessage();
  EXPECT_EQ(NumElements(*t), kI64Max);
  EXPECT_EQ(ViewSpan(*t, nullptr).end, static_cast<uintptr_t>(kI64Max));
  EXPECT_EQ(aclDestroyTensor(t), ACLNN_SUCCESS);
  // One element past it in storage or offset fails.
  ExpectFails(Create({kI64Max}, {}, 1, {kI64Max}, ACL_INT8), "reaches element");
}

// aclrtMalloc of sizes this host cannot hold is a clean error (never an abort inside the
// allocator, which is what ASan does for sizes beyond its own limit).
TEST(Limits, AllocationsBeyondMemoryFailCleanly) {
  const size_t kHuge[] = {std::numeric_limits<size_t>::max(), std::numeric_limits<size_t>::max() - 31,
                          std::numeric_limits<size_t>::max() / 2, size_t{1} << 50, size_t{1} << 44};
  for (size_t size : kHuge) {
    void* p = reinterpret_cast<void*>(0x10);
    const aclError st = aclrtMalloc(&p, size, ACL_MEM_MALLOC_HUGE_FIRST);
    EXPECT_TRUE(st == ACL_ERROR_BAD_ALLOC || st == ACL_ERROR_RT_MEMORY_ALLOCATION) << size << " " << st;
    EXPECT_EQ(p, reinterpret_cast<void*>(0x10)) << "the output must be untouched on failure";
    EXPECT_NE(RecentMessage().find("aclrtMalloc"), std::string::npos);
    EXPECT_NE(RecentMessage().find(std::to_string(size)), std::string::npos) << RecentMessage();
    EXPECT_NE(aclrtMallocHost(&p, size), ACL_SUCCESS);
  }
  // Bounds with sizes at the top of size_t.
  char buf[8] = {};
  EXPECT_EQ(aclrtMemcpy(buf, sizeof buf, buf, std::numeric_limits<size_t>::max(), ACL_MEMCPY_HOST_TO_HOST),
            ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(aclrtMemset(buf, sizeof buf, 0, std::numeric_limits<size_t>::max()), ACL_ERROR_INVALID_PARAM);
}

// An executor needing a workspace larger than any allocation: launching it with what can be
// given fails at execute with the sizes in the message and writes nothing.
TEST(Limits, WorkspaceBeyondWhatWasGiven) {
  const uint64_t need = uint64_t{1} << 62;
  std::vector<float> in{1}, out{-3};
  aclOpExecutor* e = aclnn_test::NewAffineExecutor(1, need, in.data(), out.data());
  char small[64];
  EXPECT_EQ(aclnn_test::LaunchAffine(small, sizeof small, e, nullptr), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(RecentMessage().find(std::to_string(need)), std::string::npos) << RecentMessage();
  EXPECT_EQ(aclnn_test::LaunchAffine(nullptr, need, e, nullptr), ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(out[0], -3.0f);
  EXPECT_EQ(aclDestroyAclOpExecutor(e), ACLNN_SUCCESS);
}

// ---- operators on more than 2^31 elements ----------------------------------------------------

namespace {

// Addresses far apart that are never dereferenced: stage 1 only plans.
void* FakeBase(int i) { return reinterpret_cast<void*>(uintptr_t{0x100000000000} * (i + 1)); }

aclTensor* Over(std::vector<int64_t> dims, aclDataType dt, aclFormat fmt, void* data) {
  int64_t numel = 1;
  for (int64_t d : dims) numel *= d;
  const int64_t storage[1] = {numel};
  return aclCreateTensor(dims.data(), dims.size(), dt, nullptr, 0, fmt, storage, 1, data);
}

}  // namespace

// SCE stage 1 (validation, shape inference, planning) on fp16 [2, 2^30 + 3]: accepted, with a
// plan whose fields are the 64-bit values computed here (R split in kSceChunk chunks).
TEST(Limits, SceStage1OnMoreThan2Pow31Elements) {
  const int64_t c = (int64_t{1} << 30) + 3;
  aclTensor* f = Over({2, c}, ACL_FLOAT16, ACL_FORMAT_ND, FakeBase(0));
  aclTensor* l = Over({2, c}, ACL_FLOAT16, ACL_FORMAT_ND, FakeBase(1));
  aclTensor* loss = Over({2}, ACL_FLOAT16, ACL_FORMAT_ND, FakeBase(2));
  aclTensor* bp = Over({2, c}, ACL_FLOAT16, ACL_FORMAT_ND, FakeBase(3));
  ASSERT_TRUE(f && l && loss && bp) << RecentMessage();
  uint64_t ws = 0;
  aclOpExecutor* e = nullptr;
  ASSERT_EQ(aclnnSoftmaxCrossEntropyWithLogitsGetWorkspaceSize(f, l, loss, bp, &ws, &e), ACLNN_SUCCESS)
      << RecentMessage();
  // Contiguous tensors are not copied: the workspace holds at most per-chunk records.
  EXPECT_LT(ws, uint64_t{64} << 20);
  EXPECT_EQ(aclDestroyAclOpExecutor(e), ACLNN_SUCCESS);  // never run
  for (aclTensor* t : {f, l, loss, bp}) aclDestroyTensor(t);

  SceProblem p;
  p.layout = SceLayout::kND;
  p.dtypeBytes = 2;
  p.N = p.featuresN = p.labelsN = 2;
  p.C = p.featuresC = p.labelsC = c;
  for (const PlatformInfo& platform : {CurrentPlatform(), kAscendLikePlatform}) {
    const SceTiling t = PlanSce(p, platform);
    EXPECT_EQ(t.A, 2);
    EXPECT_EQ(t.R, c);
    EXPECT_EQ(t.schId, SceSchedule::kSplitR);
    EXPECT_EQ(t.rUbNumFactor, kSceChunk);
    EXPECT_EQ(t.rLoopTime, (c + kSceChunk - 1) / kSceChunk);  // 262145
    EXPECT_EQ(t.rLoopTile, c - (t.rLoopTime - 1) * kSceChunk);  // 3
  }
  // NCHW with N*H*W > 2^31 positions.
  p = SceProblem{};
  p.layout = SceLayout::kNCHW;
  p.dtypeBytes = 2;
  p.N = 2, p.C = 3, p.H = 32768, p.W = 32769;
  p.featuresN = p.labelsN = 2, p.featuresC = p.labelsC = 3;
  const SceTiling t = PlanSce(p, kAscendLikePlatform);
  EXPECT_EQ(t.A, int64_t{2} * 32768 * 32769);
  EXPECT_GT(t.A, k2Pow31);
  EXPECT_EQ(t.HW, int64_t{32768} * 32769);
  EXPECT_EQ(t.R, 3);
  EXPECT_EQ(t.realCoreNum, (t.A + t.blockFactor - 1) / t.blockFactor);
  EXPECT_EQ(t.tailBlockFactor, t.A - t.blockFactor * (t.realCoreNum - 1));
}

// The mHC planner on rows of 2^30 + 3 elements and B*N*S*D > 2^32: tiles cover every row
// exactly, task counts are the 64-bit products.
TEST(Limits, MhcPlanOnMoreThan2Pow31Elements) {
  const MhcShape shape{4, 1, (int64_t{1} << 30) + 3, 4};
  for (MhcOp op : {MhcOp::kPost, MhcOp::kPre, MhcOp::kPostBackward}) {
    const MhcTiling t = PlanMhc(op, MhcDtype::kFp16, shape, 0, kAscendLikePlatform);
    EXPECT_EQ(t.rowElems, shape.seqLen * shape.dim);
    ASSERT_GT(t.tileElems, 0);
    EXPECT_EQ(t.tilesPerRow, (t.rowElems + t.tileElems - 1) / t.tileElems);
    const int64_t rows = t.strategy == MhcStrategy::kPerStream ? shape.batch * shape.numStreams : shape.batch;
    EXPECT_EQ(t.numTasks, rows * t.tilesPerRow);
    EXPECT_GE(t.bytesReadOnce, static_cast<uint64_t>(shape.batch * (1 + shape.numStreams)) * t.rowElems * 2);
  }
}

// A real SCE run whose views sit beyond 2^31 elements (and 2^32 bytes) of their storage: rows
// 2^31 + 5 elements apart in a sparse 8 GiB mapping of which only the touched pages exist.
// Element offsets that were truncated to 32 bits would read and write the wrong places.
TEST(Limits, SceRunAtElementOffsetsBeyond2Pow31) {
  const int64_t row_stride = k2Pow31 + 5, offset = k2Pow31 + 1, n = 2, c = 5;
  const int64_t extent = offset + (n - 1) * row_stride + c;  // elements of each storage
  const size_t bytes = static_cast<size_t>(extent) * 2;
  void* maps[3];
  for (void*& m : maps) {
    m = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) GTEST_SKIP() << "cannot map " << bytes << " bytes of address space";
  }
  auto* fx = static_cast<uint16_t*>(maps[0]);
  auto* bx = static_cast<uint16_t*>(maps[1]);
  auto* lx = static_cast<uint16_t*>(maps[2]);
  std::vector<uint16_t> labels(n * c);
  std::vector<float> xs(n * c), ys(n * c);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t j = 0; j < c; ++j) {
      xs[r * c + j] = static_cast<float>(j * (r + 1)) * 0.5f - 1.0f;  // exact in fp16
      ys[r * c + j] = j == r ? 1.0f : 0.0f;
      fx[offset + r * row_stride + j] = FloatToHalf(xs[r * c + j]);
      labels[r * c + j] = FloatToHalf(ys[r * c + j]);
    }
  const int64_t dims[2] = {n, c}, strides[2] = {row_stride, 1}, storage[1] = {extent};
  const int64_t ldims[1] = {n}, lstrides[1] = {row_stride};
  aclTensor* f = aclCreateTensor(dims, 2, ACL_FLOAT16, strides, offset, ACL_FORMAT_ND, storage, 1, fx);
  aclTensor* l = aclCreateTensor(dims, 2, ACL_FLOAT16, nullptr, 0, ACL_FORMAT_ND, dims, 2, labels.data());
  aclTensor* loss = aclCreateTensor(ldims, 1, ACL_FLOAT16, lstrides, offset, ACL_FORMAT_ND, storage, 1, lx);
  aclTensor* bp = aclCreateTensor(dims, 2, ACL_FLOAT16, strides, offset, ACL_FORMAT_ND, storage, 1, bx);
  ASSERT_TRUE(f && l && loss && bp) << RecentMessage();
  uint64_t ws_size = 0;
  aclOpExecutor* e = nullptr;
  ASSERT_EQ(aclnnSoftmaxCrossEntropyWithLogitsGetWorkspaceSize(f, l, loss, bp, &ws_size, &e), ACLNN_SUCCESS)
      << RecentMessage();
  std::vector<uint8_t> ws(ws_size + 64);
  ASSERT_EQ(aclnnSoftmaxCrossEntropyWithLogits(ws.data(), ws_size, e, nullptr), ACLNN_SUCCESS) << RecentMessage();
  for (int64_t r = 0; r < n; ++r) {
    double m = -INFINITY, s = 0, ref = 0;
    for (int64_t j = 0; j < c; ++j) m = std::max<double>(m, xs[r * c + j]);
    for (int64_t j = 0; j < c; ++j) s += std::exp(xs[r * c + j] - m);
    for (int64_t j = 0; j < c; ++j) {
      const double z = xs[r * c + j] - m, want = std::exp(z) / s - ys[r * c + j];
      ref += ys[r * c + j] * (std::log(s) - z);
      EXPECT_NEAR(HalfToFloat(bx[offset + r * row_stride + j]), want, 1e-3 * (1 + std::fabs(want)));
    }
    EXPECT_NEAR(HalfToFloat(lx[offset + r * row_stride]), ref, 2e-3 * (1 + ref));
    // Around the written elements the mapping is still zero.
    EXPECT_EQ(bx[offset + r * row_stride - 1], 0);
    EXPECT_EQ(bx[offset + r * row_stride + c], 0);
    EXPECT_EQ(lx[offset + r * row_stride + 1], 0);
  }
  EXPECT_EQ(lx[offset + row_stride - 1], 0);
  for (aclTensor* t : {f, l, loss, bp}) aclDestroyTensor(t);
  for (void* m : maps) munmap(m, bytes);
}

// mHC refuses sizes whose products overflow int64 / size_t, and negative sizes, writing nothing.
TEST(Limits, MhcRefusesOverflowingSizes) {
  std::vector<uint8_t> in(64, 1), h(64, 1), out(64, 0xee);
  const int64_t big = int64_t{1} << 32;
  const struct { int64_t b, s, d, n; } cases[] = {
      {big, big, 1, 1}, {1, big, big, 1}, {2, 2, 2, INT64_MAX}, {INT64_MAX, 1, 1, 2},
      {-1, 1, 1, 1}, {1, -1, 1, 1}, {1, 1, -1, 1}, {1, 1, 1, 0}, {1, 1, 1, -3},
      {int64_t{1} << 31, int64_t{1} << 31, 4, 1}};  // 2^64 elements
  for (const auto& cs : cases) {
    mhc_post_do_fp32(0, nullptr, in.data(), h.data(), out.data(), cs.b, cs.s, cs.d, cs.n);
    EXPECT_NE(RecentMessage(), "") << cs.b << " " << cs.s << " " << cs.d << " " << cs.n;
    mhc_pre_do_bf16(0, nullptr, in.data(), h.data(), out.data(), cs.b, cs.s, cs.d, cs.n);
    EXPECT_NE(RecentMessage(), "");
    mhc_post_backward_do_fp16(0, nullptr, in.data(), in.data(), h.data(), out.data(), out.data(), cs.b, cs.s,
                              cs.d, cs.n);
    EXPECT_NE(RecentMessage(), "");
    EXPECT_EQ(out, std::vector<uint8_t>(64, 0xee));
  }
}
