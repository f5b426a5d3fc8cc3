// torch ops for the mHC stream operators: mhc_post, mhc_pre and the helper mhc_post_backward
// (CPU kernels calling include/mhc/mhc.h), plus Autograd-key kernels so that
// torch.ops.aclnn_portable.mhc_post / mhc_pre are differentiable in x and h.
//
// Weight dtype rules (the C entry points take fp32 h for fp32 and bf16 activations, fp16 h for
// fp16 activations): h may be torch.float32 or x's dtype; it is converted to the kernel's
// weight dtype (bf16 h -> fp32 is exact; fp32 h -> fp16 for fp16 activations rounds h to
// nearest-even). Outputs have x's dtype; grad_h has h's dtype (accumulated in fp32).
#include <torch/autograd.h>

#include "common.h"
#include "mhc/mhc.h"

namespace aclnn_portable_torch {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

struct MhcDims {
  int64_t batch, seq_len, dim, num_streams;
};

// The weights as the kernel for activations of dtype `x_dtype` takes them.
at::ScalarType KernelWeightDtype(at::ScalarType x_dtype) {
  return x_dtype == at::kHalf ? at::kHalf : at::kFloat;
}

void CheckWeights(const char* op, const at::Tensor& x, const at::Tensor& h) {
  TORCH_CHECK(h.defined(), op, ": h must be a tensor, got None");
  TORCH_CHECK(h.device().is_cpu(), op,
              ": h must be a CPU tensor (aclnn_portable runs on the host), got a tensor on ",
              h.device().str());
  TORCH_CHECK_TYPE(h.layout() == at::kStrided, op, ": h must be a dense (strided) tensor");
  TORCH_CHECK_TYPE(h.scalar_type() == at::kFloat || h.scalar_type() == x.scalar_type(), op,
                   ": h must have dtype torch.float32 or the dtype of x (", DtypeStr(x.scalar_type()),
                   "), got ", DtypeStr(h.scalar_type()));
  TORCH_CHECK_VALUE(h.dim() == 1, op, ": h must be a 1-D tensor [num_streams], got a ", h.dim(),
                    "-D tensor of shape ", ShapeStr(h.sizes()));
  TORCH_CHECK_VALUE(h.size(0) >= 1, op, ": num_streams = h.shape[0] must be >= 1, got ",
                    h.size(0));
}

void CheckRank3(const char* op, const char* name, const char* expected, const at::Tensor& t) {
  TORCH_CHECK_VALUE(t.dim() == 3, op, ": ", name, " must be a 3-D tensor ", expected, ", got a ",
                    t.dim(), "-D tensor of shape ", ShapeStr(t.sizes()));
}

// x [B, S, D], h [N] -> dims; output [B*N, S, D] must fit in int64.
MhcDims CheckPostArgs(const char* op, const at::Tensor& x, const at::Tensor& h) {
  CheckKernelTensor(op, "x", x);
  CheckRank3(op, "x", "[batch, seq_len, dim]", x);
  CheckWeights(op, x, h);
  MhcDims d{x.size(0), x.size(1), x.size(2), h.size(0)};
  const int64_t rows = CheckedMul(op, "batch * num_streams", d.batch, d.num_streams);
  CheckedMul(op, "output elements", rows, CheckedMul(op, "seq_len * dim", d.seq_len, d.dim));
  return d;
}

// x [B*N, S, D], h [N] -> dims.
MhcDims CheckPreArgs(const char* op, const char* x_name, const at::Tensor& x, const at::Tensor& h) {
  CheckKernelTensor(op, x_name, x);
  CheckRank3(op, x_name, "[batch * num_streams, seq_len, dim]", x);
  CheckWeights(op, x, h);
  const int64_t n = h.size(0);
  TORCH_CHECK_VALUE(x.size(0) % n == 0, op, ": ", x_name,
                    ".shape[0] = batch * num_streams must be divisible by num_streams = "
                    "h.shape[0] = ", n, ", got ", x_name, " of shape ", ShapeStr(x.sizes()));
  return MhcDims{x.size(0) / n, x.size(1), x.size(2), n};
}

bool Empty(const MhcDims& d) { return d.batch == 0 || d.seq_len == 0 || d.dim == 0; }

using MhcFn = void (*)(uint32_t, void*, uint8_t*, uint8_t*, uint8_t*, int64_t, int64_t, int64_t,
                       int64_t);
using MhcBackwardFn = void (*)(uint32_t, void*, uint8_t*, uint8_t*, uint8_t*, uint8_t*, uint8_t*,
                               int64_t, int64_t, int64_t, int64_t);

// The entry point for the activation dtype, with its name for error messages.
template <typename Fn>
struct Entry {
  Fn fn;
  const char* name;
};
template <typename Fn>
Entry<Fn> ByDtype(at::ScalarType t, Entry<Fn> fp32, Entry<Fn> fp16, Entry<Fn> bf16) {
  return t == at::kFloat ? fp32 : t == at::kHalf ? fp16 : bf16;
}
#define ACLNN_MHC_ENTRIES(base) {base##_fp32, #base "_fp32"}, {base##_fp16, #base "_fp16"}, \
                                {base##_bf16, #base "_bf16"}

at::Tensor KernelWeights(const at::Tensor& h, at::ScalarType x_dtype) {
  return h.to(KernelWeightDtype(x_dtype)).contiguous();
}

// ---- CPU kernels ----------------------------------------------------------------------------

at::Tensor MhcPostCpu(const at::Tensor& x, const at::Tensor& h) {
  const MhcDims d = CheckPostArgs("mhc_post", x, h);
  at::Tensor out = at::empty({d.batch * d.num_streams, d.seq_len, d.dim}, x.options());
  if (Empty(d)) return out;
  const at::Tensor xc = x.contiguous();
  const at::Tensor hw = KernelWeights(h, x.scalar_type());
  const auto entry = ByDtype<MhcFn>(x.scalar_type(), ACLNN_MHC_ENTRIES(mhc_post_do));
  entry.fn(0, nullptr, Bytes(xc), Bytes(hw), Bytes(out), d.batch, d.seq_len, d.dim, d.num_streams);
  ThrowIfCallFailed(entry.name);
  return out;
}

at::Tensor MhcPreCpu(const at::Tensor& x, const at::Tensor& h) {
  const MhcDims d = CheckPreArgs("mhc_pre", "x", x, h);
  at::Tensor out = at::empty({d.batch, d.seq_len, d.dim}, x.options());
  if (Empty(d)) return out;
  const at::Tensor xc = x.contiguous();
  const at::Tensor hw = KernelWeights(h, x.scalar_type());
  const auto entry = ByDtype<MhcFn>(x.scalar_type(), ACLNN_MHC_ENTRIES(mhc_pre_do));
  entry.fn(0, nullptr, Bytes(xc), Bytes(hw), Bytes(out), d.batch, d.seq_len, d.dim, d.num_streams);
  ThrowIfCallFailed(entry.name);
  return out;
}

// grad_out [B*N, S, D], x [B, S, D], h [N] -> (grad_x = mhc_pre(grad_out, h) [B, S, D] in x's
// dtype, grad_h [N] float32 with grad_h[s] = sum grad_out[b*N + s] * x[b]).
std::tuple<at::Tensor, at::Tensor> MhcPostBackwardCpu(const at::Tensor& grad_out,
                                                      const at::Tensor& x, const at::Tensor& h) {
  const char* op = "mhc_post_backward";
  const MhcDims d = CheckPreArgs(op, "grad_out", grad_out, h);
  CheckKernelTensor(op, "x", x);
  TORCH_CHECK_TYPE(x.scalar_type() == grad_out.scalar_type(), op,
                   ": x must have the dtype of grad_out (", DtypeStr(grad_out.scalar_type()),
                   "), got ", DtypeStr(x.scalar_type()));
  const std::vector<int64_t> x_shape{d.batch, d.seq_len, d.dim};
  TORCH_CHECK_VALUE(x.sizes() == at::IntArrayRef(x_shape), op, ": x must have shape ",
                    ShapeStr(x_shape), " (grad_out ", ShapeStr(grad_out.sizes()),
                    " with num_streams = ", d.num_streams, "), got ", ShapeStr(x.sizes()));
  at::Tensor grad_x = at::empty(x_shape, x.options());
  if (Empty(d)) return {grad_x, at::zeros({d.num_streams}, h.options().dtype(at::kFloat))};
  at::Tensor grad_h = at::empty({d.num_streams}, h.options().dtype(at::kFloat));
  const at::Tensor gc = grad_out.contiguous();
  const at::Tensor xc = x.contiguous();
  const at::Tensor hw = KernelWeights(h, x.scalar_type());
  const auto entry =
      ByDtype<MhcBackwardFn>(x.scalar_type(), ACLNN_MHC_ENTRIES(mhc_post_backward_do));
  entry.fn(0, nullptr, Bytes(gc), Bytes(xc), Bytes(hw), Bytes(grad_x), Bytes(grad_h), d.batch,
     d.seq_len, d.dim, d.num_streams);
  ThrowIfCallFailed(entry.name);
  return {grad_x, grad_h};
}

// ---- dispatcher handles ---------------------------------------------------------------------

at::Tensor CallPost(const at::Tensor& x, const at::Tensor& h) {
  static auto op = FindOp("aclnn_portable::mhc_post")
                       .typed<at::Tensor(const at::Tensor&, const at::Tensor&)>();
  return op.call(x, h);
}
at::Tensor CallPre(const at::Tensor& x, const at::Tensor& h) {
  static auto op = FindOp("aclnn_portable::mhc_pre")
                       .typed<at::Tensor(const at::Tensor&, const at::Tensor&)>();
  return op.call(x, h);
}
std::tuple<at::Tensor, at::Tensor> CallPostBackward(const at::Tensor& g, const at::Tensor& x,
                                                    const at::Tensor& h) {
  static auto op = FindOp("aclnn_portable::mhc_post_backward")
                       .typed<std::tuple<at::Tensor, at::Tensor>(
                           const at::Tensor&, const at::Tensor&, const at::Tensor&)>();
  return op.call(g, x, h);
}

// ---- autograd -------------------------------------------------------------------------------
// Backward goes through our kernels: post's grad_x is mhc_pre(grad, h), pre's grad_x is
// mhc_post(grad, h); both grad_h are the deterministic fp32 reduction of mhc_post_backward
// (for pre with the roles of (grad_out, x) swapped: grad_h[s] = sum grad[b] * x[b*N + s]).
// Double backward is not supported (grad_h is not differentiable).

class MhcPostFunction : public torch::autograd::Function<MhcPostFunction> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& h) {
    at::AutoDispatchBelowADInplaceOrView guard;
    ctx->save_for_backward({x, h});
    return CallPost(x, h);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor &x = saved[0], &h = saved[1];
    const at::Tensor g = grads[0].to(x.scalar_type());
    if (!ctx->needs_input_grad(1)) return {CallPre(g, h), at::Tensor()};
    auto [grad_x, grad_h] = CallPostBackward(g, x, h);
    return {ctx->needs_input_grad(0) ? grad_x : at::Tensor(), grad_h.to(h.scalar_type())};
  }
};

