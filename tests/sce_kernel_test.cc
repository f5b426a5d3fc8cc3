// SoftmaxCrossEntropyWithLogits results through the public API against an fp64 reference:
// TensorFlow's known values, the DESIGN §8 shape matrix in every dtype and both layouts,
// special values, strided views with untouched gaps, in place, broadcasting, empty tensors,
// executors and streams, and identical bits for every thread count and ISA.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "numeric/half.h"
#include "ops/softmax_cross_entropy_with_logits/sce_kernels.h"
#include "platform/dispatch.h"
#include "sce_test_util.h"

using namespace sce_test;

namespace {

constexpr aclDataType kDtypes[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16};

const char* Name(aclDataType dt) { return dt == ACL_FLOAT ? "fp32" : dt == ACL_FLOAT16 ? "fp16" : "bf16"; }

aclnnStatus RunSce(HostTensor& f, HostTensor& l, HostTensor& loss, HostTensor& bp,
                   aclrtStream stream = nullptr, uint64_t* ws_out = nullptr) {
  uint64_t ws = 0;
  aclOpExecutor* ex = nullptr;
  aclnnStatus st = aclnnSoftmaxCrossEntropyWithLogitsGetWorkspaceSize(f.handle, l.handle, loss.handle,
                                                                     bp.handle, &ws, &ex);
  if (st != ACLNN_SUCCESS) return st;
  if (ws_out) *ws_out = ws;
  std::vector<uint8_t> w(ws + 1);
  st = aclnnSoftmaxCrossEntropyWithLogits(ws ? w.data() : nullptr, ws, ex, stream);
  if (st == ACLNN_SUCCESS && stream) aclrtSynchronizeStream(stream);
  return st;
}

void Fill(HostTensor& t, aclnn_test::Rng& rng, double lo, double hi) {
  for (int64_t i = 0; i < t.Numel(); ++i) t.Set(i, rng.Uniform(lo, hi));
}

// Expects loss/backprop to match the reference computed from the inputs' values x, y.
void ExpectMatches(const HostTensor& loss, const HostTensor& bp, const std::vector<int64_t>& fdims,
                   const std::vector<double>& x, const std::vector<int64_t>& ldims,
                   const std::vector<double>& y, bool nchw, const std::string& what) {
  const Reference ref = ComputeReference(fdims, x, ldims, y, nchw);
  const aclDataType dt = loss.dt;
  int bad = 0;
  for (size_t i = 0; i < ref.loss.size() && bad < 5; ++i) {
    const double got = loss.Get(i);
    if (!Close(dt, got, ref.loss[i], std::max(std::fabs(ref.loss[i]), ref.loss_scale[i]), 1e-5)) {
      ++bad;
      ADD_FAILURE() << what << " loss[" << i << "] = " << got << ", reference " << ref.loss[i];
    }
  }
  for (size_t i = 0; i < ref.bp.size() && bad < 5; ++i) {
    const double got = bp.Get(i);
    if (!Close(dt, got, ref.bp[i], ref.scale[i], 16 * 5.96e-8)) {
      ++bad;
      ADD_FAILURE() << what << " backprop[" << i << "] = " << got << ", reference " << ref.bp[i]
                    << " (scale " << ref.scale[i] << ")";
    }
  }
}

struct Case {
  aclDataType dt;
  std::vector<int64_t> fdims, ldims;
  bool nchw = false;
  Layout fl = Layout::kDense, ll = Layout::kDense, lossl = Layout::kDense, bpl = Layout::kDense;
  double lo = -5, hi = 5;
  uint64_t seed = 1;
};

std::string Describe(const Case& c) {
  std::string s = std::string(Name(c.dt)) + (c.nchw ? " NCHW [" : " ND [");
  for (int64_t d : c.fdims) s += std::to_string(d) + ",";
  s += "] labels [";
  for (int64_t d : c.ldims) s += std::to_string(d) + ",";
  s += "] layouts " + std::to_string(int(c.fl)) + std::to_string(int(c.ll)) + std::to_string(int(c.lossl)) +
       std::to_string(int(c.bpl));
  return s;
}

std::vector<int64_t> BroadcastOf(const Case& c) {
  if (c.nchw) return c.fdims;
  return {std::max(c.fdims[0], c.ldims[0]), std::max(c.fdims[1], c.ldims[1])};
}

void RunCase(const Case& c) {
  const aclFormat fmt = c.nchw ? ACL_FORMAT_NCHW : ACL_FORMAT_ND;
  const std::vector<int64_t> b = BroadcastOf(c);
  const std::vector<int64_t> lossdims = c.nchw ? std::vector<int64_t>{b[0], b[2], b[3]} : std::vector<int64_t>{b[0]};
  HostTensor f(c.dt, c.fdims, c.fl, fmt), l(c.dt, c.ldims, c.ll, fmt);
  HostTensor loss(c.dt, lossdims, c.lossl, ACL_FORMAT_ND), bp(c.dt, b, c.bpl, fmt);
  aclnn_test::Rng rng(c.seed);
  Fill(f, rng, c.lo, c.hi);
  Fill(l, rng, 0, 1);
  const std::vector<double> x = f.Values(), y = l.Values();
  ASSERT_EQ(RunSce(f, l, loss, bp), ACLNN_SUCCESS) << Describe(c) << ": " << aclGetRecentErrMsg();
  ExpectMatches(loss, bp, c.fdims, x, c.ldims, y, c.nchw, Describe(c));
  EXPECT_TRUE(f.GapsUntouched() && l.GapsUntouched()) << Describe(c);
  EXPECT_TRUE(loss.GapsUntouched()) << Describe(c) << " loss gaps written";
  EXPECT_TRUE(bp.GapsUntouched()) << Describe(c) << " backprop gaps written";
  EXPECT_EQ(f.Values(), x) << Describe(c) << " features changed";
}

// Element i of a raw buffer of dtype dt: v, rounded to nearest even for the 16-bit types.
void PutAs(std::vector<uint8_t>& buf, int64_t i, float v, aclnn_portable::SceDtype dt) {
  using aclnn_portable::SceDtype;
  if (dt == SceDtype::kFloat) {
    std::memcpy(&buf[i * 4], &v, 4);
  } else {
    const uint16_t b = dt == SceDtype::kHalf ? aclnn_portable::FloatToHalf(v) : aclnn_portable::FloatToBf16(v);
    std::memcpy(&buf[i * 2], &b, 2);
  }
}

// Inputs of a direct kernel run on a dense [A, C] ND problem: features U(xlo, xhi), labels
// U(0, yhi), feature i then passed through tweak(i, &value). Returns the problem.
template <typename Tweak>
aclnn_portable::SceProblem DirectInputs(int64_t A, int64_t C, aclnn_portable::SceDtype dt, uint64_t seed,
                                        double xlo, double xhi, double yhi, Tweak tweak,
                                        std::vector<uint8_t>* x, std::vector<uint8_t>* y) {
  const size_t es = dt == aclnn_portable::SceDtype::kFloat ? 4 : 2;
  x->assign(A * C * es, 0);
  y->assign(A * C * es, 0);
  aclnn_test::Rng rng(seed);
  for (int64_t i = 0; i < A * C; ++i) {
    float xv = static_cast<float>(rng.Uniform(xlo, xhi)), yv = static_cast<float>(rng.Uniform(0, yhi));
    tweak(i, &xv);
    PutAs(*x, i, xv, dt);
    PutAs(*y, i, yv, dt);
  }
  aclnn_portable::SceProblem p;
  p.dtypeBytes = static_cast<int32_t>(es);
  p.N = p.featuresN = p.labelsN = A;
  p.C = p.featuresC = p.labelsC = C;
  return p;
}

// The planner's problem for a dense NCHW [N, C, 1, HW] call.
aclnn_portable::SceProblem NchwProblem(aclnn_portable::SceDtype dt, int64_t N, int64_t C, int64_t HW) {
  aclnn_portable::SceProblem p;
  p.layout = aclnn_portable::SceLayout::kNCHW;
  p.dtypeBytes = dt == aclnn_portable::SceDtype::kFloat ? 4 : 2;
  p.N = p.featuresN = p.labelsN = N;
  p.C = p.featuresC = p.labelsC = C;
  p.H = 1;
  p.W = HW;
  return p;
}

// The address `shift` bytes past the first 64-byte line boundary in buf (buf holds 63 + shift
// bytes of slack in front of what the caller places there).
uint8_t* PastLine(std::vector<uint8_t>& buf, size_t shift = 0) {
  return buf.data() + (64 - reinterpret_cast<uintptr_t>(buf.data()) % 64) % 64 + shift;
}

// Kernel arguments for a direct run over dense buffers: x, y and backprop rows `rowStride`
// elements apart (NCHW: unused), loss dense.
aclnn_portable::SceKernelArgs DirectArgs(const void* x, const void* y, void* bp, void* loss,
                                         aclnn_portable::SceDtype dt, const aclnn_portable::SceTiling& t,
                                         int64_t rowStride = 0) {
  aclnn_portable::SceKernelArgs k;
  k.x = x;
  k.y = y;
  k.bp = bp;
  k.loss = loss;
  k.xRowStride = k.yRowStride = k.bpRowStride = rowStride;
  k.dtype = dt;
  k.tiling = t;
  return k;
}

// Runs SceRunBlock over the planner's per-core blocks of A rows (or positions), one after another.
void RunBlocks(const aclnn_portable::SceKernelArgs& k, int64_t A) {
  using namespace aclnn_portable;
  const SceTiling& t = k.tiling;
  for (int64_t b = 0; b < t.realCoreNum; ++b)
    ACLNN_ISA_SELECT(SceRunBlock)(k, b * t.blockFactor, std::min(A, (b + 1) * t.blockFactor));
}

}  // namespace

