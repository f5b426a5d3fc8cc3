"""The seed's extension spelling: ``mhc_post_ext.forward(x, h_post)`` -> [B*N, S, D].

Same op as ``aclnn_portable.mhc_post`` (differentiable; bf16 activations use fp32 weights as in
the seed, fp16 activations fp16 weights)."""
from ._ops import mhc_post as _mhc_post


def forward(x, h_post):
    return _mhc_post(x, h_post)
