// The ACL runtime subset on its own (DESIGN §4): tensor views and creation errors, memory
// calls and their bounds, streams (order, synchronize, destroy with queued work), executors
// (consumed, repeatable, destroyed, rebound), aclInit/aclFinalize with live objects, and the
// thread-locality of aclGetRecentErrMsg. Executors are driven with a test-only plan
// (support/hardening_support.h) so these tests do not depend on any operator.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <limits>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "acl/acl.h"
#include "platform/thread_pool.h"
#include "runtime/stream.h"
#include "runtime/tensor.h"
#include "support/hardening_support.h"
#include "support/test_support.h"

using namespace aclnn_portable;
using aclnn_test::GuardedBuffer;
using aclnn_test::RecentMessage;

namespace {

constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();

aclTensor* Create(std::vector<int64_t> dims, std::vector<int64_t> strides, int64_t offset,
                  std::vector<int64_t> storage, aclDataType dtype = ACL_FLOAT, void* data = nullptr) {
  return aclCreateTensor(dims.data(), dims.size(), dtype, strides.empty() ? nullptr : strides.data(),
                         offset, ACL_FORMAT_ND, storage.data(), storage.size(), data);
}

// Creation must fail with a message containing `needle`.
void ExpectCreateFails(std::vector<int64_t> dims, std::vector<int64_t> strides, int64_t offset,
                       std::vector<int64_t> storage, const std::string& needle,
                       aclDataType dtype = ACL_FLOAT) {
  aclTensor* t = Create(dims, strides, offset, storage, dtype);
  EXPECT_EQ(t, nullptr) << needle;
  const std::string msg = RecentMessage();
  EXPECT_NE(msg.find("aclCreateTensor"), std::string::npos) << msg;
  EXPECT_NE(msg.find(needle), std::string::npos) << "message: " << msg << "\nexpected: " << needle;
  aclDestroyTensor(t);
}

}  // namespace

// ---- tensors --------------------------------------------------------------------------------