TEST(SceKnownValues, TensorFlowXent) {
  // TensorFlow xent_op_test testXent known values.
  for (aclDataType dt : kDtypes) {
    HostTensor f(dt, {2, 4}), l(dt, {2, 4}), loss(dt, {2}), bp(dt, {2, 4});
    const double xs[] = {1, 1, 1, 1, 1, 2, 3, 4}, ys[] = {0, 0, 0, 1, 0, .5, .5, 0};
    for (int i = 0; i < 8; ++i) { f.Set(i, xs[i]); l.Set(i, ys[i]); }
    ASSERT_EQ(RunSce(f, l, loss, bp), ACLNN_SUCCESS) << aclGetRecentErrMsg();
    const double tol = dt == ACL_FLOAT ? 1e-6 : dt == ACL_FLOAT16 ? 2e-3 : 1.6e-2;
    EXPECT_NEAR(loss.Get(0), 1.3862944, tol * 1.4) << Name(dt);
    EXPECT_NEAR(loss.Get(1), 1.9401897, tol * 2) << Name(dt);
    const double eb[] = {.25, .25, .25, -.75, .0320586, -.4128557, -.2631172, .6439143};
    for (int i = 0; i < 8; ++i) EXPECT_NEAR(bp.Get(i), eb[i], tol) << Name(dt) << " " << i;
    ExpectMatches(loss, bp, {2, 4}, f.Values(), {2, 4}, l.Values(), false, Name(dt));
  }
}

TEST(SceKnownValues, SingleClass) {
  for (aclDataType dt : kDtypes) {
    HostTensor f(dt, {4, 1}), l(dt, {4, 1}), loss(dt, {4}), bp(dt, {4, 1});
    const double xs[] = {1, -1, 0, 1}, ys[] = {-1, 0, 1, 1};
    for (int i = 0; i < 4; ++i) { f.Set(i, xs[i]); l.Set(i, ys[i]); }
    ASSERT_EQ(RunSce(f, l, loss, bp), ACLNN_SUCCESS);
    const double eb[] = {2, 1, 0, 0};
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(loss.Get(i), 0.0) << Name(dt);
      EXPECT_EQ(bp.Get(i), eb[i]) << Name(dt);
    }
  }
}

TEST(SceKnownValues, TensorFlowBroadcasts) {
  for (aclDataType dt : kDtypes) {
    const double tol = dt == ACL_FLOAT ? 2e-6 : dt == ACL_FLOAT16 ? 4e-3 : 3e-2;
    {  // LabelsBroadcast: labels [[0,0,0,1]] with logits [[1,1,1,1],[1,2,3,4]]
      HostTensor f(dt, {2, 4}), l(dt, {1, 4}), loss(dt, {2}), bp(dt, {2, 4});
      const double xs[] = {1, 1, 1, 1, 1, 2, 3, 4}, ys[] = {0, 0, 0, 1};
      for (int i = 0; i < 8; ++i) f.Set(i, xs[i]);
      for (int i = 0; i < 4; ++i) l.Set(i, ys[i]);
      ASSERT_EQ(RunSce(f, l, loss, bp), ACLNN_SUCCESS) << aclGetRecentErrMsg();
      EXPECT_NEAR(loss.Get(0), 1.3862944, tol) << Name(dt);
      EXPECT_NEAR(loss.Get(1), 0.4401897, tol) << Name(dt);
    }
    {  // FeaturesBroadcast: features [[1,2,3,4]] with labels [[0,0,0,1],[0,.5,.5,0]]
      HostTensor f(dt, {1, 4}), l(dt, {2, 4}), loss(dt, {2}), bp(dt, {2, 4});
      const double xs[] = {1, 2, 3, 4}, ys[] = {0, 0, 0, 1, 0, .5, .5, 0};
      for (int i = 0; i < 4; ++i) f.Set(i, xs[i]);
      for (int i = 0; i < 8; ++i) l.Set(i, ys[i]);
      ASSERT_EQ(RunSce(f, l, loss, bp), ACLNN_SUCCESS) << aclGetRecentErrMsg();
      EXPECT_NEAR(loss.Get(0), 0.4401897, tol) << Name(dt);
      EXPECT_NEAR(loss.Get(1), 1.9401897, tol * 2) << Name(dt);
    }
  }
}

TEST(SceShapes, NdMatrix) {
  // 17..63 (fp32) and 17..95 (16-bit): the packed path with C read at run time; kRows above, 16
  // rows at a time up to 80 (fp32; AVX2: 144) / 192 (16-bit) classes (FullLoadRowBlocks), one at a
  // time past.
  const int64_t cs[] = {1, 2, 3, 4, 5, 7, 8, 15, 16, 17, 24, 25, 31, 48, 49, 63, 64, 65, 80, 81, 95, 96, 97,
                        112, 127, 128, 129, 144, 145, 160, 192, 193, 1000, 1001, 32000, 131072, 1 << 20};
  uint64_t seed = 10;
  for (aclDataType dt : kDtypes)
    for (int64_t C : cs) {
      std::vector<int64_t> as = {1, 3, 17, 100, 1000};
      if (C >= 1000) as = {1, 5};
      if (C >= 32000) as = {2};
      if (C >= 131072) as = {1};
      for (int64_t A : as)
        for (int range = 0; range < 2; ++range) {
          if (C >= 32000 && range == 1 && dt != ACL_FLOAT) continue;
          // 2^20: fp32 with U(90, 100) and bf16 (fp16 shares the 16-bit paths), to stay fast.
          if (C == (1 << 20) && (dt == ACL_FLOAT16 || (dt == ACL_FLOAT && range == 0))) continue;
          Case c{dt, {A, C}, {A, C}};
          if (range == 1) { c.lo = 90; c.hi = 100; }  // a naive exp overflows
          c.seed = ++seed;
          RunCase(c);
        }
    }
}

