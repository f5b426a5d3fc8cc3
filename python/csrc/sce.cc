// torch op softmax_cross_entropy_with_logits(features, labels, dim=-1) -> (loss, backprop),
// calling the aclnn two-stage API, with an Autograd-key kernel.
//
// Layouts handed to the library without copying (strides and storage offset passed through):
//   * rank 2, dim = 1 (classes last): ND [N, C];
//   * rank 4, dim = 1: NCHW [N, C, H, W] (native: the library vectorises across H*W);
//   * anything else: viewed as [P, C, Q] (P = product of the dims before `dim`, Q of those
//     after): ND [P, C] when Q = 1, else NCHW [P, C, Q, 1]. This is a view (free) whenever the
//     dims before and after `dim` can be flattened, e.g. for every contiguous tensor; otherwise
//     reshape makes one contiguous copy of that input.
// Features and labels may also be broadcastable (torch rules; TensorFlow's ND patterns [1, C],
// [N, 1], [1, 1] run natively in the library). Outputs are new contiguous tensors: loss has the
// broadcast shape without `dim`, backprop the broadcast shape.
#include <ATen/ExpandUtils.h>
#include <torch/autograd.h>

#include "aclnnop/aclnn_softmax_cross_entropy_with_logits.h"
#include "common.h"

