// The operator library: schemas of every op of aclnn_portable. The CPU and Autograd kernels are
// registered next to their code (sce.cc, mhc.cc).
#include <torch/library.h>

TORCH_LIBRARY(aclnn_portable, m) {
  m.def("softmax_cross_entropy_with_logits(Tensor features, Tensor labels, int dim=-1)"
        " -> (Tensor loss, Tensor backprop)");
  m.def("mhc_post(Tensor x, Tensor h) -> Tensor");
  m.def("mhc_pre(Tensor x, Tensor h) -> Tensor");
  // Helper for the backward passes: grad_x = mhc_pre(grad_out, h), grad_h float32 [N].
  m.def("mhc_post_backward(Tensor grad_out, Tensor x, Tensor h)"
        " -> (Tensor grad_x, Tensor grad_h)");
}