TEST(Tensor, ContiguousDefaultsAndQueries) {
  float storage[24];
  aclTensor* t = Create({2, 3, 4}, {}, 0, {2, 3, 4}, ACL_FLOAT, storage);
  ASSERT_NE(t, nullptr) << RecentMessage();
  EXPECT_STREQ(aclGetRecentErrMsg(), "");
  EXPECT_EQ(t->strides, (std::vector<int64_t>{12, 4, 1}));
  EXPECT_TRUE(IsContiguous(*t));
  EXPECT_EQ(NumElements(*t), 24);
  int64_t* dims = nullptr;
  uint64_t n = 0;
  ASSERT_EQ(aclGetViewShape(t, &dims, &n), ACLNN_SUCCESS);
  ASSERT_EQ(n, 3u);
  EXPECT_EQ(dims[0], 2);
  EXPECT_EQ(dims[2], 4);
  aclDataType dt = ACL_DT_UNDEFINED;
  aclFormat fmt = ACL_FORMAT_UNDEFINED;
  EXPECT_EQ(aclGetDataType(t, &dt), ACLNN_SUCCESS);
  EXPECT_EQ(dt, ACL_FLOAT);
  EXPECT_EQ(aclGetFormat(t, &fmt), ACLNN_SUCCESS);
  EXPECT_EQ(fmt, ACL_FORMAT_ND);
  const ByteSpan span = ViewSpan(*t, storage);
  EXPECT_EQ(span.begin, reinterpret_cast<uintptr_t>(storage));
  EXPECT_EQ(span.end, reinterpret_cast<uintptr_t>(storage + 24));
  EXPECT_EQ(aclGetViewShape(nullptr, &dims, &n), ACLNN_ERR_PARAM_NULLPTR);
  EXPECT_EQ(aclGetDataType(t, nullptr), ACLNN_ERR_PARAM_NULLPTR);
  EXPECT_EQ(aclDestroyTensor(t), ACLNN_SUCCESS);
  // A destroyed handle is refused, not dereferenced.
  EXPECT_EQ(aclGetViewShape(t, &dims, &n), ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(aclDestroyTensor(t), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(RecentMessage().find("not a live aclTensor"), std::string::npos);
  EXPECT_EQ(aclDestroyTensor(nullptr), ACLNN_SUCCESS);
}

TEST(Tensor, StridedViewsOffsetsAndSpans) {
  // A transposed [4, 3] view of a [3, 4] storage, and a strided sub-block with an offset.
  aclTensor* tr = Create({4, 3}, {1, 4}, 0, {3, 4});
  ASSERT_NE(tr, nullptr) << RecentMessage();
  EXPECT_FALSE(IsContiguous(*tr));
  aclTensor* sub = Create({2, 2}, {8, 2}, 5, {4, 8});  // touches 5, 7, 13, 15
  ASSERT_NE(sub, nullptr) << RecentMessage();
  const ByteSpan s = ViewSpan(*sub, nullptr);
  EXPECT_EQ(s.begin, 5 * sizeof(float));
  EXPECT_EQ(s.end, 16 * sizeof(float));
  // Size-1 dims: their stride is never used, so any stride keeps the view contiguous.
  aclTensor* one = Create({3, 1, 4}, {4, 999, 1}, 0, {12});
  ASSERT_NE(one, nullptr) << RecentMessage();
  EXPECT_TRUE(IsContiguous(*one));
  // Broadcast-style zero strides are legal views.
  aclTensor* zero = Create({5, 4}, {0, 1}, 0, {4});
  ASSERT_NE(zero, nullptr) << RecentMessage();
  EXPECT_EQ(ViewSpan(*zero, nullptr).end, 4 * sizeof(float));
  // Scalar (rank 0) and empty views.
  aclTensor* scalar = aclCreateTensor(nullptr, 0, ACL_FLOAT16, nullptr, 3, ACL_FORMAT_ND,
                                      std::vector<int64_t>{4}.data(), 1, nullptr);
  ASSERT_NE(scalar, nullptr) << RecentMessage();
  EXPECT_EQ(NumElements(*scalar), 1);
  EXPECT_EQ(ViewSpan(*scalar, nullptr).begin, 6u);
  EXPECT_EQ(ViewSpan(*scalar, nullptr).end, 8u);
  aclTensor* empty = Create({0, 7}, {}, 1000, {0});  // an empty view touches nothing
  ASSERT_NE(empty, nullptr) << RecentMessage();
  EXPECT_TRUE(ViewSpan(*empty, nullptr).empty());
  EXPECT_FALSE(Overlap(ViewSpan(*empty, nullptr), ViewSpan(*tr, nullptr)));
  EXPECT_TRUE(Overlap(ViewSpan(*sub, nullptr), ViewSpan(*tr, nullptr)));
  EXPECT_TRUE(SameView(*sub, nullptr, *sub, nullptr));
  EXPECT_FALSE(SameView(*sub, nullptr, *tr, nullptr));
  for (aclTensor* t : {tr, sub, one, zero, scalar, empty}) EXPECT_EQ(aclDestroyTensor(t), ACLNN_SUCCESS);
}

// A plan keeps ViewDesc copies of its views (no allocation); they must compare and span exactly
// as the aclTensors they describe, up to the largest rank.
TEST(Tensor, ViewDescIsTheWholeView) {
  std::vector<int64_t> dims8(kMaxTensorRank, 2), strides8(kMaxTensorRank);
  for (size_t i = 0; i < kMaxTensorRank; ++i) strides8[i] = int64_t{1} << (2 * (kMaxTensorRank - 1 - i));
  aclTensor* r8 = Create(dims8, strides8, 3, {int64_t{1} << (2 * kMaxTensorRank)});
  ASSERT_NE(r8, nullptr) << RecentMessage();
  const ViewDesc d = DescribeView(*r8);
  ASSERT_EQ(d.rank, kMaxTensorRank);
  for (size_t i = 0; i < kMaxTensorRank; ++i) {
    EXPECT_EQ(d.dims[i], 2);
    EXPECT_EQ(d.strides[i], strides8[i]);
  }
  EXPECT_EQ(d.offset, 3);
  EXPECT_EQ(d.dtype, ACL_FLOAT);
  EXPECT_EQ(d.numel, 256);
  const ByteSpan s = ViewSpan(d, nullptr);
  EXPECT_EQ(s.begin, 3 * sizeof(float));
  EXPECT_EQ(s.end, (3 + 21845 + 1) * sizeof(float));  // 3 + sum of the strides (4^i, i < 8)
  // Views that agree on all but one property are different views.
  aclTensor* a = Create({2, 2}, {2, 1}, 0, {4});
  aclTensor* moreRank = Create({2, 2, 1}, {2, 1, 1}, 0, {4});
  aclTensor* shifted = Create({2, 2}, {2, 1}, 1, {5});
  aclTensor* half = Create({2, 2}, {2, 1}, 0, {4}, ACL_FLOAT16);
  aclTensor* transposed = Create({2, 2}, {1, 2}, 0, {4});
  for (aclTensor* t : {a, moreRank, shifted, half, transposed}) ASSERT_NE(t, nullptr) << RecentMessage();
  const ViewDesc da = DescribeView(*a);
  EXPECT_TRUE(SameView(da, nullptr, DescribeView(*a), nullptr));
  EXPECT_FALSE(SameView(da, nullptr, da, &da));  // another storage
  for (aclTensor* t : {moreRank, shifted, half, transposed}) {
    EXPECT_FALSE(SameView(da, nullptr, DescribeView(*t), nullptr));
    EXPECT_FALSE(SameView(*a, nullptr, *t, nullptr));
  }
  aclTensor* empty = Create({0, 7}, {}, 1000, {0});
  ASSERT_NE(empty, nullptr) << RecentMessage();
  EXPECT_EQ(DescribeView(*empty).numel, 0);
  EXPECT_TRUE(ViewSpan(DescribeView(*empty), nullptr).empty());
  for (aclTensor* t : {r8, a, moreRank, shifted, half, transposed, empty}) EXPECT_EQ(aclDestroyTensor(t), ACLNN_SUCCESS);
}

TEST(Tensor, CreationErrorsNameTheArgument) {
  ExpectCreateFails({2, -1}, {}, 0, {2}, "viewDims[1] must be >= 0, got -1");
  ExpectCreateFails({2, 3}, {3, -1}, 0, {6}, "stride[1] must be >= 0, got -1");
  ExpectCreateFails({2, 3}, {}, -4, {6}, "offset must be >= 0, got -4");
  ExpectCreateFails({2, 3}, {}, 0, {-6}, "storageDims[0] must be >= 0, got -6");
  ExpectCreateFails({2, 3}, {}, 0, {6}, "dataType must be a numeric aclDataType", ACL_STRING);
  ExpectCreateFails({2, 3}, {}, 0, {6}, "dataType must be a numeric aclDataType",
                    static_cast<aclDataType>(99));
  ExpectCreateFails({2, 3}, {}, 0, {6}, "dataType must be a numeric aclDataType", ACL_DT_UNDEFINED);
  // Enum arguments outside the declared values (a C caller may pass any int) are refused.
  std::vector<int64_t> d6{6};
  EXPECT_EQ(aclCreateTensor(d6.data(), 1, ACL_FLOAT, nullptr, 0, static_cast<aclFormat>(200), d6.data(), 1, nullptr), nullptr);
  EXPECT_NE(RecentMessage().find("format must be an aclFormat declared in acl/acl.h, got 200"), std::string::npos);
  EXPECT_EQ(aclCreateTensor(d6.data(), 1, static_cast<aclDataType>(-77), nullptr, 0, ACL_FORMAT_ND, d6.data(), 1, nullptr), nullptr);
  EXPECT_NE(RecentMessage().find("got -77"), std::string::npos);
  ExpectCreateFails({2, 3}, {}, 1, {6}, "reaches element 6");          // offset pushes past
  ExpectCreateFails({2, 3}, {4, 1}, 0, {6}, "holds 6 elements");       // strides push past
  ExpectCreateFails({2, 3}, {}, 0, {5}, "reaches element 5");          // storage too short
  ExpectCreateFails({1, 2, 3, 4, 5, 6, 7, 8, 9}, {}, 0, {1}, "viewDimsNum must be at most 8, got 9");
  std::vector<int64_t> dims{2};
  EXPECT_EQ(aclCreateTensor(nullptr, 1, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, dims.data(), 1, nullptr), nullptr);
  EXPECT_NE(RecentMessage().find("viewDims is null but viewDimsNum is 1"), std::string::npos);
  EXPECT_EQ(aclCreateTensor(dims.data(), 1, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, nullptr, 1, nullptr), nullptr);
  EXPECT_NE(RecentMessage().find("storageDims is null but storageDimsNum is 1"), std::string::npos);
  EXPECT_EQ(aclCreateTensor(dims.data(), 1, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, dims.data(), 9, nullptr), nullptr);
  EXPECT_NE(RecentMessage().find("storageDimsNum must be at most 8"), std::string::npos);
  // A later successful call clears the message.
  aclTensor* ok = Create({2}, {}, 0, {2});
  ASSERT_NE(ok, nullptr);
  EXPECT_STREQ(aclGetRecentErrMsg(), "");
  aclDestroyTensor(ok);
}

// ---- memory ---------------------------------------------------------------------------------

TEST(Memory, MallocAlignsAndFreesOnce) {
  for (size_t size : {size_t{1}, size_t{31}, size_t{32}, size_t{33}, size_t{4096}, size_t{1} << 20}) {
    void* p = nullptr;
    ASSERT_EQ(aclrtMalloc(&p, size, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS) << size;
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
    // CANN pads: round up to 32 and add 32; every one of those bytes is ours to touch.
    const size_t padded = (size + 31) / 32 * 32 + 32;
    EXPECT_EQ(aclrtMemset(p, padded, 0x7f, padded), ACL_SUCCESS);
    EXPECT_EQ(aclrtFree(p), ACL_SUCCESS);
    EXPECT_EQ(aclrtFree(p), ACL_ERROR_INVALID_PARAM);  // double free is refused
    EXPECT_NE(RecentMessage().find("already freed"), std::string::npos);
  }
  void* h = nullptr;
  ASSERT_EQ(aclrtMallocHost(&h, 100), ACL_SUCCESS);
  EXPECT_EQ(aclrtFreeHost(h), ACL_SUCCESS);
  int local = 0;
  EXPECT_EQ(aclrtFree(&local), ACL_ERROR_INVALID_PARAM);  // foreign pointer
  EXPECT_EQ(aclrtFree(nullptr), ACL_ERROR_INVALID_PARAM);
}

TEST(Memory, MallocRejectsBadArguments) {
  void* p = reinterpret_cast<void*>(0x1);
  EXPECT_EQ(aclrtMalloc(&p, 0, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM);
  EXPECT_NE(RecentMessage().find("size must be > 0"), std::string::npos);
  EXPECT_EQ(p, reinterpret_cast<void*>(0x1));  // untouched on failure
  EXPECT_EQ(aclrtMalloc(nullptr, 16, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(aclrtMalloc(&p, 16, static_cast<aclrtMemMallocPolicy>(17)), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(aclrtMalloc(&p, 16, static_cast<aclrtMemMallocPolicy>(-1)), ACL_ERROR_INVALID_PARAM);
  EXPECT_NE(RecentMessage().find("policy"), std::string::npos);
  EXPECT_EQ(aclrtMallocHost(&p, 0), ACL_ERROR_INVALID_PARAM);
}

TEST(Memory, MemcpyAndMemsetRespectBounds) {
  GuardedBuffer dst(64), src(64);
  std::memset(src.data(), 0x11, 64);
  EXPECT_EQ(aclrtMemcpy(dst.data(), 32, src.data(), 33, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM);
  EXPECT_NE(RecentMessage().find("count (33 bytes) must not exceed destMax (32 bytes)"), std::string::npos);
  EXPECT_TRUE(dst.Intact());
  EXPECT_EQ(static_cast<unsigned char*>(dst.data())[0], GuardedBuffer::kSentinel);  // nothing copied
  EXPECT_EQ(aclrtMemcpy(dst.data(), 64, src.data(), 64, static_cast<aclrtMemcpyKind>(9)), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(aclrtMemcpy(nullptr, 64, src.data(), 8, ACL_MEMCPY_HOST_TO_HOST), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(aclrtMemcpy(dst.data(), 64, nullptr, 8, ACL_MEMCPY_HOST_TO_HOST), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(aclrtMemcpy(nullptr, 0, nullptr, 0, ACL_MEMCPY_HOST_TO_HOST), ACL_SUCCESS);  // nothing to do
  EXPECT_EQ(aclrtMemcpy(dst.data(), 64, src.data(), 64, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
  EXPECT_EQ(static_cast<unsigned char*>(dst.data())[63], 0x11);
  EXPECT_TRUE(dst.Intact());
  // Overlapping ranges copy like memmove.
  auto* d = static_cast<unsigned char*>(dst.data());
  for (int i = 0; i < 64; ++i) d[i] = static_cast<unsigned char>(i);
  EXPECT_EQ(aclrtMemcpy(d + 1, 63, d, 32, ACL_MEMCPY_DEVICE_TO_DEVICE), ACL_SUCCESS);
  for (int i = 0; i < 32; ++i) EXPECT_EQ(d[i + 1], i);
  const std::vector<unsigned char> before(d, d + 64);
  EXPECT_EQ(aclrtMemset(d, 16, 0, 17), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(std::vector<unsigned char>(d, d + 64), before);  // nothing set
  EXPECT_EQ(aclrtMemset(nullptr, 16, 0, 16), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(aclrtMemset(d, 64, 0xee, 64), ACL_SUCCESS);
  EXPECT_EQ(d[63], 0xee);
  EXPECT_TRUE(dst.Intact());
  EXPECT_TRUE(src.Intact());
}

// ---- devices --------------------------------------------------------------------------------

TEST(Device, OnlyDeviceZeroExists) {
  EXPECT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
  EXPECT_EQ(aclrtSetDevice(1), ACL_ERROR_RT_INVALID_DEVICEID);
  EXPECT_NE(RecentMessage().find("deviceId must be 0"), std::string::npos);
  EXPECT_EQ(aclrtResetDevice(3), ACL_ERROR_RT_INVALID_DEVICEID);
  int32_t id = -1;
  uint32_t count = 0;
  EXPECT_EQ(aclrtGetDevice(&id), ACL_SUCCESS);
  EXPECT_EQ(id, 0);
  EXPECT_EQ(aclrtGetDeviceCount(&count), ACL_SUCCESS);
  EXPECT_EQ(count, 1u);
  EXPECT_EQ(aclrtGetDevice(nullptr), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(aclrtResetDevice(0), ACL_SUCCESS);
}

// ---- streams --------------------------------------------------------------------------------

TEST(Stream, RunsInOrderAndSynchronizeWaits) {
  aclrtStream s = nullptr;
  ASSERT_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
  std::vector<int> order;  // written only by the stream's thread until Synchronize returns
  std::atomic<bool> gate{false};
  ASSERT_EQ(SubmitToStream("test", s, [&] { while (!gate.load()) std::this_thread::yield(); }), ACLNN_SUCCESS);
  for (int i = 0; i < 200; ++i)
    ASSERT_EQ(SubmitToStream("test", s, [&order, i] { order.push_back(i); }), ACLNN_SUCCESS);
  gate.store(true);
  ASSERT_EQ(aclrtSynchronizeStream(s), ACL_SUCCESS);
  ASSERT_EQ(order.size(), 200u);
  for (int i = 0; i < 200; ++i) EXPECT_EQ(order[i], i);
  EXPECT_EQ(aclrtSynchronizeDevice(), ACL_SUCCESS);
  EXPECT_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
}

TEST(Stream, NullStreamRunsOnTheCaller) {
  std::thread::id ran_on;
  ASSERT_EQ(SubmitToStream("test", nullptr, [&] { ran_on = std::this_thread::get_id(); }), ACLNN_SUCCESS);
  EXPECT_EQ(ran_on, std::this_thread::get_id());
  EXPECT_EQ(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);
}

TEST(Stream, DestroyFinishesQueuedWork) {
  aclrtStream s = nullptr;
  ASSERT_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
  std::atomic<int> done{0};
  for (int i = 0; i < 50; ++i)
    SubmitToStream("test", s, [&done] {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      done.fetch_add(1);
    });
  EXPECT_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
  EXPECT_EQ(done.load(), 50);
  // The handle is dead now: every call on it fails cleanly.
  EXPECT_EQ(aclrtDestroyStream(s), ACL_ERROR_INVALID_RESOURCE_HANDLE);
  EXPECT_EQ(aclrtSynchronizeStream(s), ACL_ERROR_INVALID_RESOURCE_HANDLE);
  EXPECT_NE(RecentMessage().find("not a live aclrtStream"), std::string::npos);
  EXPECT_EQ(SubmitToStream("test", s, [] {}), ACLNN_ERR_PARAM_INVALID);
  EXPECT_FALSE(CheckStream("test", s));
  EXPECT_EQ(aclrtCreateStream(nullptr), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(aclrtDestroyStream(nullptr), ACL_ERROR_INVALID_PARAM);
}

// ---- executors ------------------------------------------------------------------------------

TEST(Executor, ConsumedByItsRun) {
  std::vector<float> in{1, 2, 3, 4}, out(4, 0);
  aclOpExecutor* e = aclnn_test::NewAffineExecutor(4, 0, in.data(), out.data());
  ASSERT_EQ(aclnn_test::LaunchAffine(nullptr, 0, e, nullptr), ACLNN_SUCCESS);
  EXPECT_EQ(out, (std::vector<float>{3, 5, 7, 9}));
  out.assign(4, 0);
  EXPECT_EQ(aclnn_test::LaunchAffine(nullptr, 0, e, nullptr), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(RecentMessage().find("executor is not live"), std::string::npos);
  EXPECT_EQ(out, std::vector<float>(4, 0));
  EXPECT_EQ(aclDestroyAclOpExecutor(e), ACLNN_ERR_PARAM_INVALID);  // already consumed
  EXPECT_EQ(aclSetAclOpExecutorRepeatable(e), ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(aclSetInputTensorAddr(e, 0, nullptr, in.data()), ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(aclnn_test::LaunchAffine(nullptr, 0, nullptr, nullptr), ACLNN_ERR_PARAM_NULLPTR);
  EXPECT_EQ(aclDestroyAclOpExecutor(nullptr), ACLNN_SUCCESS);
  EXPECT_EQ(aclSetAclOpExecutorRepeatable(nullptr), ACLNN_ERR_PARAM_NULLPTR);
}

TEST(Executor, RepeatableRunsUntilDestroyed) {
  std::vector<float> in{1, 2}, out(2, 0);
  aclOpExecutor* e = aclnn_test::NewAffineExecutor(2, 256, in.data(), out.data());
  ASSERT_EQ(aclSetAclOpExecutorRepeatable(e), ACLNN_SUCCESS);
  GuardedBuffer ws(256);
  aclrtStream s = nullptr;
  ASSERT_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
  for (int i = 0; i < 100; ++i) {
    in[0] = static_cast<float>(i);
    ASSERT_EQ(aclnn_test::LaunchAffine(ws.data(), 256, e, i % 2 ? s : nullptr), ACLNN_SUCCESS);
    ASSERT_EQ(aclrtSynchronizeStream(s), ACL_SUCCESS);
    EXPECT_EQ(out[0], 2.0f * i + 1.0f);
  }
  EXPECT_TRUE(ws.Intact());
  EXPECT_EQ(aclDestroyAclOpExecutor(e), ACLNN_SUCCESS);
  EXPECT_EQ(aclnn_test::LaunchAffine(ws.data(), 256, e, nullptr), ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(aclDestroyAclOpExecutor(e), ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
}

TEST(Executor, BadWorkspaceOrStreamWritesNothingAndKeepsTheExecutor) {
  std::vector<float> in{1, 2, 3}, out(3, -7.0f);
  aclOpExecutor* e = aclnn_test::NewAffineExecutor(3, 128, in.data(), out.data());
  GuardedBuffer ws(128);
  EXPECT_EQ(aclnn_test::LaunchAffine(nullptr, 128, e, nullptr), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(RecentMessage().find("workspace is null but the executor needs 128 bytes"), std::string::npos);
  EXPECT_EQ(aclnn_test::LaunchAffine(ws.data(), 127, e, nullptr), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(RecentMessage().find("at least 128 bytes"), std::string::npos);
  EXPECT_NE(RecentMessage().find("got 127"), std::string::npos);
  int not_a_stream = 0;
  EXPECT_EQ(aclnn_test::LaunchAffine(ws.data(), 128, e, &not_a_stream), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(RecentMessage().find("stream is not a live aclrtStream"), std::string::npos);
  EXPECT_EQ(out, std::vector<float>(3, -7.0f));
  EXPECT_TRUE(ws.Intact());
  ASSERT_EQ(aclnn_test::LaunchAffine(ws.data(), 128, e, nullptr), ACLNN_SUCCESS);  // still live
  EXPECT_EQ(out, (std::vector<float>{3, 5, 7}));
}

TEST(Executor, SetTensorAddrRebindsAndIsChecked) {
  std::vector<float> a{1, 1}, b{10, 20}, out1(2, 0), out2(2, 0);
  aclOpExecutor* e = aclnn_test::NewAffineExecutor(2, 0, a.data(), out1.data());
  ASSERT_EQ(aclSetAclOpExecutorRepeatable(e), ACLNN_SUCCESS);
  aclTensor* t = Create({2}, {}, 0, {2}, ACL_FLOAT, a.data());
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(aclSetInputTensorAddr(e, 0, t, b.data()), ACLNN_SUCCESS);
  EXPECT_EQ(t->data, b.data());  // the tensor follows the executor's binding
  EXPECT_EQ(aclSetOutputTensorAddr(e, 0, nullptr, out2.data()), ACLNN_SUCCESS);
  ASSERT_EQ(aclnn_test::LaunchAffine(nullptr, 0, e, nullptr), ACLNN_SUCCESS);
  EXPECT_EQ(out2, (std::vector<float>{21, 41}));
  EXPECT_EQ(out1, (std::vector<float>{0, 0}));
  // Out-of-range index, dead tensor, null executor.
  EXPECT_EQ(aclSetInputTensorAddr(e, 1, nullptr, b.data()), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(RecentMessage().find("index must be < 1"), std::string::npos);
  EXPECT_EQ(aclSetOutputTensorAddr(e, std::numeric_limits<size_t>::max(), nullptr, b.data()), ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(aclSetInputTensorAddr(nullptr, 0, nullptr, b.data()), ACLNN_ERR_PARAM_NULLPTR);
  ASSERT_EQ(aclDestroyTensor(t), ACLNN_SUCCESS);
  EXPECT_EQ(aclSetInputTensorAddr(e, 0, t, a.data()), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(RecentMessage().find("tensor is not a live aclTensor"), std::string::npos);
  // Address rules are checked again at launch: a null output now fails and writes nothing.
  EXPECT_EQ(aclSetOutputTensorAddr(e, 0, nullptr, nullptr), ACLNN_SUCCESS);
  out2.assign(2, 0);
  EXPECT_EQ(aclnn_test::LaunchAffine(nullptr, 0, e, nullptr), ACLNN_ERR_PARAM_NULLPTR);
  EXPECT_EQ(out2, (std::vector<float>{0, 0}));
  EXPECT_EQ(aclDestroyAclOpExecutor(e), ACLNN_SUCCESS);
}

TEST(Executor, DestroyedWhileQueuedStillRuns) {
  aclrtStream s = nullptr;
  ASSERT_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
  std::atomic<bool> gate{false};
  SubmitToStream("test", s, [&] { while (!gate.load()) std::this_thread::yield(); });
  std::vector<float> in{4}, out{0};
  aclOpExecutor* e = aclnn_test::NewAffineExecutor(1, 0, in.data(), out.data());
  ASSERT_EQ(aclSetAclOpExecutorRepeatable(e), ACLNN_SUCCESS);
  ASSERT_EQ(aclnn_test::LaunchAffine(nullptr, 0, e, s), ACLNN_SUCCESS);
  ASSERT_EQ(aclDestroyAclOpExecutor(e), ACLNN_SUCCESS);  // the queued run keeps the plan alive
  gate.store(true);
  ASSERT_EQ(aclrtSynchronizeStream(s), ACL_SUCCESS);
  EXPECT_EQ(out[0], 9.0f);
  EXPECT_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
}

// ---- errors ---------------------------------------------------------------------------------

TEST(RecentError, IsThreadLocal) {
  aclrtSetDevice(5);
  const std::string mine = RecentMessage();
  ASSERT_NE(mine.find("deviceId must be 0"), std::string::npos);
  std::string other_before, other_after;
  std::thread th([&] {
    other_before = RecentMessage();  // a new thread has no error
    void* p = nullptr;
    aclrtMalloc(&p, 0, ACL_MEM_MALLOC_HUGE_FIRST);
    other_after = RecentMessage();
  });
  th.join();
  EXPECT_EQ(other_before, "");
  EXPECT_NE(other_after.find("size must be > 0"), std::string::npos);
  EXPECT_EQ(RecentMessage(), mine);  // untouched by the other thread
  int32_t id = 0;
  EXPECT_EQ(aclrtGetDevice(&id), ACL_SUCCESS);
  EXPECT_EQ(RecentMessage(), "");  // a successful call clears it
}

// ---- thread pool ----------------------------------------------------------------------------

TEST(ThreadPool, EveryTaskRunsOnceForAnyWorkerCount) {
  for (int threads : {1, 2, 3, 8}) {
    aclnn_test::ScopedThreads scoped(threads);
    for (int max_workers : {0, 1, 2, 5}) {
      for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{7}, int64_t{1000}}) {
        std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
        ThreadPool::Global().ParallelFor(n, max_workers, [&](int64_t t) { hits[t].fetch_add(1); });
        for (int64_t t = 0; t < n; ++t) ASSERT_EQ(hits[t].load(), 1) << threads << " " << max_workers << " " << t;
      }
    }
  }
}

TEST(ThreadPool, ConcurrentCallersAllFinish) {
  aclnn_test::ScopedThreads scoped(3);
  std::vector<std::thread> callers;
  std::atomic<int64_t> total{0};
  for (int c = 0; c < 4; ++c)
    callers.emplace_back([&] {
      for (int rep = 0; rep < 200; ++rep)
        ThreadPool::Global().ParallelFor(16, 0, [&](int64_t t) { total.fetch_add(t); });
    });
  for (auto& th : callers) th.join();
  EXPECT_EQ(total.load(), 4 * 200 * (15 * 16 / 2));
}

// ---- init / finalize ------------------------------------------------------------------------

TEST(Finalize, ReleasesLiveObjectsAndCanReinitialize) {
  ASSERT_EQ(aclInit(nullptr), ACL_SUCCESS);
  EXPECT_EQ(aclInit(nullptr), ACL_ERROR_REPEAT_INITIALIZE);
  EXPECT_NE(RecentMessage().find("already initialized"), std::string::npos);

  void* block = nullptr;
  ASSERT_EQ(aclrtMalloc(&block, 1024, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  aclTensor* t = Create({4}, {}, 0, {4}, ACL_FLOAT, block);
  ASSERT_NE(t, nullptr);
  std::vector<float> in{1, 2}, out(2, 0);
  aclOpExecutor* e = aclnn_test::NewAffineExecutor(2, 0, in.data(), out.data());
  aclrtStream s = nullptr;
  ASSERT_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
  std::atomic<int> done{0};
  for (int i = 0; i < 20; ++i)
    SubmitToStream("test", s, [&done] {
      std::this_thread::sleep_for(std::chrono::microseconds(500));
      done.fetch_add(1);
    });
  ThreadPool::Global().ParallelFor(8, 0, [](int64_t) {});  // the pool's threads are running

  ASSERT_EQ(aclFinalize(), ACL_SUCCESS);
  EXPECT_EQ(done.load(), 20);  // queued work ran before the stream went away
  // Every handle from before is dead and refused cleanly.
  EXPECT_EQ(aclDestroyTensor(t), ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(aclDestroyAclOpExecutor(e), ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(aclnn_test::LaunchAffine(nullptr, 0, e, nullptr), ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(aclrtDestroyStream(s), ACL_ERROR_INVALID_RESOURCE_HANDLE);
  EXPECT_EQ(aclrtFree(block), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(out, (std::vector<float>{0, 0}));
  EXPECT_EQ(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE);
  EXPECT_NE(RecentMessage().find("not initialized"), std::string::npos);

  // The library works again after a new aclInit (the pool restarts its threads on demand).
  ASSERT_EQ(aclInit(nullptr), ACL_SUCCESS);
  std::atomic<int> hits{0};
  ThreadPool::Global().ParallelFor(64, 0, [&](int64_t) { hits.fetch_add(1); });
  EXPECT_EQ(hits.load(), 64);
  ASSERT_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
  e = aclnn_test::NewAffineExecutor(2, 0, in.data(), out.data());
  ASSERT_EQ(aclnn_test::LaunchAffine(nullptr, 0, e, s), ACLNN_SUCCESS);
  ASSERT_EQ(aclrtSynchronizeStream(s), ACL_SUCCESS);
  EXPECT_EQ(out, (std::vector<float>{3, 5}));
  EXPECT_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
  EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
}
