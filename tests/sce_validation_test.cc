// Every validation rule of aclnnSoftmaxCrossEntropyWithLogitsGetWorkspaceSize, in the order of
// DESIGN §5 (first failure wins), with its status and the words its message must contain; and
// a failed call writes nothing (outputs and the out-parameters stay untouched).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runtime/error.h"
#include "sce_test_util.h"

using namespace sce_test;

namespace {

struct Call {
  aclnnStatus status;
  std::string msg;
};

Call Get(const aclTensor* f, const aclTensor* l, aclTensor* loss, aclTensor* bp, bool null_ws = false,
         bool null_ex = false) {
  uint64_t ws = 12345;
  aclOpExecutor* ex = reinterpret_cast<aclOpExecutor*>(0x1);
  const aclnnStatus st = aclnnSoftmaxCrossEntropyWithLogitsGetWorkspaceSize(
      f, l, loss, bp, null_ws ? nullptr : &ws, null_ex ? nullptr : &ex);
  if (st != ACLNN_SUCCESS) {
    EXPECT_EQ(ws, 12345u) << "workspaceSize written on failure";
    EXPECT_EQ(ex, reinterpret_cast<aclOpExecutor*>(0x1)) << "executor written on failure";
  } else {
    aclDestroyAclOpExecutor(ex);
  }
  return {st, aclGetRecentErrMsg()};
}

void ExpectFail(const Call& c, aclnnStatus status, std::vector<std::string> words) {
  EXPECT_EQ(c.status, status) << c.msg;
  EXPECT_NE(c.msg.find("aclnnSoftmaxCrossEntropyWithLogitsGetWorkspaceSize"), std::string::npos) << c.msg;
  for (const std::string& w : words) EXPECT_NE(c.msg.find(w), std::string::npos) << "'" << w << "' not in: " << c.msg;
}

// Four valid ND tensors [4, 3]; tests break one thing at a time.
struct Fixture {
  HostTensor f{ACL_FLOAT, {4, 3}}, l{ACL_FLOAT, {4, 3}}, loss{ACL_FLOAT, {4}}, bp{ACL_FLOAT, {4, 3}};
};

}  // namespace

TEST(SceValidation, ValidCallSucceeds) {
  Fixture x;
  EXPECT_EQ(Get(x.f.handle, x.l.handle, x.loss.handle, x.bp.handle).status, ACLNN_SUCCESS);
}

TEST(SceValidation, Step1NullArguments) {
  Fixture x;
  ExpectFail(Get(nullptr, x.l.handle, x.loss.handle, x.bp.handle), ACLNN_ERR_PARAM_NULLPTR, {"features"});
  ExpectFail(Get(x.f.handle, nullptr, x.loss.handle, x.bp.handle), ACLNN_ERR_PARAM_NULLPTR, {"labels"});
  ExpectFail(Get(x.f.handle, x.l.handle, nullptr, x.bp.handle), ACLNN_ERR_PARAM_NULLPTR, {"loss"});
  ExpectFail(Get(x.f.handle, x.l.handle, x.loss.handle, nullptr), ACLNN_ERR_PARAM_NULLPTR, {"backprop"});
  ExpectFail(Get(x.f.handle, x.l.handle, x.loss.handle, x.bp.handle, true), ACLNN_ERR_PARAM_NULLPTR, {"workspaceSize"});
  ExpectFail(Get(x.f.handle, x.l.handle, x.loss.handle, x.bp.handle, false, true), ACLNN_ERR_PARAM_NULLPTR, {"executor"});
  // Null wins over every later rule.
  HostTensor bad(ACL_INT32, {2, 2});
  ExpectFail(Get(bad.handle, nullptr, x.loss.handle, x.bp.handle), ACLNN_ERR_PARAM_NULLPTR, {"labels"});
}