TEST(SceShapes, NchwMatrix) {
  uint64_t seed = 100;
  for (aclDataType dt : kDtypes)
    for (int64_t C : {1, 2, 3, 5, 8, 17, 31, 300})
      for (auto hw : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {2, 3}, {3, 5}, {16, 16}, {4, 33}})
        for (int64_t N : {1, 2, 5}) {
          if (C == 300 && hw.first == 16 && N == 2) continue;
          // N = 5 of the 2x3 map: lane groups that split an image (see SceNchw.GroupsAcrossImages...).
          if (N == 5 && hw.first * hw.second != 6) continue;
          Case c{dt, {N, C, hw.first, hw.second}, {N, C, hw.first, hw.second}, true};
          c.lo = (seed % 2) ? 90 : -5;
          c.hi = c.lo + 10;
          c.seed = ++seed;
          RunCase(c);
        }
}

TEST(SceViews, StridedAndTransposed) {
  uint64_t seed = 300;
  const Layout ls[] = {Layout::kDense, Layout::kPadded, Layout::kTransposed};
  for (aclDataType dt : kDtypes)
    for (const std::vector<int64_t>& dims : std::vector<std::vector<int64_t>>{{37, 5}, {19, 40}, {3, 5000}})
      for (Layout fl : ls)
        for (Layout bl : ls) {
          Case c{dt, dims, dims};
          c.fl = fl;
          c.ll = fl == Layout::kDense ? Layout::kPadded : Layout::kDense;
          c.bpl = bl;
          c.lossl = bl == Layout::kDense ? Layout::kDense : Layout::kPadded;
          c.seed = ++seed;
          RunCase(c);
        }
  for (aclDataType dt : kDtypes)
    for (Layout fl : ls) {
      Case c{dt, {2, 7, 5, 6}, {2, 7, 5, 6}, true};
      c.fl = fl;
      c.ll = Layout::kPadded;
      c.bpl = fl;
      c.lossl = Layout::kPadded;
      c.seed = ++seed;
      RunCase(c);
    }
}

TEST(SceViews, InPlaceBackpropIsFeatures) {
  uint64_t seed = 500;
  for (aclDataType dt : kDtypes)
    for (Layout lay : {Layout::kDense, Layout::kPadded, Layout::kTransposed})
      for (const std::vector<int64_t>& dims :
           std::vector<std::vector<int64_t>>{{40, 3}, {40, 37}, {9, 100}, {2, 9000}, {2, 3, 4, 5}}) {
        const bool nchw = dims.size() == 4;
        const aclFormat fmt = nchw ? ACL_FORMAT_NCHW : ACL_FORMAT_ND;
        HostTensor f(dt, dims, lay, fmt), l(dt, dims, Layout::kDense, fmt);
        HostTensor loss(dt, nchw ? std::vector<int64_t>{2, 4, 5} : std::vector<int64_t>{dims[0]});
        aclnn_test::Rng rng(++seed);
        Fill(f, rng, -3, 3);
        Fill(l, rng, 0, 1);
        const std::vector<double> x = f.Values(), y = l.Values();
        uint64_t ws = 0;
        aclOpExecutor* ex = nullptr;
        ASSERT_EQ(aclnnSoftmaxCrossEntropyWithLogitsGetWorkspaceSize(f.handle, l.handle, loss.handle,
                                                                    f.handle, &ws, &ex), ACLNN_SUCCESS)
            << aclGetRecentErrMsg();
        std::vector<uint8_t> w(ws + 1);
        ASSERT_EQ(aclnnSoftmaxCrossEntropyWithLogits(w.data(), ws, ex, nullptr), ACLNN_SUCCESS);
        ExpectMatches(loss, f, dims, x, dims, y, nchw, std::string("in place ") + Name(dt));
        EXPECT_TRUE(f.GapsUntouched());
      }
}

TEST(SceSpecialValues, InfAndNanFollowTensorFlow) {
  // -inf logit with label 0 -> NaN loss; +inf or NaN logit -> the whole row NaN. Checked
  // against the reference (which follows the same formulas) in every path.
  const double inf = INFINITY;
  for (aclDataType dt : kDtypes)
    for (int64_t C : {1, 2, 3, 8, 16, 40, 100, 1000, 9000}) {
      for (bool nchw : {false, true}) {
        if (nchw && C > 40) continue;
        std::vector<int64_t> dims = nchw ? std::vector<int64_t>{1, C, 2, 3} : std::vector<int64_t>{6, C};
        const aclFormat fmt = nchw ? ACL_FORMAT_NCHW : ACL_FORMAT_ND;
        HostTensor f(dt, dims, Layout::kDense, fmt), l(dt, dims, Layout::kDense, fmt);
        HostTensor loss(dt, nchw ? std::vector<int64_t>{1, 2, 3} : std::vector<int64_t>{6}), bp(dt, dims, Layout::kDense, fmt);
        aclnn_test::Rng rng(C);
        Fill(f, rng, -2, 2);
        Fill(l, rng, 0, 1);
        // rows (ND) / positions (NCHW) 1..5: -inf with label 0, -inf with label > 0, +inf, NaN, all -inf
        auto at = [&](int64_t row, int64_t c) { return nchw ? c * 6 + row : row * C + c; };
        const int64_t c0 = C - 1;
        f.Set(at(1, c0), -inf); l.Set(at(1, c0), 0);
        f.Set(at(2, c0), -inf); l.Set(at(2, c0), 0.5);
        f.Set(at(3, 0), inf);
        f.Set(at(4, c0 / 2), NAN);
        for (int64_t c = 0; c < C; ++c) f.Set(at(5, c), -inf);
        const std::vector<double> x = f.Values(), y = l.Values();
        ASSERT_EQ(RunSce(f, l, loss, bp), ACLNN_SUCCESS);
        ExpectMatches(loss, bp, dims, x, dims, y, nchw, std::string("special ") + Name(dt) + " C=" + std::to_string(C));
        EXPECT_TRUE(std::isnan(loss.Get(1)));
        EXPECT_TRUE(std::isnan(loss.Get(3)) && std::isnan(bp.Get(at(3, 0))));
        EXPECT_TRUE(std::isnan(loss.Get(4)));
      }
    }
}

TEST(SceSpecialValues, AllMinusInfChunkInLongRow) {
  // A whole 4096-class chunk of -inf in a long row: it contributes nothing, the rest is finite.
  HostTensor f(ACL_FLOAT, {1, 3 * 4096 + 5}), l(ACL_FLOAT, {1, 3 * 4096 + 5}), loss(ACL_FLOAT, {1}),
      bp(ACL_FLOAT, {1, 3 * 4096 + 5});
  aclnn_test::Rng rng(3);
  Fill(f, rng, -1, 1);
  Fill(l, rng, 0, 1);
  for (int64_t c = 4096; c < 2 * 4096; ++c) { f.Set(c, -INFINITY); l.Set(c, 0.25); }
  const std::vector<double> x = f.Values(), y = l.Values();
  ASSERT_EQ(RunSce(f, l, loss, bp), ACLNN_SUCCESS);
  ExpectMatches(loss, bp, f.dims, x, l.dims, y, false, "-inf chunk");
  EXPECT_TRUE(std::isinf(loss.Get(0)));
  EXPECT_EQ(bp.Get(5000), -0.25);
}

TEST(SceBroadcast, EveryPatternEveryDtype) {
  uint64_t seed = 700;
  const int64_t N = 37;
  for (aclDataType dt : kDtypes)
    for (int64_t C : {1, 3, 8, 20, 700}) {
      const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> pats = {
          {{N, C}, {1, C}}, {{N, C}, {N, 1}}, {{N, C}, {1, 1}}, {{1, C}, {N, C}}, {{N, 1}, {N, C}},
          {{1, 1}, {N, C}}, {{1, C}, {N, 1}}, {{N, 1}, {1, C}}, {{1, C}, {1, C}}};
      for (const auto& [fd, ld] : pats)
        for (Layout lay : {Layout::kDense, Layout::kPadded}) {
          Case c{dt, fd, ld};
          c.fl = lay;
          c.ll = lay == Layout::kDense ? Layout::kPadded : Layout::kDense;
          c.seed = ++seed;
          RunCase(c);
        }
    }
}

