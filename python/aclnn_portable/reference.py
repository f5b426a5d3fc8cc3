"""Pure-torch references (differentiable with torch's own autograd), for checking the kernels.

The mHC references compute in float32 for half-precision inputs (float64 if an input is
float64) and round once to x's dtype, which is what the kernels do."""
import torch


def _compute_dtype(*tensors):
    dtype = tensors[0].dtype
    for t in tensors[1:]:
        dtype = torch.promote_types(dtype, t.dtype)
    return torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype


def _check_num_streams(h):
    if h.dim() != 1:
        raise ValueError(f"h must be a 1-D tensor [num_streams], got shape {list(h.shape)}")
    num_streams = h.size(0)
    if num_streams <= 0:
        raise ValueError(f"num_streams must be > 0, got {num_streams}")
    return num_streams


def mhc_post_einsum(x, h_post):
    """The seed's reference: einsum('bsd,n->bnsd').reshape(B*N, S, D)."""
    batch = x.size(0)
    num_streams = _check_num_streams(h_post)
    dtype = _compute_dtype(x, h_post)
    out = torch.einsum("bsd,n->bnsd", x.to(dtype), h_post.to(dtype))
    return out.reshape(batch * num_streams, -1, x.size(-1)).to(x.dtype)


def mhc_pre_einsum(x, h_pre):
    """einsum('bnsd,n->bsd') of x viewed as [B, N, S, D]."""
    num_streams = _check_num_streams(h_pre)
    if x.dim() != 3 or x.size(0) % num_streams != 0:
        raise ValueError(f"x must be [batch * num_streams, seq_len, dim] with num_streams = "
                         f"{num_streams}, got shape {list(x.shape)}")
    dtype = _compute_dtype(x, h_pre)
    xs = x.to(dtype).reshape(x.size(0) // num_streams, num_streams, x.size(1), x.size(2))
    return torch.einsum("bnsd,n->bsd", xs, h_pre.to(dtype)).to(x.dtype)


def softmax_cross_entropy_with_logits_reference(features, labels, dim=-1):
    """(loss, backprop) by log_softmax, in float32 (float64 for float64 inputs), rounded to the
    inputs' dtype."""
    dtype = _compute_dtype(features, labels)
    f, y = features.to(dtype), labels.to(dtype)
    log_p = torch.log_softmax(f, dim)
    loss = -(y * log_p).sum(dim)
    backprop = log_p.exp() - y
    return loss.to(features.dtype), backprop.to(features.dtype)
