// aclnnSoftmaxCrossEntropyWithLogits{GetWorkspaceSize,}: validation in the documented order
// (docs/softmax_cross_entropy_with_logits.md), planning, and the plan that runs the kernels.
// This layer never computes on tensor data: it gathers / scatters views and runs kernels.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "aclnnop/aclnn_softmax_cross_entropy_with_logits.h"
#include "ops/softmax_cross_entropy_with_logits/sce_infer_shape.h"
#include "ops/softmax_cross_entropy_with_logits/sce_kernels.h"
#include "ops/softmax_cross_entropy_with_logits/sce_tiling.h"
#include "platform/platform_info.h"
#include "platform/thread_pool.h"
#include "runtime/error.h"
#include "runtime/executor.h"
#include "runtime/tensor.h"

namespace aclnn_portable {
namespace {

constexpr const char* kApi1 = "aclnnSoftmaxCrossEntropyWithLogitsGetWorkspaceSize";
constexpr const char* kApi2 = "aclnnSoftmaxCrossEntropyWithLogits";
constexpr int64_t kCopyTaskElems = 1 << 16;

enum TensorIdx { kFeatures = 0, kLabels = 1, kLoss = 2, kBackprop = 3 };
constexpr const char* kNames[4] = {"features", "labels", "loss", "backprop"};

bool SupportedDtype(aclDataType d) { return d == ACL_FLOAT || d == ACL_FLOAT16 || d == ACL_BF16; }

// Strided view <-> dense buffer, for the elements [begin, end) in row-major order.
template <typename E>
void CopyRange(const ViewDesc& v, E* storage, E* dense, int64_t begin, int64_t end, bool gather) {
  const size_t rank = v.rank;
  if (rank == 0) {
    if (begin < end) {
      if (gather) dense[0] = storage[v.offset];
      else storage[v.offset] = dense[0];
    }
    return;
  }
  int64_t idx[kMaxTensorRank] = {};
  int64_t rem = begin;
  for (size_t i = rank; i-- > 0;) {
    idx[i] = rem % v.dims[i];
    rem /= v.dims[i];
  }
  const int64_t inner = v.dims[rank - 1], istride = v.strides[rank - 1];
  int64_t e = begin;
  while (e < end) {
    int64_t off = v.offset;
    for (size_t i = 0; i + 1 < rank; ++i) off += idx[i] * v.strides[i];
    const int64_t run = std::min(inner - idx[rank - 1], end - e);
    E* s = storage + off + idx[rank - 1] * istride;
    if (gather) for (int64_t j = 0; j < run; ++j) dense[e + j] = s[j * istride];
    else for (int64_t j = 0; j < run; ++j) s[j * istride] = dense[e + j];
    e += run;
    idx[rank - 1] = 0;
    for (size_t i = rank - 1; i-- > 0;) {
      if (++idx[i] < v.dims[i]) break;
      idx[i] = 0;
    }
  }
}

void ParallelCopy(const ViewDesc& v, void* storage, void* dense, bool gather) {
  const int64_t n = v.numel;
  const int64_t tasks = (n + kCopyTaskElems - 1) / kCopyTaskElems;
  ThreadPool::Global().ParallelFor(tasks, 0, [&](int64_t t) {
    const int64_t b = t * kCopyTaskElems, e = std::min(n, b + kCopyTaskElems);
    if (ElementSize(v.dtype) == 4)
      CopyRange(v, static_cast<uint32_t*>(storage), static_cast<uint32_t*>(dense), b, e, gather);
    else
      CopyRange(v, static_cast<uint16_t*>(storage), static_cast<uint16_t*>(dense), b, e, gather);
  });
}

// True when some two elements of the view may share an address (dims sorted by stride, each
// stride must pass the extent of the smaller ones). Outputs must not overlap themselves.
bool SelfOverlaps(const ViewDesc& v) {
  if (v.numel == 0) return false;
  std::pair<int64_t, int64_t> ds[kMaxTensorRank];  // (stride, dim) for dims > 1
  size_t n = 0;
  for (size_t i = 0; i < v.rank; ++i)
    if (v.dims[i] > 1) ds[n++] = {v.strides[i], v.dims[i]};
  for (size_t i = 1; i < n; ++i)  // insertion sort of <= 8 pairs (std::sort: a GCC bounds warning)
    for (size_t j = i; j > 0 && ds[j] < ds[j - 1]; --j) std::swap(ds[j], ds[j - 1]);
  int64_t extent = 1;
  for (size_t i = 0; i < n; ++i) {
    const auto [s, d] = ds[i];
    if (s < extent) return true;
    extent += s * (d - 1);
  }
  return false;
}

// The four views, copied out of their aclTensors: the plan must not depend on the tensors
// staying alive.
struct SceViews {
  ViewDesc v[4];
  bool selfOverlap[4] = {};
};

aclnnStatus CheckAddrsImpl(const char* api, const SceViews& vs, void* const base[4]) {
  for (int i = 0; i < 4; ++i)
    if (vs.v[i].numel > 0 && base[i] == nullptr)
      return Fail(ACLNN_ERR_PARAM_NULLPTR, api,
                  StrFormat("%s data is null but the tensor has %lld elements", kNames[i],
                            static_cast<long long>(vs.v[i].numel)));
  for (int out : {kLoss, kBackprop})
    if (vs.selfOverlap[out])
      return Fail(ACLNN_ERR_PARAM_INVALID, api,
                  StrFormat("%s view overlaps itself (shape %s, strides %s): an output needs one "
                            "address per element",
                            kNames[out], ShapeToString(vs.v[out].dims, vs.v[out].rank).c_str(),
                            ShapeToString(vs.v[out].strides, vs.v[out].rank).c_str()));
  ByteSpan span[4];
  for (int i = 0; i < 4; ++i) span[i] = ViewSpan(vs.v[i], base[i]);
  for (int out : {kLoss, kBackprop}) {
    for (int other = 0; other < 4; ++other) {
      if (other == out) continue;
      if (out == kLoss && other == kBackprop) continue;  // checked once, as backprop vs loss
      if (out == kBackprop && other == kFeatures &&
          SameView(vs.v[kBackprop], base[kBackprop], vs.v[kFeatures], base[kFeatures]))
        continue;  // the in-place gradient
      if (Overlap(span[out], span[other]))
        return Fail(ACLNN_ERR_PARAM_INVALID, api,
                    StrFormat("%s overlaps %s in memory (outputs must not overlap another tensor; "
                              "only backprop may be exactly the features view, for an in-place "
                              "gradient)",
                              kNames[out], kNames[other]));
    }
  }
  return ACLNN_SUCCESS;
}

class SceOpPlan final : public OpPlan {
 public:
  SceViews views;
  SceTiling tiling;
  SceKernelArgs args;  // strides, flags and tiling; pointers filled per run
  bool gather[4] = {};
  decltype(&scalar::SceRunBlock) run_block = nullptr;
  decltype(&scalar::SceSplitPhase) split_phase = nullptr;