class MhcPreFunction : public torch::autograd::Function<MhcPreFunction> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& h) {
    at::AutoDispatchBelowADInplaceOrView guard;
    ctx->save_for_backward({x, h});
    return CallPre(x, h);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor &x = saved[0], &h = saved[1];
    const at::Tensor g = grads[0].to(x.scalar_type());
    at::Tensor grad_x, grad_h;
    if (ctx->needs_input_grad(0)) grad_x = CallPost(g, h);
    // mhc_post_backward(grad_out := x, x := g) also computes mhc_pre(x, h), which is discarded.
    if (ctx->needs_input_grad(1)) grad_h = std::get<1>(CallPostBackward(x, g, h)).to(h.scalar_type());
    return {grad_x, grad_h};
  }
};

// The Autograd kernels validate first, so errors name our op even for tensors that would never
// reach a CPU kernel (a CUDA tensor, say).
at::Tensor MhcPostAutograd(const at::Tensor& x, const at::Tensor& h) {
  CheckPostArgs("mhc_post", x, h);
  return MhcPostFunction::apply(x, h);
}
at::Tensor MhcPreAutograd(const at::Tensor& x, const at::Tensor& h) {
  CheckPreArgs("mhc_pre", "x", x, h);
  return MhcPreFunction::apply(x, h);
}
// The helper is a backward formula, not differentiable itself: refuse instead of returning
// results that silently carry no gradient (this is what a double backward reaches).
std::tuple<at::Tensor, at::Tensor> MhcPostBackwardAutograd(const at::Tensor& grad_out,
                                                           const at::Tensor& x,
                                                           const at::Tensor& h) {
  const bool wants_graph = at::GradMode::is_enabled() &&
                           (grad_out.requires_grad() || x.requires_grad() || h.requires_grad());
  TORCH_CHECK(!wants_graph,
              "mhc_post_backward: not differentiable (double backward through mhc_post / "
              "mhc_pre is not supported); call it under torch.no_grad() or with inputs that do "
              "not require grad");
  at::AutoDispatchBelowADInplaceOrView guard;
  return CallPostBackward(grad_out, x, h);
}

}  // namespace

TORCH_LIBRARY_IMPL(aclnn_portable, CPU, m) {
  m.impl("mhc_post", MhcPostCpu);
  m.impl("mhc_pre", MhcPreCpu);
  m.impl("mhc_post_backward", MhcPostBackwardCpu);
}

TORCH_LIBRARY_IMPL(aclnn_portable, Autograd, m) {
  m.impl("mhc_post", MhcPostAutograd);
  m.impl("mhc_pre", MhcPreAutograd);
  m.impl("mhc_post_backward", MhcPostBackwardAutograd);
}

}  // namespace aclnn_portable_torch