TEST(SceBroadcast, LongRowsWithSharedOrScalarInputs) {
  // SplitR rows (3 chunks) with a [1, C] labels row, a [N, 1] features column, and both.
  uint64_t seed = 900;
  const int64_t C = 9000;
  for (aclDataType dt : {ACL_FLOAT, ACL_BF16})
    for (const auto& [fd, ld] : std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>>{
             {{3, C}, {1, C}}, {{3, 1}, {3, C}}, {{1, C}, {3, 1}}}) {
      Case c{dt, fd, ld};
      c.seed = ++seed;
      RunCase(c);
    }
}

TEST(SceBroadcast, SharedLabelsRowNeedsNoWorkspace) {
  HostTensor f(ACL_FLOAT, {500, 1000}), l(ACL_FLOAT, {1, 1000}), loss(ACL_FLOAT, {500}), bp(ACL_FLOAT, {500, 1000});
  aclnn_test::Rng rng(9);
  Fill(f, rng, -4, 4);
  Fill(l, rng, 0, 0.002);
  uint64_t ws = 99;
  ASSERT_EQ(RunSce(f, l, loss, bp, nullptr, &ws), ACLNN_SUCCESS);
  EXPECT_EQ(ws, 0u);
  ExpectMatches(loss, bp, f.dims, f.Values(), l.dims, l.Values(), false, "shared labels");
  // A transposed [1, C] labels row is gathered once: the workspace holds C elements, not N*C.
  HostTensor lt(ACL_FLOAT, {1, 1000}, Layout::kPadded);
  for (int64_t i = 0; i < 1000; ++i) lt.Set(i, l.Get(i));
  ASSERT_EQ(RunSce(f, lt, loss, bp, nullptr, &ws), ACLNN_SUCCESS);
  EXPECT_LE(ws, 1000u * 4 + 128);
  ExpectMatches(loss, bp, f.dims, f.Values(), l.dims, l.Values(), false, "shared padded labels");
}

TEST(SceEmpty, NoRowsAndNoClasses) {
  for (aclDataType dt : kDtypes) {
    HostTensor f(dt, {0, 5}), l(dt, {0, 5}), loss(dt, {0}), bp(dt, {0, 5});
    uint64_t ws = 7;
    EXPECT_EQ(RunSce(f, l, loss, bp, nullptr, &ws), ACLNN_SUCCESS) << aclGetRecentErrMsg();
    EXPECT_EQ(ws, 0u);
    HostTensor f2(dt, {4, 0}), l2(dt, {4, 0}), loss2(dt, {4}, Layout::kPadded), bp2(dt, {4, 0});
    EXPECT_EQ(RunSce(f2, l2, loss2, bp2), ACLNN_SUCCESS) << aclGetRecentErrMsg();
    for (int i = 0; i < 4; ++i) EXPECT_EQ(loss2.Get(i), 0.0);
    EXPECT_TRUE(loss2.GapsUntouched());
    HostTensor f3(dt, {0, 3, 4, 4}, Layout::kDense, ACL_FORMAT_NCHW), l3(dt, {0, 3, 4, 4}, Layout::kDense, ACL_FORMAT_NCHW);
    HostTensor loss3(dt, {0, 4, 4}), bp3(dt, {0, 3, 4, 4}, Layout::kDense, ACL_FORMAT_NCHW);
    EXPECT_EQ(RunSce(f3, l3, loss3, bp3), ACLNN_SUCCESS);
  }
}