  const char* ApiName() const override { return kApi2; }
  size_t NumInputs() const override { return 2; }
  size_t NumOutputs() const override { return 2; }
  uint64_t WorkspaceSize() const override { return tiling.workspaceBytes; }

  aclnnStatus CheckAddrs(const TensorAddrs& a) const override {
    void* const base[4] = {a.inputs[0], a.inputs[1], a.outputs[0], a.outputs[1]};
    return CheckAddrsImpl(kApi2, views, base);
  }

  void Run(const TensorAddrs& a, void* workspace) const override {
    if (tiling.kernel == SceKernel::kNone) return;
    void* const base[4] = {a.inputs[0], a.inputs[1], a.outputs[0], a.outputs[1]};
    char* ws = static_cast<char*>(workspace);
    const uint64_t ws_off[4] = {tiling.offFeatures, tiling.offLabels, tiling.offLoss, tiling.offBackprop};
    void* ptr[4];
    for (int i = 0; i < 4; ++i) {
      const ViewDesc& v = views.v[i];
      if (gather[i]) {
        ptr[i] = ws + ws_off[i];
        if (i <= kLabels) ParallelCopy(v, base[i], ptr[i], true);
      } else {
        ptr[i] = static_cast<char*>(base[i]) + v.offset * static_cast<int64_t>(ElementSize(v.dtype));
      }
    }
    SceKernelArgs k = args;
    k.x = ptr[kFeatures];
    k.y = ptr[kLabels];
    k.loss = ptr[kLoss];
    k.bp = ptr[kBackprop];
    if (tiling.expScratchStride > 0) k.expScratch = reinterpret_cast<float*>(ws + tiling.offExp);
    ThreadPool& pool = ThreadPool::Global();
    int workers = static_cast<int>(tiling.useCoreNum), wake = static_cast<int>(tiling.wakeCoreNum);
    if (tiling.splitRAcrossCores) {
      k.chunks = reinterpret_cast<SceChunkRecord*>(ws + tiling.offSplit);
      k.rows = reinterpret_cast<SceRowRecord*>(ws + tiling.offSplit +
                                               tiling.splitTasks * sizeof(SceChunkRecord));
      const auto fn = split_phase;
      const int64_t bf = tiling.blockFactor, n = tiling.splitTasks;
      for (int phase = 0; phase < 4; ++phase) {
        int offered;
        if (phase % 2 == 0) {  // per-chunk work in blocks of chunks
          offered = pool.ParallelFor(tiling.realCoreNum, workers, [&](int64_t block) {
            for (int64_t task = block * bf; task < std::min(n, (block + 1) * bf); ++task) fn(k, phase, task);
          }, wake);
        } else {  // per-row folds: A is below the core count, one task per row
          offered = pool.ParallelFor(tiling.A, workers, [&](int64_t row) { fn(k, phase, row); }, wake);
        }
        // The later phases use the workers the first found: to the pool they would look like
        // a run of calls, which wakes helpers a short call left asleep.
        if (phase == 0) workers = wake = std::max(1, offered);
      }
    } else {
      const auto fn = run_block;
      const int64_t pf = tiling.pieceFactor, A = tiling.A;
      float* const nchw = tiling.nchwScratchFloats > 0 ? reinterpret_cast<float*>(ws + tiling.offNchw) : nullptr;
      pool.ParallelFor((A + pf - 1) / pf, workers, [&](int64_t piece, int worker) {
        const int64_t a0 = piece * pf, a1 = std::min(A, a0 + pf);
        if (!nchw) return fn(k, a0, a1);  // no copy of the arguments (and their tiling) per piece
        SceKernelArgs kw = k;
        kw.nchwScratch = nchw + worker * tiling.nchwScratchFloats;  // each worker its own region
        fn(kw, a0, a1);
      }, wake);
    }
    for (int i : {kLoss, kBackprop})
      if (gather[i] && views.v[i].numel > 0) ParallelCopy(views.v[i], base[i], ptr[i], false);
  }
};

std::string Shape(const aclTensor& t) { return ShapeToString(t.dims); }

}  // namespace
}  // namespace aclnn_portable

