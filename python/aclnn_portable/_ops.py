"""Python entry points: argument-type checks here, everything else (device, dtype, rank, shape,
num_streams) in the C++ ops, which raise TypeError / ValueError / RuntimeError before any kernel
runs, whether called from here or through torch.ops.aclnn_portable directly."""
import torch

_ops = torch.ops.aclnn_portable


def _require_tensor(op, name, value):
    if not isinstance(value, torch.Tensor):
        raise TypeError(f"{op}: {name} must be a torch.Tensor, got {type(value).__name__}")


def _require_int(op, name, value):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{op}: {name} must be an int, got {type(value).__name__} {value!r}")


def softmax_cross_entropy_with_logits(features, labels, dim=-1):
    """TensorFlow's SoftmaxCrossEntropyWithLogits: per row along ``dim``,
    ``loss = sum(labels * (logsumexp(features) - features))`` and
    ``backprop = softmax(features) - labels``, computed in fp32 in one fused pass.

    ``features`` and ``labels``: same shape, same dtype (float32, float16 or bfloat16), CPU, any
    strides. Returns ``(loss, backprop)``: loss has the shape of features without ``dim``,
    backprop the shape of features, both in the inputs' dtype. 2-D with ``dim=-1`` (ND) and 4-D
    with ``dim=1`` (NCHW) run natively on the given strides; any other ``dim`` is handled as a
    ``[P, C, Q]`` view (free for contiguous inputs; one copy for inputs whose outer or inner dims
    cannot be flattened). Differentiable in features and labels.
    """
    op = "softmax_cross_entropy_with_logits"
    _require_tensor(op, "features", features)
    _require_tensor(op, "labels", labels)
    _require_int(op, "dim", dim)
    loss, backprop = _ops.softmax_cross_entropy_with_logits(features, labels, dim)
    return loss, backprop


def mhc_post(x, h):
    """mHC post mapping: ``out[b*N + s] = x[b] * h[s]``; x ``[B, S, D]``, h ``[N]`` -> out
    ``[B*N, S, D]`` in x's dtype. h may be float32 or x's dtype (fp16 activations use fp16
    weights: float32 h is rounded to fp16 first). Differentiable in x and h."""
    _require_tensor("mhc_post", "x", x)
    _require_tensor("mhc_post", "h", h)
    return _ops.mhc_post(x, h)


def mhc_pre(x, h):
    """mHC pre mapping: ``out[b] = sum_s x[b*N + s] * h[s]`` (fp32 accumulation); x
    ``[B*N, S, D]``, h ``[N]`` -> out ``[B, S, D]`` in x's dtype. Same weight rules as
    mhc_post. Differentiable in x and h."""
    _require_tensor("mhc_pre", "x", x)
    _require_tensor("mhc_pre", "h", h)
    return _ops.mhc_pre(x, h)


def mhc_post_backward(grad_out, x, h):
    """The fused backward kernel of mhc_post: ``grad_x = mhc_pre(grad_out, h)`` (x's dtype) and
    ``grad_h[s] = sum_{b,t,d} grad_out[b*N + s, t, d] * x[b, t, d]`` (float32, a deterministic
    blocked reduction). Not differentiable itself."""
    for name, value in (("grad_out", grad_out), ("x", x), ("h", h)):
        _require_tensor("mhc_post_backward", name, value)
    grad_x, grad_h = _ops.mhc_post_backward(grad_out, x, h)
    return grad_x, grad_h