TEST(SceValidation, Step2UnsupportedDtype) {
  Fixture x;
  for (aclDataType dt : {ACL_INT32, ACL_DOUBLE, ACL_INT8}) {
    HostTensor bad(dt, {4, 3});
    ExpectFail(Get(bad.handle, x.l.handle, x.loss.handle, x.bp.handle), ACLNN_ERR_PARAM_INVALID,
               {"features dtype", "FLOAT, FLOAT16 or BF16"});
  }
  HostTensor badl(ACL_INT64, {4, 3});
  ExpectFail(Get(x.f.handle, badl.handle, x.loss.handle, x.bp.handle), ACLNN_ERR_PARAM_INVALID, {"labels dtype", "INT64"});
  // Step 2 before step 5: a bad dtype with a bad shape reports the dtype.
  HostTensor badl2(ACL_INT32, {9, 9});
  ExpectFail(Get(x.f.handle, badl2.handle, x.loss.handle, x.bp.handle), ACLNN_ERR_PARAM_INVALID, {"dtype"});
}

TEST(SceValidation, Step3DtypesDiffer) {
  Fixture x;
  HostTensor l16(ACL_FLOAT16, {4, 3}), loss16(ACL_BF16, {4}), bp16(ACL_FLOAT16, {4, 3});
  ExpectFail(Get(x.f.handle, l16.handle, x.loss.handle, x.bp.handle), ACLNN_ERR_PARAM_INVALID,
             {"labels dtype", "features dtype ACL_FLOAT", "ACL_FLOAT16"});
  ExpectFail(Get(x.f.handle, x.l.handle, loss16.handle, x.bp.handle), ACLNN_ERR_PARAM_INVALID, {"loss dtype", "BF16"});
  ExpectFail(Get(x.f.handle, x.l.handle, x.loss.handle, bp16.handle), ACLNN_ERR_PARAM_INVALID, {"backprop dtype"});
}

TEST(SceValidation, Step4Formats) {
  Fixture x;
  HostTensor nhwc(ACL_FLOAT, {4, 3}, Layout::kDense, ACL_FORMAT_NHWC);
  ExpectFail(Get(nhwc.handle, x.l.handle, x.loss.handle, x.bp.handle), ACLNN_ERR_PARAM_INVALID,
             {"features format", "ND or NCHW", "NHWC"});
  ExpectFail(Get(x.f.handle, nhwc.handle, x.loss.handle, x.bp.handle), ACLNN_ERR_PARAM_INVALID, {"labels format"});
  HostTensor nchw(ACL_FLOAT, {4, 3}, Layout::kDense, ACL_FORMAT_NCHW);
  ExpectFail(Get(x.f.handle, nchw.handle, x.loss.handle, x.bp.handle), ACLNN_ERR_PARAM_INVALID,
             {"labels format", "features format ACL_FORMAT_ND", "ACL_FORMAT_NCHW"});
  // Loss may say any format.
  HostTensor lossn(ACL_FLOAT, {4}, Layout::kDense, ACL_FORMAT_NHWC);
  EXPECT_EQ(Get(x.f.handle, x.l.handle, lossn.handle, x.bp.handle).status, ACLNN_SUCCESS);
}

TEST(SceValidation, Step5ShapesNotBroadcastable) {
  Fixture x;
  HostTensor l(ACL_FLOAT, {4, 2}), l3(ACL_FLOAT, {4, 3, 1}), l2(ACL_FLOAT, {2, 3});
  for (HostTensor* bad : {&l, &l3, &l2})
    ExpectFail(Get(x.f.handle, bad->handle, x.loss.handle, x.bp.handle), ACLNN_ERR_PARAM_INVALID,
               {"broadcastable", "features [4, 3]", "labels " + aclnn_portable::ShapeToString(bad->dims)});
  // NCHW keeps equal shapes: [2,3,4,5] with [1,3,4,5] is rejected.
  HostTensor f4(ACL_FLOAT, {2, 3, 4, 5}, Layout::kDense, ACL_FORMAT_NCHW),
      l4(ACL_FLOAT, {1, 3, 4, 5}, Layout::kDense, ACL_FORMAT_NCHW), loss4(ACL_FLOAT, {2, 4, 5}),
      bp4(ACL_FLOAT, {2, 3, 4, 5}, Layout::kDense, ACL_FORMAT_NCHW);
  ExpectFail(Get(f4.handle, l4.handle, loss4.handle, bp4.handle), ACLNN_ERR_PARAM_INVALID,
             {"same shape", "NCHW", "[2, 3, 4, 5]", "[1, 3, 4, 5]"});
  // Step 5 before step 7: a bad loss does not hide it.
  HostTensor badloss(ACL_FLOAT, {9});
  ExpectFail(Get(x.f.handle, l.handle, badloss.handle, x.bp.handle), ACLNN_ERR_PARAM_INVALID, {"broadcastable"});
}

