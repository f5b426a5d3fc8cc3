"""PyTorch front end of aclnn-portable (CPU).

Functions (all differentiable, backed by the C library's kernels):

* ``softmax_cross_entropy_with_logits(features, labels, dim=-1) -> (loss, backprop)``
* ``mhc_post(x, h)``: ``[B, S, D] x [N] -> [B*N, S, D]``
* ``mhc_pre(x, h)``: ``[B*N, S, D] x [N] -> [B, S, D]``
* ``mhc_post_backward(grad_out, x, h) -> (grad_x, grad_h)`` (the fused backward kernel)

Pure-torch references: ``mhc_post_einsum``, ``mhc_pre_einsum``,
``softmax_cross_entropy_with_logits_reference``. The seed's spellings are kept:
``aclnn_portable.mhc_post_ext.forward(x, h)`` and ``aclnn_portable.mhc_post_ops``.

The ops are registered with the dispatcher as ``torch.ops.aclnn_portable.<name>``.
"""
from ._extension import library_path, load as _load

_load()

from ._ops import (  # noqa: E402
    mhc_post,
    mhc_post_backward,
    mhc_pre,
    softmax_cross_entropy_with_logits,
)
from .reference import (  # noqa: E402
    mhc_post_einsum,
    mhc_pre_einsum,
    softmax_cross_entropy_with_logits_reference,
)
from . import mhc_post_ext, mhc_post_ops  # noqa: E402

__version__ = "0.1.0"

__all__ = [
    "softmax_cross_entropy_with_logits",
    "mhc_post",
    "mhc_pre",
    "mhc_post_backward",
    "mhc_post_einsum",
    "mhc_pre_einsum",
    "softmax_cross_entropy_with_logits_reference",
    "mhc_post_ext",
    "mhc_post_ops",
    "library_path",
]
