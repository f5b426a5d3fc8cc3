// Size limits: counts and byte sizes that overflow int64/size_t, negative or absurd dims,
// storage shorter than the view, allocations beyond this host's memory — each a clean error
// with a message, never undefined behaviour (this binary runs under UBSan in CI). Views of more
// than 2^31 elements are created and reasoned about without touching their memory.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "acl/acl.h"
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