TEST(SceValidation, Step6Rank) {
  HostTensor f(ACL_FLOAT, {2, 3, 4}), l(ACL_FLOAT, {2, 3, 4}), loss(ACL_FLOAT, {2}), bp(ACL_FLOAT, {2, 3, 4});
  ExpectFail(Get(f.handle, l.handle, loss.handle, bp.handle), ACLNN_ERR_PARAM_INVALID, {"rank 2", "got rank 3", "[2, 3, 4]"});
  HostTensor f1(ACL_FLOAT, {6}), l1(ACL_FLOAT, {6});
  ExpectFail(Get(f1.handle, l1.handle, loss.handle, bp.handle), ACLNN_ERR_PARAM_INVALID, {"rank 2", "got rank 1"});
  HostTensor fn(ACL_FLOAT, {4, 3}, Layout::kDense, ACL_FORMAT_NCHW), ln(ACL_FLOAT, {4, 3}, Layout::kDense, ACL_FORMAT_NCHW);
  ExpectFail(Get(fn.handle, ln.handle, loss.handle, bp.handle), ACLNN_ERR_PARAM_INVALID, {"NCHW", "rank 4", "got rank 2"});
}

TEST(SceValidation, Step7LossShape) {
  Fixture x;
  HostTensor l1(ACL_FLOAT, {3}), l2(ACL_FLOAT, {4, 1}), l0(ACL_FLOAT, {});
  for (HostTensor* bad : {&l1, &l2, &l0})
    ExpectFail(Get(x.f.handle, x.l.handle, bad->handle, x.bp.handle), ACLNN_ERR_PARAM_INVALID,
               {"loss shape must be [4]", "got " + aclnn_portable::ShapeToString(bad->dims)});
  HostTensor f4(ACL_FLOAT, {2, 3, 4, 5}, Layout::kDense, ACL_FORMAT_NCHW),
      l4(ACL_FLOAT, {2, 3, 4, 5}, Layout::kDense, ACL_FORMAT_NCHW), loss4(ACL_FLOAT, {2, 5, 4}),
      bp4(ACL_FLOAT, {2, 3, 4, 5}, Layout::kDense, ACL_FORMAT_NCHW);
  ExpectFail(Get(f4.handle, l4.handle, loss4.handle, bp4.handle), ACLNN_ERR_PARAM_INVALID,
             {"loss shape must be [2, 4, 5]", "[N, H, W]", "got [2, 5, 4]"});
  // Broadcast: loss follows the broadcast N.
  HostTensor fb(ACL_FLOAT, {1, 3}), lossb(ACL_FLOAT, {1});
  ExpectFail(Get(fb.handle, x.l.handle, lossb.handle, x.bp.handle), ACLNN_ERR_PARAM_INVALID,
             {"loss shape must be [4]", "broadcast shape [4, 3]"});
}