using namespace aclnn_portable;

extern "C" aclnnStatus aclnnSoftmaxCrossEntropyWithLogitsGetWorkspaceSize(
    const aclTensor* features, const aclTensor* labels, aclTensor* loss, aclTensor* backprop,
    uint64_t* workspaceSize, aclOpExecutor** executor) {
  ClearRecentError();
  const char* api = kApi1;
  // 1. null arguments
  const aclTensor* t[4] = {features, labels, loss, backprop};
  for (int i = 0; i < 4; ++i)
    if (t[i] == nullptr) return Fail(ACLNN_ERR_PARAM_NULLPTR, api, std::string(kNames[i]) + " must not be null");
  if (workspaceSize == nullptr) return Fail(ACLNN_ERR_PARAM_NULLPTR, api, "workspaceSize must not be null");
  if (executor == nullptr) return Fail(ACLNN_ERR_PARAM_NULLPTR, api, "executor must not be null");
  for (int i = 0; i < 4; ++i)
    if (!LiveTensors().Contains(const_cast<aclTensor*>(t[i])))
      return Fail(ACLNN_ERR_PARAM_INVALID, api,
                  std::string(kNames[i]) + " is not a live aclTensor (destroyed or never created)");
  // 2. supported dtypes
  for (int i = 0; i < 4; ++i)
    if (!SupportedDtype(t[i]->dtype))
      return Fail(ACLNN_ERR_PARAM_INVALID, api,
                  StrFormat("%s dtype must be FLOAT, FLOAT16 or BF16, got %s", kNames[i],
                            DataTypeName(t[i]->dtype)));
  // 3. one dtype for all four
  for (int i = 1; i < 4; ++i)
    if (t[i]->dtype != features->dtype)
      return Fail(ACLNN_ERR_PARAM_INVALID, api,
                  StrFormat("%s dtype must equal the features dtype %s, got %s", kNames[i],
                            DataTypeName(features->dtype), DataTypeName(t[i]->dtype)));
  // 4. formats
  for (int i = 0; i < 2; ++i)
    if (t[i]->format != ACL_FORMAT_ND && t[i]->format != ACL_FORMAT_NCHW)
      return Fail(ACLNN_ERR_PARAM_INVALID, api,
                  StrFormat("%s format must be ND or NCHW, got %s", kNames[i], FormatName(t[i]->format)));
  if (labels->format != features->format)
    return Fail(ACLNN_ERR_PARAM_INVALID, api,
                StrFormat("labels format must equal the features format %s, got %s",
                          FormatName(features->format), FormatName(labels->format)));
  const SceLayout layout = features->format == ACL_FORMAT_NCHW ? SceLayout::kNCHW : SceLayout::kND;
  // 5. features and labels shapes
  std::vector<int64_t> shape;
  if (!SceBroadcastShape(layout, features->dims, labels->dims, &shape)) {
    if (layout == SceLayout::kNCHW)
      return Fail(ACLNN_ERR_PARAM_INVALID, api,
                  "features and labels must have the same shape with format NCHW, got features " +
                      Shape(*features) + " and labels " + Shape(*labels));
    return Fail(ACLNN_ERR_PARAM_INVALID, api,
                "features and labels must be broadcastable (same rank, each dimension equal or 1), "
                "got features " + Shape(*features) + " and labels " + Shape(*labels));
  }
  // 6. rank of the layout
  const size_t rank = layout == SceLayout::kNCHW ? 4 : 2;
  if (features->dims.size() != rank)
    return Fail(ACLNN_ERR_PARAM_INVALID, api,
                StrFormat("features with format %s must have rank %zu (%s), got rank %zu %s",
                          FormatName(features->format), rank,
                          rank == 4 ? "[N, C, H, W]" : "[N, C]", features->dims.size(),
                          Shape(*features).c_str()));
  // 7. loss shape
  const std::vector<int64_t> loss_shape = SceLossShape(layout, shape);
  if (loss->dims != loss_shape)
    return Fail(ACLNN_ERR_PARAM_INVALID, api,
                StrFormat("loss shape must be %s (%s of %s %s), got %s",
                          ShapeToString(loss_shape).c_str(), rank == 4 ? "[N, H, W]" : "[N]",
                          features->dims == labels->dims ? "features" : "the broadcast shape",
                          ShapeToString(shape).c_str(), Shape(*loss).c_str()));
  // 8. backprop shape
  if (backprop->dims != shape)
    return Fail(ACLNN_ERR_PARAM_INVALID, api,
                features->dims == labels->dims
                    ? "backprop shape must equal the features shape " + ShapeToString(shape) +
                          ", got " + Shape(*backprop)
                    : "backprop shape must equal the broadcast shape " + ShapeToString(shape) +
                          " of features " + Shape(*features) + " and labels " + Shape(*labels) +
                          ", got " + Shape(*backprop));

  auto plan = std::make_shared<SceOpPlan>();
  for (int i = 0; i < 4; ++i) {
    plan->views.v[i] = DescribeView(*t[i]);
    plan->views.selfOverlap[i] = i >= kLoss && SelfOverlaps(plan->views.v[i]);
  }
  void* const base[4] = {features->data, labels->data, loss->data, backprop->data};
  if (const aclnnStatus st = CheckAddrsImpl(api, plan->views, base); st != ACLNN_SUCCESS) return st;

  // Which views the kernels can address directly.
  SceProblem p;
  p.layout = layout;
  p.dtypeBytes = static_cast<int32_t>(ElementSize(features->dtype));
  p.N = shape[0];
  p.C = shape[1];
  if (layout == SceLayout::kNCHW) {
    p.H = shape[2];
    p.W = shape[3];
  }
  p.featuresN = features->dims[0];
  p.featuresC = features->dims[1];
  p.labelsN = labels->dims[0];
  p.labelsC = labels->dims[1];
  bool gather[4];
  for (int i = 0; i < 4; ++i) {
    const aclTensor& v = *t[i];
    if (layout == SceLayout::kNCHW) gather[i] = !IsContiguous(v);
    else if (i == kLoss) gather[i] = false;  // any stride
    else gather[i] = v.dims[1] > 1 && v.strides[1] != 1;
  }
  p.gatherFeatures = gather[kFeatures];
  p.gatherLabels = gather[kLabels];
  p.scatterLoss = gather[kLoss];
  p.scatterBackprop = gather[kBackprop];
  // The in-place gradient (the only overlap CheckAddrsImpl admits). Addresses bound later may
  // differ; this only picks the store path, never the bits.
  p.backpropAliasesInput =
      SameView(plan->views.v[kBackprop], backprop->data, plan->views.v[kFeatures], features->data);
  plan->tiling = PlanSce(p, CurrentPlatform());
  std::copy(gather, gather + 4, plan->gather);

  SceKernelArgs& k = plan->args;
  k.tiling = plan->tiling;
  k.dtype = features->dtype == ACL_FLOAT ? SceDtype::kFloat
            : features->dtype == ACL_FLOAT16 ? SceDtype::kHalf : SceDtype::kBf16;
  // Element strides of the row (N) dimension as the kernels see them: dense when gathered or
  // NCHW, the view's own stride otherwise; 0 for a row broadcast over N.
  auto row_stride = [&](int i, int64_t rows, int64_t cols) -> int64_t {
    if (layout == SceLayout::kNCHW) return cols;  // dense [N, C, HW]: used for HW == 1 or C == 1
    if (rows == 1) return 0;
    if (gather[i]) return cols;
    return t[i]->strides[0];
  };
  k.xRowStride = row_stride(kFeatures, p.featuresN, p.featuresC);
  k.yRowStride = row_stride(kLabels, p.labelsN, p.labelsC);
  k.bpRowStride = row_stride(kBackprop, p.N, p.C);
  k.lossStride = (layout == SceLayout::kNCHW || gather[kLoss] || p.N == 1) ? 1 : loss->strides[0];
  k.xScalar = p.featuresC == 1 && p.C > 1;
  k.yScalar = p.labelsC == 1 && p.C > 1;
  plan->run_block = ACLNN_ISA_SELECT(SceRunBlock);
  plan->split_phase = ACLNN_ISA_SELECT(SceSplitPhase);

  TensorAddrs addrs;
  addrs.inputs[0] = features->data;
  addrs.inputs[1] = labels->data;
  addrs.outputs[0] = loss->data;
  addrs.outputs[1] = backprop->data;
  *workspaceSize = plan->tiling.workspaceBytes;
  *executor = NewExecutor(std::move(plan), addrs);
  return ACLNN_SUCCESS;
}

extern "C" aclnnStatus aclnnSoftmaxCrossEntropyWithLogits(void* workspace, uint64_t workspaceSize,
                                                          aclOpExecutor* executor,
                                                          aclrtStream stream) {
  ClearRecentError();
  return Launch(kApi2, workspace, workspaceSize, executor, stream);
}