TEST(SceExecutor, WorkspaceNullOrTooSmallWritesNothing) {
  HostTensor f(ACL_FLOAT, {8, 6}, Layout::kTransposed), l(ACL_FLOAT, {8, 6}), loss(ACL_FLOAT, {8}), bp(ACL_FLOAT, {8, 6});
  aclnn_test::Rng rng(4);
  Fill(f, rng, -1, 1);
  Fill(l, rng, 0, 1);
  const std::vector<uint8_t> loss0 = loss.storage, bp0 = bp.storage;
  uint64_t ws = 0;
  aclOpExecutor* ex = nullptr;
  ASSERT_EQ(aclnnSoftmaxCrossEntropyWithLogitsGetWorkspaceSize(f.handle, l.handle, loss.handle, bp.handle, &ws, &ex), ACLNN_SUCCESS);
  ASSERT_GT(ws, 0u);
  ASSERT_EQ(aclSetAclOpExecutorRepeatable(ex), ACLNN_SUCCESS);
  EXPECT_EQ(aclnnSoftmaxCrossEntropyWithLogits(nullptr, ws, ex, nullptr), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(std::string(aclGetRecentErrMsg()).find("workspace"), std::string::npos);
  std::vector<uint8_t> w(ws);
  EXPECT_EQ(aclnnSoftmaxCrossEntropyWithLogits(w.data(), ws - 1, ex, nullptr), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(std::string(aclGetRecentErrMsg()).find("workspaceSize"), std::string::npos);
  EXPECT_EQ(loss.storage, loss0);
  EXPECT_EQ(bp.storage, bp0);
  EXPECT_EQ(aclnnSoftmaxCrossEntropyWithLogits(w.data(), ws, ex, nullptr), ACLNN_SUCCESS);
  ExpectMatches(loss, bp, f.dims, f.Values(), l.dims, l.Values(), false, "after retry");
  EXPECT_EQ(aclDestroyAclOpExecutor(ex), ACLNN_SUCCESS);
}

TEST(SceExecutor, RepeatableWithNewAddressesAndStreams) {
  HostTensor f(ACL_FLOAT, {50, 30}), l(ACL_FLOAT, {50, 30}), loss(ACL_FLOAT, {50}), bp(ACL_FLOAT, {50, 30});
  HostTensor f2(ACL_FLOAT, {50, 30});
  aclnn_test::Rng rng(5);
  Fill(f, rng, -1, 1);
  Fill(f2, rng, 50, 60);
  Fill(l, rng, 0, 1);
  uint64_t ws = 0;
  aclOpExecutor* ex = nullptr;
  ASSERT_EQ(aclnnSoftmaxCrossEntropyWithLogitsGetWorkspaceSize(f.handle, l.handle, loss.handle, bp.handle, &ws, &ex), ACLNN_SUCCESS);
  ASSERT_EQ(aclSetAclOpExecutorRepeatable(ex), ACLNN_SUCCESS);
  aclrtStream stream = nullptr;
  ASSERT_EQ(aclrtCreateStream(&stream), ACL_SUCCESS);
  ASSERT_EQ(aclnnSoftmaxCrossEntropyWithLogits(nullptr, 0, ex, stream), ACLNN_SUCCESS);
  ASSERT_EQ(aclrtSynchronizeStream(stream), ACL_SUCCESS);
  ExpectMatches(loss, bp, f.dims, f.Values(), l.dims, l.Values(), false, "first run");
  ASSERT_EQ(aclSetInputTensorAddr(ex, 0, f.handle, f2.storage.data()), ACLNN_SUCCESS);
  ASSERT_EQ(aclnnSoftmaxCrossEntropyWithLogits(nullptr, 0, ex, nullptr), ACLNN_SUCCESS);
  ExpectMatches(loss, bp, f.dims, f2.Values(), l.dims, l.Values(), false, "second run, new features");
  // An address that makes an output overlap an input is rejected at launch, nothing written.
  const std::vector<uint8_t> loss0 = loss.storage;
  ASSERT_EQ(aclSetInputTensorAddr(ex, 1, l.handle, bp.storage.data()), ACLNN_SUCCESS);
  EXPECT_EQ(aclnnSoftmaxCrossEntropyWithLogits(nullptr, 0, ex, nullptr), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(std::string(aclGetRecentErrMsg()).find("overlaps"), std::string::npos);
  ASSERT_EQ(aclSetInputTensorAddr(ex, 1, l.handle, nullptr), ACLNN_SUCCESS);
  EXPECT_EQ(aclnnSoftmaxCrossEntropyWithLogits(nullptr, 0, ex, nullptr), ACLNN_ERR_PARAM_NULLPTR);
  EXPECT_EQ(loss.storage, loss0);
  EXPECT_EQ(aclDestroyAclOpExecutor(ex), ACLNN_SUCCESS);
  EXPECT_EQ(aclrtDestroyStream(stream), ACL_SUCCESS);
}

// Output bits for every thread count and ISA: one hash per shape.
namespace {
struct DeterminismShape { aclDataType dt; std::vector<int64_t> f, l; bool nchw; };

// The same bits of loss and backprop for every ISA and thread count, logits U(lo, hi).
void ExpectSameBitsForThreadsAndIsas(const std::vector<DeterminismShape>& shapes, double lo, double hi,
                                     std::initializer_list<int> thread_counts) {
  for (const DeterminismShape& s : shapes) {
    uint64_t want = 0;
    for (aclnn_portable::Isa isa : aclnn_test::SupportedIsas())
      for (int threads : thread_counts) {
        aclnn_test::ScopedThreads st(threads);
        aclnn_test::ScopedIsa si(isa);
        const aclFormat fmt = s.nchw ? ACL_FORMAT_NCHW : ACL_FORMAT_ND;
        const std::vector<int64_t> b = {std::max(s.f[0], s.l[0]), std::max(s.f[1], s.l[1])};
        const std::vector<int64_t> bd = s.nchw ? s.f : b;
        HostTensor f(s.dt, s.f, Layout::kDense, fmt), l(s.dt, s.l, Layout::kDense, fmt);
        HostTensor loss(s.dt, s.nchw ? std::vector<int64_t>{s.f[0], s.f[2], s.f[3]} : std::vector<int64_t>{b[0]});
        HostTensor bp(s.dt, bd, Layout::kDense, fmt);
        aclnn_test::Rng rng(77);
        Fill(f, rng, lo, hi);
        Fill(l, rng, 0, 1);
        ASSERT_EQ(RunSce(f, l, loss, bp), ACLNN_SUCCESS);
        const uint64_t h = aclnn_test::HashBytes(loss.storage.data(), loss.storage.size()) ^
                           (aclnn_test::HashBytes(bp.storage.data(), bp.storage.size()) * 3);
        if (want == 0) want = h;
        EXPECT_EQ(h, want) << "isa " << aclnn_portable::IsaName(isa) << " threads " << threads
                           << " shape " << s.f[0] << "x" << s.f[1];
      }
  }
}
}  // namespace

TEST(SceDeterminism, SameBitsForThreadsAndIsas) {
  ExpectSameBitsForThreadsAndIsas(
      {
          {ACL_FLOAT, {1000, 7}, {1000, 7}, false},   {ACL_BF16, {300, 1000}, {300, 1000}, false},
          {ACL_FLOAT, {3, 20000}, {3, 20000}, false}, {ACL_FLOAT16, {2, 70000}, {1, 70000}, false},
          {ACL_FLOAT, {2, 5, 7, 9}, {2, 5, 7, 9}, true}, {ACL_FLOAT, {33, 1}, {33, 1}, false},
          {ACL_FLOAT, {70, 17}, {70, 1}, false},      {ACL_FLOAT, {70, 24}, {70, 24}, false},
          {ACL_BF16, {100, 48}, {100, 48}, false},   {ACL_FLOAT, {70, 60}, {70, 60}, false},
          {ACL_BF16, {100, 127}, {100, 127}, false}, {ACL_FLOAT, {301, 100}, {301, 100}, false},
          {ACL_FLOAT16, {40, 192}, {40, 192}, false}, {ACL_BF16, {40, 193}, {40, 193}, false},
          // AVX2 fp32 row blocks end at 144 classes.
          {ACL_FLOAT, {40, 144}, {40, 144}, false},   {ACL_FLOAT, {40, 145}, {40, 145}, false},
          // Calls shared by cores in quarter-block pieces (kScePiecesPerCore): row blocks cut
          // mid-block, packed pieces of 16-row multiples with a partial last block.
          {ACL_FLOAT, {700, 100}, {700, 100}, false}, {ACL_FLOAT, {4100, 10}, {4100, 10}, false},
          // 8192-32767 elements a core: helpers join only while they spin (wakeCoreNum 1).
          {ACL_FLOAT, {16, 1000}, {16, 1000}, false}, {ACL_BF16, {256, 100}, {256, 100}, false},
          // NCHW groups copied into workspace regions, one per worker, a worker taking several pieces.
          {ACL_BF16, {6, 70, 128, 128}, {6, 70, 128, 128}, true},
      },
      -20, 20, {1, 2, 3, 8});
}

// Logits down to 150 below their row's maximum: exps in the subnormal range and exps that round
// to 0, which the AVX-512 exp forms without vscalefps (an Intel microcode assist otherwise), in
// every kernel variant: packed rows, FullLoad, SplitR, NCHW lanes.
TEST(SceDeterminism, FarBelowMaxLogitsGiveSameBitsOnEveryIsa) {
  ExpectSameBitsForThreadsAndIsas(
      {
          {ACL_FLOAT, {1000, 7}, {1000, 7}, false},   {ACL_FLOAT, {300, 1000}, {300, 1000}, false},
          {ACL_BF16, {300, 1000}, {300, 1000}, false}, {ACL_FLOAT, {3, 20000}, {3, 20000}, false},
          {ACL_FLOAT16, {64, 100}, {64, 100}, false}, {ACL_FLOAT, {2, 19, 7, 9}, {2, 19, 7, 9}, true},
          {ACL_FLOAT, {2, 70, 16, 16}, {2, 70, 16, 16}, true}, {ACL_FLOAT, {70, 24}, {70, 24}, false},
          {ACL_BF16, {100, 127}, {100, 127}, false}, {ACL_FLOAT, {70, 129}, {70, 129}, false},
      },
      -140, 10, {1, 2});
}

// Logits spread over [-86.7, 0]: rows whose x - max stays above simd::kExpNormalRangeMin (-86.5)
// take the exp without the clamp and subnormal check on the vector ISAs, the others (and rows
// with results near the subnormal edge, 2^-126 = e^-87.3) the full exp; the portable build takes
// the full exp always. Short rows (lane path), row blocks, FullLoad rows and SplitR chunks.
TEST(SceDeterminism, RowsAtTheExpNormalRangeEdgeGiveSameBitsOnEveryIsa) {
  ExpectSameBitsForThreadsAndIsas(
      {
          {ACL_FLOAT, {1000, 7}, {1000, 7}, false},   {ACL_FLOAT, {1000, 24}, {1000, 24}, false},
          {ACL_FLOAT, {300, 64}, {300, 64}, false},   {ACL_BF16, {300, 100}, {300, 100}, false},
          {ACL_FLOAT16, {300, 128}, {300, 128}, false}, {ACL_FLOAT, {300, 200}, {300, 200}, false},
          {ACL_BF16, {64, 1000}, {64, 1000}, false},   {ACL_FLOAT, {3, 20000}, {3, 20000}, false},
          {ACL_FLOAT, {2, 19, 7, 9}, {2, 19, 7, 9}, true},
      },
      -86.7, 0, {1, 2});
}

// Confident, correct predictions: s = 1 + tiny, the loss is about the tiny part. The loss must
// keep its relative precision (a plain float sum next to 1 loses it).
TEST(ScePrecision, ConfidentPredictionsKeepRelativeLossPrecision) {
  // Packed rows (C <= 20), FullLoad rows (64, 100, 1000: L from one vector log per 16 rows),
  // SplitR (5000, 9000); 21 rows leave a partial group of 5.
  for (int64_t C : {2, 5, 8, 20, 64, 100, 1000, 5000, 9000})
    for (bool nchw : {false, true}) {
      if (nchw && C > 20) continue;
      const std::vector<int64_t> dims = nchw ? std::vector<int64_t>{2, C, 3, 7} : std::vector<int64_t>{21, C};
      const aclFormat fmt = nchw ? ACL_FORMAT_NCHW : ACL_FORMAT_ND;
      HostTensor f(ACL_FLOAT, dims, Layout::kDense, fmt), l(ACL_FLOAT, dims, Layout::kDense, fmt);
      HostTensor loss(ACL_FLOAT, nchw ? std::vector<int64_t>{2, 3, 7} : std::vector<int64_t>{21});
      HostTensor bp(ACL_FLOAT, dims, Layout::kDense, fmt);
      aclnn_test::Rng rng(C + nchw);
      Fill(f, rng, -1, 1);
      const int64_t rows = nchw ? 42 : 21, inner = nchw ? 21 : 1;
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t n = r / inner, p = r % inner, hot = (r * 7) % C;
        auto at = [&](int64_t c) { return nchw ? (n * C + c) * inner + p : r * C + c; };
        for (int64_t c = 0; c < C; ++c) l.Set(at(c), c == hot ? 1.0 : 0.0);
        f.Set(at(hot), 12.0 + 0.5 * static_cast<double>(r % 9));  // exp gap e^-11 .. e^-17
      }
      const std::vector<double> x = f.Values(), y = l.Values();
      ASSERT_EQ(RunSce(f, l, loss, bp), ACLNN_SUCCESS);
      const Reference ref = ComputeReference(dims, x, dims, y, nchw);
      for (int64_t r = 0; r < rows; ++r)
        EXPECT_NEAR(loss.Get(r), ref.loss[r], 1e-5 * ref.loss[r]) << "C=" << C << " nchw=" << nchw << " row " << r;
    }
}

// Direct kernel runs of the kRows variants on one shape: SplitR with and without the fp32 exp
// scratch (rows beyond kSceExpScratchMaxR recompute the exp), serial and as cross-core
// (row, chunk) tasks, and backprop through plain or streaming stores at an odd address (FullLoad
// too): the same bits on every ISA.
TEST(SceRows, ScratchRecomputeCrossCoreAndStreamingGiveSameBits) {
  using namespace aclnn_portable;
  const int64_t A = 3;
  for (int64_t R : {int64_t{1000}, int64_t{37}, 2 * kSceChunk + 1003})
    for (SceDtype dt : {SceDtype::kFloat, SceDtype::kBf16}) {
      const size_t es = dt == SceDtype::kFloat ? 4 : 2;
      std::vector<uint8_t> x, y;
      // One dominant class (feature 7): the other chunks' scales are tiny.
      const SceProblem p = DirectInputs(A, R, dt, 5, -30, 30, 1e-3, [](int64_t i, float* v) { if (i == 7) *v = 60.0f; }, &x, &y);
      std::vector<uint8_t> want_bp, want_loss;
      for (Isa isa : aclnn_test::SupportedIsas()) {
        aclnn_test::ScopedIsa si(isa);
        for (int cores : {1, 8})
          for (bool scratch : {true, false})
            for (bool stream : {false, true}) {
              PlatformInfo pi;
              pi.coreNum = cores;
              SceTiling t = PlanSce(p, pi);
              const bool split = R > kSceChunk;
              ASSERT_EQ(t.schId, split ? SceSchedule::kSplitR : SceSchedule::kFullLoad);
              ASSERT_EQ(t.splitRAcrossCores, split && cores > A);
              ASSERT_EQ(t.expScratchStride > 0, split);
              if (!split && !scratch) continue;
              t.streamBackprop = stream;
              std::vector<uint8_t> ws(t.workspaceBytes + 64), bp_buf(A * R * es + 64, 0xee), loss(A * es, 0xee);
              uint8_t* wsp = PastLine(ws);
              uint8_t* bp = bp_buf.data() + es;  // not aligned to a vector
              SceKernelArgs k = DirectArgs(x.data(), y.data(), bp, loss.data(), dt, t, R);
              k.expScratch = scratch && split ? reinterpret_cast<float*>(wsp + t.offExp) : nullptr;
              if (t.splitRAcrossCores) {
                k.chunks = reinterpret_cast<SceChunkRecord*>(wsp + t.offSplit);
                k.rows = reinterpret_cast<SceRowRecord*>(wsp + t.offSplit + t.splitTasks * sizeof(SceChunkRecord));
                for (int phase = 0; phase < 4; ++phase)
                  for (int64_t task = 0; task < (phase % 2 == 0 ? t.splitTasks : A); ++task)
                    ACLNN_ISA_SELECT(SceSplitPhase)(k, phase, task);
              } else {
                ACLNN_ISA_SELECT(SceRunBlock)(k, 0, A);
              }
              const std::vector<uint8_t> got(bp, bp + A * R * es);
              if (want_bp.empty()) {
                want_bp = got;
                want_loss = loss;
              }
              EXPECT_TRUE(got == want_bp && loss == want_loss)
                  << IsaName(isa) << " R " << R << " cores " << cores << " scratch " << scratch
                  << " stream " << stream << " dtype bytes " << es;
              // Nothing written outside backprop.
              EXPECT_EQ(bp_buf[es - 1], 0xee);
              EXPECT_EQ(bp_buf[es + A * R * es], 0xee);
            }
      }
    }
}

// fp32 FullLoad rows of SceTiling::fullLoadRereadX take x - max from the features again in the
// apply pass instead of the copy the exp pass stores: the same bits either way, on every ISA,
// with plain and streamed stores, in one block or per-core blocks. Rows of whole vectors and
// with a tail; finite rows, a row with some -inf logits (+inf loss) and a row of only -inf (NaN
// loss: the same NaN).
TEST(SceRows, FullLoadRereadXGivesSameBits) {
  using namespace aclnn_portable;
  const int64_t A = 7;
  for (int64_t R : {kSceFullLoadRereadXMinClasses, int64_t{2047}, int64_t{3001}, kSceChunk}) {
    std::vector<uint8_t> x, y;
    const SceProblem p = DirectInputs(A, R, SceDtype::kFloat, 29, -20, 20, 1e-3, [R](int64_t i, float* v) {
      if (i / R == 3 || (i / R == 5 && i % 131 == 17)) *v = -std::numeric_limits<float>::infinity();
    }, &x, &y);
    std::vector<uint8_t> want_bp, want_loss;
    for (Isa isa : aclnn_test::SupportedIsas()) {
      aclnn_test::ScopedIsa si(isa);
      for (int cores : {1, 8})
        for (bool stream : {false, true})
          for (bool reread : {false, true}) {
            PlatformInfo pi;
            pi.coreNum = cores;
            SceTiling t = PlanSce(p, pi);
            ASSERT_EQ(t.schId, SceSchedule::kFullLoad);
            ASSERT_TRUE(t.fullLoadRereadX) << R;
            t.streamBackprop = stream;
            t.fullLoadRereadX = reread;
            std::vector<uint8_t> bp_buf(A * R * 4 + 8, 0xee), loss(A * 4, 0xee);
            uint8_t* bp = bp_buf.data() + 4;  // not aligned to a vector
            RunBlocks(DirectArgs(x.data(), y.data(), bp, loss.data(), SceDtype::kFloat, t, R), A);
            const std::vector<uint8_t> got(bp, bp + A * R * 4);
            if (want_bp.empty()) {
              want_bp = got;
              want_loss = loss;
            }
            EXPECT_TRUE(got == want_bp && loss == want_loss)
                << IsaName(isa) << " R " << R << " cores " << cores << " stream " << stream << " reread " << reread;
            EXPECT_EQ(bp_buf[3], 0xee);
            EXPECT_EQ(bp_buf[4 + A * R * 4], 0xee);
          }
    }
    // Row 3 (only -inf) has a NaN loss, row 5 (-inf where labels are not 0) +inf, the others
    // finite ones.
    for (int64_t a = 0; a < A; ++a) {
      float l;
      std::memcpy(&l, want_loss.data() + 4 * a, 4);
      if (a == 3) EXPECT_TRUE(std::isnan(l)) << R;
      else if (a == 5) EXPECT_EQ(l, std::numeric_limits<float>::infinity()) << R;
      else EXPECT_TRUE(std::isfinite(l)) << R << " row " << a;
    }
  }
}

// Direct kernel runs of kRows with streamed backprop, which goes out through simd::LineStream:
// adjacent rows (and a SplitR row's chunks, committed in pieces) as one run of whole 64-byte
// lines (a line two rows share is written once), strided rows as one run each. FullLoad rows
// of every length class (whole lines, whole vectors, partial vectors) and SplitR rows of 2 and
// 3 chunks, at every position in a line (element-aligned) and at an odd byte address (the
// chunk-by-chunk fallback), in one block or in per-core blocks: the same bits as plain stores on
// every ISA (odd addresses: the vector ISAs), and no byte outside the rows written (not between
// strided rows either).
TEST(SceRows, LineStreamedRowsGiveSameBitsAndWriteOnlyTheirBytes) {
  using namespace aclnn_portable;
  struct Shape { int64_t A, R; };
  for (SceDtype dt : {SceDtype::kFloat, SceDtype::kHalf, SceDtype::kBf16})
    for (Shape sh : {Shape{37, 64}, Shape{37, 65}, Shape{37, 80}, Shape{37, 81}, Shape{37, 97}, Shape{37, 100}, Shape{37, 128}, Shape{37, 129}, Shape{37, 1000},
                     Shape{37, 1023}, Shape{5, kSceChunk + 37}, Shape{4, 2 * kSceChunk + 1}}) {
      const int64_t A = sh.A, R = sh.R;
      const size_t es = dt == SceDtype::kFloat ? 4 : 2;
      std::vector<uint8_t> x, y;
      const SceProblem p = DirectInputs(A, R, dt, 13, -12, 12, 1, [](int64_t, float*) {}, &x, &y);
      PlatformInfo one;
      if (PlanSce(p, one).kernel != SceKernel::kRows) continue;  // short 16-bit rows: packed
      std::vector<uint8_t> want_bp, want_loss;
      for (Isa isa : aclnn_test::SupportedIsas()) {
        aclnn_test::ScopedIsa si(isa);
        for (int cores : {1, 3})
          for (int64_t stride : {R, R + 3})
            for (size_t shift : {size_t{0}, es, 32 + es, 64 - es, size_t{1}})
              for (bool stream : {false, true}) {
                // The portable build indexes typed pointers: element-aligned outputs only.
                if (shift % es != 0 && isa == Isa::kScalar) continue;
                PlatformInfo pi;
                pi.coreNum = cores;
                SceTiling t = PlanSce(p, pi);
                ASSERT_EQ(t.kernel, SceKernel::kRows);
                ASSERT_FALSE(t.splitRAcrossCores);  // SplitR rows run as blocks, recomputing exp
                t.streamBackprop = stream;
                const size_t span = static_cast<size_t>((A - 1) * stride + R) * es;
                std::vector<uint8_t> bp_buf(span + 192, 0xee), loss(A * es, 0xee);
                uint8_t* bp = PastLine(bp_buf, shift);
                const size_t at = static_cast<size_t>(bp - bp_buf.data());
                SceKernelArgs k = DirectArgs(x.data(), y.data(), bp, loss.data(), dt, t, R);
                k.bpRowStride = stride;
                RunBlocks(k, A);
                std::vector<uint8_t> got;
                for (int64_t a = 0; a < A; ++a)
                  got.insert(got.end(), bp + a * stride * es, bp + (a * stride + R) * es);
                if (want_bp.empty()) {
                  want_bp = got;
                  want_loss = loss;
                }
                EXPECT_TRUE(got == want_bp && loss == want_loss)
                    << IsaName(isa) << " R " << R << " cores " << cores << " stride " << stride << " shift "
                    << shift << " stream " << stream << " dtype bytes " << es;
                for (size_t i = 0; i < bp_buf.size(); ++i) {
                  const bool inRow = i >= at && i < at + span && (i - at) % (stride * es) < R * es;
                  if (!inRow) {
                    ASSERT_EQ(bp_buf[i], 0xee) << IsaName(isa) << " R " << R << " stride " << stride << " shift "
                                               << shift << " stream " << stream << ": byte " << i << " written";
                  }
                }
              }
      }
    }
}

// Direct kernel runs of kNchwLanes: backprop written through plain or streaming stores, at a
// vector-aligned and an odd address, in one block or in the planner's per-core blocks (partial
// 16-position groups at image ends), groups copied into the stack scratch, the workspace
// scratch (C = 70 / 300 with a budget from ubBytes; C = 300 also keeps its exp there) or not at
// all (C = 300 without a budget): the same bits on every ISA, nothing written outside.
TEST(SceNchw, StreamingAndBlockSplitGiveSameBits) {
  using namespace aclnn_portable;
  const int64_t N = 2, HW = 16 * 9 + 5;
  for (int64_t C : {int64_t{3}, int64_t{19}, int64_t{40}, int64_t{70}, int64_t{300}})
    for (SceDtype dt : {SceDtype::kFloat, SceDtype::kHalf, SceDtype::kBf16}) {
      const size_t es = dt == SceDtype::kFloat ? 4 : 2;
      const int64_t A = N * HW, E = N * C * HW;
      std::vector<uint8_t> x(E * es), y(E * es);
      aclnn_test::Rng rng(static_cast<uint64_t>(C));
      for (int64_t i = 0; i < E; ++i) {
        const float xv = static_cast<float>(rng.Uniform(-8, 8)), yv = static_cast<float>(rng.Uniform(0, 0.2));
        PutAs(x, i, xv, dt);
        PutAs(y, i, yv, dt);
      }
      const SceProblem p = NchwProblem(dt, N, C, HW);
      std::vector<uint8_t> want_bp, want_loss;
      for (Isa isa : aclnn_test::SupportedIsas()) {
        aclnn_test::ScopedIsa si(isa);
        for (int cores : {1, 8})
          for (uint64_t ub : {uint64_t{0}, uint64_t{256} << 10})
            for (size_t shift : {size_t{0}, es})
              for (bool stream : {false, true}) {
                PlatformInfo pi;
                pi.coreNum = cores;
                pi.ubBytes = ub;
                SceTiling t = PlanSce(p, pi);
                ASSERT_EQ(t.kernel, SceKernel::kNchwLanes);
                // The stack holds 8 groups of C = 3 / 19, 6 of C = 40, 3 of C = 70 (which then
                // takes 8 from the workspace when there is a budget), none of C = 300.
                EXPECT_EQ(t.nchwScratchFloats > 0, ub > 0 && C >= 70) << C;
                EXPECT_EQ(t.nchwGroups, C == 40 ? 6 : ub > 0 || C < 40 ? 8 : C == 70 ? 3 : 0) << C;
                t.streamBackprop = stream;
                std::vector<float> scratch(static_cast<size_t>(t.nchwScratchFloats), NAN);  // never read before written
                std::vector<uint8_t> bp_buf(E * es + 128, 0xee), loss(A * es, 0xee);
                uint8_t* bp = PastLine(bp_buf, shift);
                const size_t at = static_cast<size_t>(bp - bp_buf.data());
                SceKernelArgs k = DirectArgs(x.data(), y.data(), bp, loss.data(), dt, t);
                k.nchwScratch = scratch.data();
                RunBlocks(k, A);
                const std::vector<uint8_t> got(bp, bp + E * es);
                if (want_bp.empty()) {
                  want_bp = got;
                  want_loss = loss;
                }
                EXPECT_TRUE(got == want_bp && loss == want_loss)
                    << IsaName(isa) << " C " << C << " cores " << cores << " ub " << ub << " shift " << shift
                    << " stream " << stream << " dtype bytes " << es;
                for (size_t i = 0; i < bp_buf.size(); ++i)
                  if (i < at || i >= at + E * es) {
                    ASSERT_EQ(bp_buf[i], 0xee) << "byte " << i << " written";
                  }
              }
      }
    }
}

// kNchwLanes with H*W <= 8 fills a group's 16 lanes with positions of consecutive images: every
// position must keep the bits it gets when its image is computed alone (a call of N = 1, one
// partial group), on every ISA, with the planner's blocks for 1 and 8 cores (groups that span
// images and blocks that end inside an image), the stack scratch, the workspace scratch or none
// (C = 300 without a budget), outputs one element past a line (stream on or off: these groups
// use plain stores), and nothing written outside. H*W = 9 and 15 (one image per group) hold the
// same for the other path.
TEST(SceNchw, GroupsAcrossImagesKeepEachPositionsBits) {
  using namespace aclnn_portable;
  const int64_t N = 37;
  for (int64_t HW : {int64_t{2}, int64_t{3}, int64_t{4}, int64_t{7}, int64_t{8}, int64_t{9}, int64_t{15}})
    for (int64_t C : {int64_t{3}, int64_t{19}, int64_t{70}, int64_t{300}})
      for (SceDtype dt : {SceDtype::kFloat, SceDtype::kHalf, SceDtype::kBf16}) {
        const size_t es = dt == SceDtype::kFloat ? 4 : 2;
        const int64_t A = N * HW, E = N * C * HW;
        std::vector<uint8_t> x(E * es), y(E * es);
        aclnn_test::Rng rng(static_cast<uint64_t>(C * 100 + HW));
        for (int64_t i = 0; i < E; ++i) {
          PutAs(x, i, static_cast<float>(rng.Uniform(-8, 8)), dt);
          PutAs(y, i, static_cast<float>(rng.Uniform(0, 0.2)), dt);
        }
        for (Isa isa : aclnn_test::SupportedIsas()) {
          aclnn_test::ScopedIsa si(isa);
          // Each image alone, on one core.
          std::vector<uint8_t> want_bp(E * es), want_loss(A * es);
          {
            PlatformInfo one;
            one.ubBytes = uint64_t{256} << 10;
            const SceTiling t = PlanSce(NchwProblem(dt, 1, C, HW), one);
            ASSERT_EQ(t.kernel, SceKernel::kNchwLanes);
            ASSERT_GT(t.nchwGroups, 0) << C;
            ASSERT_EQ(t.nchwAcrossImages, HW <= kSceNchwAcrossImagesMaxHW);
            std::vector<float> scratch(static_cast<size_t>(t.nchwScratchFloats));
            for (int64_t n = 0; n < N; ++n) {
              const size_t at = static_cast<size_t>(n * C * HW) * es;
              SceKernelArgs k = DirectArgs(x.data() + at, y.data() + at, want_bp.data() + at,
                                           want_loss.data() + static_cast<size_t>(n * HW) * es, dt, t);
              k.nchwScratch = scratch.data();
              RunBlocks(k, HW);
            }
          }
          for (int cores : {1, 8})
            for (uint64_t ub : {uint64_t{0}, uint64_t{256} << 10})
              for (bool stream : {false, true}) {
                PlatformInfo pi;
                pi.coreNum = cores;
                pi.ubBytes = ub;
                SceTiling t = PlanSce(NchwProblem(dt, N, C, HW), pi);
                ASSERT_EQ(t.kernel, SceKernel::kNchwLanes);
                // C = 300 without a budget has no group in the scratch (NchwDirect, image by image).
                EXPECT_EQ(t.nchwGroups > 0, C < 300 || ub > 0) << C;
                EXPECT_EQ(t.nchwAcrossImages, t.nchwGroups > 0 && HW <= kSceNchwAcrossImagesMaxHW) << C;
                t.streamBackprop = stream;
                std::vector<float> scratch(static_cast<size_t>(t.nchwScratchFloats), NAN);  // never read before written
                std::vector<uint8_t> bp_buf(E * es + 128, 0xee), loss_buf(A * es + 128, 0xee);
                uint8_t* bp = PastLine(bp_buf, es);
                uint8_t* loss = PastLine(loss_buf, es);
                SceKernelArgs k = DirectArgs(x.data(), y.data(), bp, loss, dt, t);
                k.nchwScratch = scratch.data();
                RunBlocks(k, A);
                const std::string what = std::string(IsaName(isa)) + " HW " + std::to_string(HW) + " C " +
                                         std::to_string(C) + " cores " + std::to_string(cores) + " ub " +
                                         std::to_string(ub) + " stream " + std::to_string(stream) +
                                         " dtype bytes " + std::to_string(es);
                EXPECT_TRUE(std::equal(want_bp.begin(), want_bp.end(), bp)) << what;
                EXPECT_TRUE(std::equal(want_loss.begin(), want_loss.end(), loss)) << what;
                const size_t bpAt = static_cast<size_t>(bp - bp_buf.data());
                const size_t lossAt = static_cast<size_t>(loss - loss_buf.data());
                for (size_t i = 0; i < bp_buf.size(); ++i)
                  if (i < bpAt || i >= bpAt + E * es) {
                    ASSERT_EQ(bp_buf[i], 0xee) << what << ": backprop byte " << i;
                  }
                for (size_t i = 0; i < loss_buf.size(); ++i)
                  if (i < lossAt || i >= lossAt + A * es) {
                    ASSERT_EQ(loss_buf[i], 0xee) << what << ": loss byte " << i;
                  }
              }
        }
      }
}

// Direct kernel runs of kPackedRows: backprop (and, C = 2, loss) through plain or streaming
// stores (C = 2 streams only with both on a 64-byte line, shifted by one element it falls back;
// C > 16 streams through a stage at any address), with and without the next block's prefetch
// (C <= 16; a hint past the end of the data), in one block or in per-core blocks with a partial
// last block: the same bits on every ISA, nothing written outside either output.
TEST(ScePackedRows, StreamingAndPrefetchGiveSameBits) {
  using namespace aclnn_portable;
  const int64_t A = 16 * 37 + 5;
  for (SceDtype dt : {SceDtype::kFloat, SceDtype::kHalf, SceDtype::kBf16})
    for (int64_t C : {2, 3, 10, 16, 17, 37, 60, 95}) {
      const size_t es = dt == SceDtype::kFloat ? 4 : 2;
      if (C == 95 && es == 4) continue;  // kRows
      std::vector<uint8_t> x, y;
      // A NaN row (feature 9) stays NaN on every path.
      const SceProblem p = DirectInputs(A, C, dt, 11, -12, 12, 1, [](int64_t i, float* v) { if (i == 9) *v = NAN; }, &x, &y);
      std::vector<uint8_t> want_bp, want_loss;
      for (Isa isa : aclnn_test::SupportedIsas()) {
        aclnn_test::ScopedIsa si(isa);
        for (int cores : {1, 3})
          for (size_t shift : {size_t{0}, es})
            for (bool stream : {false, true}) {
              PlatformInfo pi;
              pi.coreNum = cores;
              SceTiling t = PlanSce(p, pi);
              ASSERT_EQ(t.kernel, SceKernel::kPackedRows) << C;
              t.streamBackprop = stream;
              t.prefetchBlocks = stream && C <= 16;
              std::vector<uint8_t> bp_buf(A * C * es + 128, 0xee), loss_buf(A * es + 128, 0xee);
              uint8_t* bp = PastLine(bp_buf, shift);
              uint8_t* loss = PastLine(loss_buf);
              const size_t at_bp = static_cast<size_t>(bp - bp_buf.data());
              const size_t at_loss = static_cast<size_t>(loss - loss_buf.data());
              RunBlocks(DirectArgs(x.data(), y.data(), bp, loss, dt, t, C), A);
              const std::vector<uint8_t> got_bp(bp, bp + A * C * es), got_loss(loss, loss + A * es);
              if (want_bp.empty()) {
                want_bp = got_bp;
                want_loss = got_loss;
              }
              EXPECT_TRUE(got_bp == want_bp && got_loss == want_loss)
                  << IsaName(isa) << " C " << C << " cores " << cores << " shift " << shift << " stream "
                  << stream << " dtype bytes " << es;
              for (size_t i = 0; i < bp_buf.size(); ++i)
                if (i < at_bp || i >= at_bp + A * C * es) {
                  ASSERT_EQ(bp_buf[i], 0xee) << "backprop byte " << i << " written";
                }
              for (size_t i = 0; i < loss_buf.size(); ++i)
                if (i < at_loss || i >= at_loss + A * es) {
                  ASSERT_EQ(loss_buf[i], 0xee) << "loss byte " << i << " written";
                }
            }
      }
    }
}