TEST(SceValidation, Step8BackpropShape) {
  Fixture x;
  HostTensor b1(ACL_FLOAT, {3, 4}), b2(ACL_FLOAT, {4, 3, 1});
  ExpectFail(Get(x.f.handle, x.l.handle, x.loss.handle, b1.handle), ACLNN_ERR_PARAM_INVALID,
             {"backprop shape", "[4, 3]", "got [3, 4]"});
  ExpectFail(Get(x.f.handle, x.l.handle, x.loss.handle, b2.handle), ACLNN_ERR_PARAM_INVALID, {"backprop shape"});
  // Broadcast: backprop must be the broadcast shape, not the features shape.
  HostTensor fb(ACL_FLOAT, {1, 3}), bpb(ACL_FLOAT, {1, 3});
  ExpectFail(Get(fb.handle, x.l.handle, x.loss.handle, bpb.handle), ACLNN_ERR_PARAM_INVALID,
             {"broadcast shape [4, 3]", "features [1, 3]", "labels [4, 3]", "got [1, 3]"});
  EXPECT_EQ(Get(fb.handle, x.l.handle, x.loss.handle, x.bp.handle).status, ACLNN_SUCCESS);
}

TEST(SceValidation, NullDataAfterShapeRules) {
  Fixture x;
  const int64_t d[2] = {4, 3}, s[1] = {12};
  aclTensor* nodata = aclCreateTensor(d, 2, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, s, 1, nullptr);
  ExpectFail(Get(nodata, x.l.handle, x.loss.handle, x.bp.handle), ACLNN_ERR_PARAM_NULLPTR, {"features data is null", "12 elements"});
  ExpectFail(Get(x.f.handle, x.l.handle, x.loss.handle, nodata), ACLNN_ERR_PARAM_NULLPTR, {"backprop data is null"});
  // Shape rules come first.
  HostTensor b1(ACL_FLOAT, {3, 4});
  ExpectFail(Get(nodata, x.l.handle, x.loss.handle, b1.handle), ACLNN_ERR_PARAM_INVALID, {"backprop shape"});
  aclDestroyTensor(nodata);
  // Empty tensors may have null data.
  const int64_t e[2] = {0, 3}, e1[1] = {0}, z[1] = {0};
  aclTensor* ef = aclCreateTensor(e, 2, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, z, 1, nullptr);
  aclTensor* el = aclCreateTensor(e1, 1, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, z, 1, nullptr);
  EXPECT_EQ(Get(ef, ef, el, ef).status, ACLNN_SUCCESS);  // empty views touch no memory: no overlap
  aclTensor* el2 = aclCreateTensor(e, 2, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, z, 1, nullptr);
  aclTensor* eb = aclCreateTensor(e, 2, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, z, 1, nullptr);
  EXPECT_EQ(Get(ef, el2, el, eb).status, ACLNN_SUCCESS) << aclGetRecentErrMsg();
  for (aclTensor* t : {ef, el, el2, eb}) aclDestroyTensor(t);
}