namespace aclnn_portable_torch {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

constexpr const char* kOp = "softmax_cross_entropy_with_logits";

// Validates; returns the broadcast shape of features and labels and `dim` normalised to
// [0, rank).
std::pair<std::vector<int64_t>, int64_t> CheckSceArgs(const at::Tensor& features,
                                                      const at::Tensor& labels, int64_t dim) {
  CheckKernelTensor(kOp, "features", features);
  CheckKernelTensor(kOp, "labels", labels);
  TORCH_CHECK_TYPE(labels.scalar_type() == features.scalar_type(), kOp,
                   ": labels must have the dtype of features (", DtypeStr(features.scalar_type()),
                   "), got ", DtypeStr(labels.scalar_type()));
  std::vector<int64_t> shape = features.sizes().vec();
  if (labels.sizes() != features.sizes()) {
    // torch broadcasting: dims aligned from the right, each pair equal or one of them 1.
    const int64_t rank = std::max(features.dim(), labels.dim());
    shape.assign(rank, 1);
    for (int64_t i = 0; i < rank; ++i) {
      const int64_t fi = i - (rank - features.dim()), li = i - (rank - labels.dim());
      const int64_t fs = fi >= 0 ? features.size(fi) : 1, ls = li >= 0 ? labels.size(li) : 1;
      TORCH_CHECK_VALUE(fs == ls || fs == 1 || ls == 1, kOp,
                        ": features and labels must have the same shape or broadcastable shapes, "
                        "got features ", ShapeStr(features.sizes()), " and labels ",
                        ShapeStr(labels.sizes()));
      shape[i] = fs == 1 ? ls : fs;
    }
  }
  const int64_t rank = static_cast<int64_t>(shape.size());
  TORCH_CHECK_VALUE(rank >= 1, kOp,
                    ": features must have at least 1 dimension (the classes), got a 0-D tensor");
  TORCH_CHECK_VALUE(dim >= -rank && dim < rank, kOp, ": dim must be in [", -rank, ", ", rank - 1,
                    "] for features of shape ", ShapeStr(shape), ", got ", dim);
  return {shape, dim < 0 ? dim + rank : dim};
}

// Runs the library on features/labels already in an ND [A, C] or NCHW [N, C, H, W] view.
void RunKernel(const at::Tensor& features, const at::Tensor& labels, const at::Tensor& loss,
               const at::Tensor& backprop, aclFormat format) {
  AclTensor f(features, format), l(labels, format), lo(loss, ACL_FORMAT_ND),
      bp(backprop, format);
  uint64_t workspace_size = 0;
  aclOpExecutor* executor = nullptr;
  aclnnStatus status = aclnnSoftmaxCrossEntropyWithLogitsGetWorkspaceSize(
      f.get(), l.get(), lo.get(), bp.get(), &workspace_size, &executor);
  TORCH_CHECK(status == ACLNN_SUCCESS,
              "aclnnSoftmaxCrossEntropyWithLogitsGetWorkspaceSize failed with status ", status,
              ": ", aclGetRecentErrMsg());
  at::Tensor workspace;
  if (workspace_size > 0)
    workspace = at::empty({static_cast<int64_t>(workspace_size)}, features.options().dtype(at::kByte));
  status = aclnnSoftmaxCrossEntropyWithLogits(workspace_size ? workspace.data_ptr() : nullptr,
                                              workspace_size, executor, nullptr);
  if (status != ACLNN_SUCCESS) {
    const std::string msg = aclGetRecentErrMsg();
    aclDestroyAclOpExecutor(executor);  // a failed launch leaves the executor alive
    TORCH_CHECK(false, "aclnnSoftmaxCrossEntropyWithLogits failed with status ", status, ": ",
                msg);
  }
}

std::tuple<at::Tensor, at::Tensor> SceCpu(const at::Tensor& features_in,
                                          const at::Tensor& labels_in, int64_t dim) {
  const auto [shape, d] = CheckSceArgs(features_in, labels_in, dim);
  const int64_t rank = static_cast<int64_t>(shape.size());
  std::vector<int64_t> loss_shape = shape;
  loss_shape.erase(loss_shape.begin() + d);
  const int64_t classes = shape[d];

  at::Tensor backprop = at::empty(shape, features_in.options());
  at::Tensor loss = at::empty(loss_shape, features_in.options());
  if (loss.numel() == 0) return {loss, backprop};  // no rows: nothing to compute
  if (classes == 0) return {loss.zero_(), backprop};  // the empty sum; backprop is empty

  // Same-rank ND broadcasting is native in the library (a shared row or per-row scalar read in
  // place); any other broadcast is passed as zero-stride expand() views.
  const bool native_layout = (rank == 2 || rank == 4) && d == 1;
  const bool library_broadcasts = rank == 2 && features_in.dim() == labels_in.dim();
  const bool keep = features_in.sizes() == labels_in.sizes() || (native_layout && library_broadcasts);
  const at::Tensor features = keep ? features_in : features_in.expand(shape);
  const at::Tensor labels = keep ? labels_in : labels_in.expand(shape);
  if (native_layout) {
    RunKernel(features, labels, loss, backprop, rank == 2 ? ACL_FORMAT_ND : ACL_FORMAT_NCHW);
    return {loss, backprop};
  }
  const int64_t before = c10::multiply_integers(shape.begin(), shape.begin() + d);
  const int64_t after = c10::multiply_integers(shape.begin() + d + 1, shape.end());
  if (after == 1) {
    const std::vector<int64_t> nd{before, classes};
    RunKernel(features.reshape(nd), labels.reshape(nd), loss.view({before}), backprop.view(nd),
              ACL_FORMAT_ND);
  } else {
    const std::vector<int64_t> nchw{before, classes, after, 1};
    RunKernel(features.reshape(nchw), labels.reshape(nchw), loss.view({before, after, 1}),
              backprop.view(nchw), ACL_FORMAT_NCHW);
  }
  return {loss, backprop};
}

std::tuple<at::Tensor, at::Tensor> CallSce(const at::Tensor& features, const at::Tensor& labels,
                                           int64_t dim) {
  static auto op = FindOp("aclnn_portable::softmax_cross_entropy_with_logits")
                       .typed<std::tuple<at::Tensor, at::Tensor>(const at::Tensor&,
                                                                 const at::Tensor&, int64_t)>();
  return op.call(features, labels, dim);
}

// d features = grad_loss.unsqueeze(dim) * backprop (+ the softmax Jacobian applied to a gradient
// flowing into backprop, if any); d labels = -grad_loss.unsqueeze(dim) * log_softmax(features)
// (- grad_backprop). Computed in fp32 and rounded once to the inputs' dtype.
class SceFunction : public torch::autograd::Function<SceFunction> {
 public:
  static variable_list forward(AutogradContext* ctx, const at::Tensor& features,
                               const at::Tensor& labels, int64_t dim) {
    at::AutoDispatchBelowADInplaceOrView guard;
    auto [loss, backprop] = CallSce(features, labels, dim);
    const int64_t d = dim < 0 ? dim + backprop.dim() : dim;
    ctx->saved_data["dim"] = d;
    ctx->saved_data["labels_shape"] = labels.sizes().vec();
    ctx->save_for_backward({features, backprop});
    ctx->set_materialize_grads(false);
    return {loss, backprop};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor &features = saved[0], &backprop = saved[1];
    const int64_t d = ctx->saved_data["dim"].toInt();
    const std::vector<int64_t> labels_shape = ctx->saved_data["labels_shape"].toIntVector();
    // softmax runs over the broadcast features
    const auto logits = [&] { return features.to(at::kFloat).expand(backprop.sizes()); };
    const at::Tensor &grad_loss = grads[0], &grad_backprop = grads[1];
    at::Tensor grad_features, grad_labels;
    if (grad_loss.defined()) {
      const at::Tensor g = grad_loss.to(at::kFloat).unsqueeze(d);
      if (ctx->needs_input_grad(0)) grad_features = g * backprop.to(at::kFloat);
      if (ctx->needs_input_grad(1))
        grad_labels = -g * at::log_softmax(logits(), d);
    }
    if (grad_backprop.defined()) {
      const at::Tensor gb = grad_backprop.to(at::kFloat);
      if (ctx->needs_input_grad(0)) {
        const at::Tensor p = at::softmax(logits(), d);
        const at::Tensor term = p * (gb - (p * gb).sum(d, /*keepdim=*/true));
        grad_features = grad_features.defined() ? grad_features + term : term;
      }
      if (ctx->needs_input_grad(1)) grad_labels = grad_labels.defined() ? grad_labels - gb : -gb;
    }
    const auto dtype = features.scalar_type();
    // Broadcast inputs get their gradient summed back to their own shape.
    if (grad_features.defined()) grad_features = at::sum_to(grad_features, features.sizes()).to(dtype);
    if (grad_labels.defined()) grad_labels = at::sum_to(grad_labels, at::IntArrayRef(labels_shape)).to(dtype);
    return {grad_features, grad_labels, at::Tensor()};
  }
};

std::tuple<at::Tensor, at::Tensor> SceAutograd(const at::Tensor& features,
                                               const at::Tensor& labels, int64_t dim) {
  CheckSceArgs(features, labels, dim);
  const variable_list out = SceFunction::apply(features, labels, dim);
  return {out[0], out[1]};
}

}  // namespace

TORCH_LIBRARY_IMPL(aclnn_portable, CPU, m) {
  m.impl("softmax_cross_entropy_with_logits", SceCpu);
}

TORCH_LIBRARY_IMPL(aclnn_portable, Autograd, m) {
  m.impl("softmax_cross_entropy_with_logits", SceAutograd);
}

}  // namespace aclnn_portable_torch