TEST(SceValidation, OverlapsAndInPlace) {
  // One storage holding several views.
  std::vector<float> st(100, 0.f);
  const int64_t d2[2] = {4, 3}, d1[1] = {4}, sd[1] = {100};
  auto view = [&](const int64_t* dims, uint64_t n, int64_t off, const int64_t* strides = nullptr) {
    return aclCreateTensor(dims, n, ACL_FLOAT, strides, off, ACL_FORMAT_ND, sd, 1, st.data());
  };
  aclTensor* f = view(d2, 2, 0);
  aclTensor* l = view(d2, 2, 12);
  aclTensor* loss = view(d1, 1, 24);
  aclTensor* bp = view(d2, 2, 28);
  EXPECT_EQ(Get(f, l, loss, bp).status, ACLNN_SUCCESS) << aclGetRecentErrMsg();
  EXPECT_EQ(Get(f, l, loss, f).status, ACLNN_SUCCESS) << "in place";
  aclTensor* f_again = view(d2, 2, 0);  // another handle, same view: still in place
  EXPECT_EQ(Get(f, l, loss, f_again).status, ACLNN_SUCCESS) << aclGetRecentErrMsg();
  ExpectFail(Get(f, l, loss, l), ACLNN_ERR_PARAM_INVALID, {"backprop overlaps labels"});
  aclTensor* bp_shift = view(d2, 2, 1);  // overlaps features but is not the same view
  ExpectFail(Get(f, l, loss, bp_shift), ACLNN_ERR_PARAM_INVALID, {"backprop overlaps features"});
  aclTensor* loss_in_l = view(d1, 1, 14);
  ExpectFail(Get(f, l, loss_in_l, bp), ACLNN_ERR_PARAM_INVALID, {"loss overlaps labels"});
  aclTensor* loss_in_bp = view(d1, 1, 30);
  ExpectFail(Get(f, l, loss_in_bp, bp), ACLNN_ERR_PARAM_INVALID, {"overlaps"});
  // Inputs may overlap each other (labels = features is fine).
  EXPECT_EQ(Get(f, f, loss, bp).status, ACLNN_SUCCESS);
  // An output overlapping itself has no single value per element.
  const int64_t s0[2] = {0, 1};
  aclTensor* bp_self = view(d2, 2, 40, s0);
  ExpectFail(Get(f, l, loss, bp_self), ACLNN_ERR_PARAM_INVALID, {"backprop view overlaps itself"});
  for (aclTensor* t : {f, l, loss, bp, f_again, bp_shift, loss_in_l, loss_in_bp, bp_self}) aclDestroyTensor(t);
}

TEST(SceValidation, DestroyedTensorIsRejected) {
  Fixture x;
  HostTensor* gone = new HostTensor(ACL_FLOAT, {4, 3});
  const aclTensor* h = gone->handle;
  delete gone;
  ExpectFail(Get(h, x.l.handle, x.loss.handle, x.bp.handle), ACLNN_ERR_PARAM_INVALID, {"features is not a live aclTensor"});
}

TEST(SceValidation, ExecuteRejectsBadExecutor) {
  EXPECT_EQ(aclnnSoftmaxCrossEntropyWithLogits(nullptr, 0, nullptr, nullptr), ACLNN_ERR_PARAM_NULLPTR);
  EXPECT_NE(std::string(aclGetRecentErrMsg()).find("aclnnSoftmaxCrossEntropyWithLogits"), std::string::npos);
  Fixture x;
  uint64_t ws = 0;
  aclOpExecutor* ex = nullptr;
  ASSERT_EQ(aclnnSoftmaxCrossEntropyWithLogitsGetWorkspaceSize(x.f.handle, x.l.handle, x.loss.handle, x.bp.handle, &ws, &ex), ACLNN_SUCCESS);
  EXPECT_EQ(aclnnSoftmaxCrossEntropyWithLogits(nullptr, 0, ex, nullptr), ACLNN_SUCCESS);
  // Consumed: a second run of a non-repeatable executor is rejected.
  EXPECT_EQ(aclnnSoftmaxCrossEntropyWithLogits(nullptr, 0, ex, nullptr), ACLNN_ERR_PARAM_INVALID);
}

TEST(SceValidation, NullDataBeforeOverlapRules) {
  // A null-data tensor and a self-overlapping output: null data (161001) is reported first.
  HostTensor l(ACL_FLOAT, {4, 3}), loss(ACL_FLOAT, {4});
  std::vector<float> st(64);
  const int64_t d[2] = {4, 3}, s0[2] = {0, 1}, sd[1] = {64};
  aclTensor* nodata = aclCreateTensor(d, 2, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, sd, 1, nullptr);
  aclTensor* self = aclCreateTensor(d, 2, ACL_FLOAT, s0, 0, ACL_FORMAT_ND, sd, 1, st.data());
  ExpectFail(Get(nodata, l.handle, loss.handle, self), ACLNN_ERR_PARAM_NULLPTR, {"features data is null"});
  aclDestroyTensor(nodata);
  aclDestroyTensor(self);
}
