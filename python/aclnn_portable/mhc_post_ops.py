"""The seed's wrapper module (mhc_post_ops.py): the kernel path and the einsum reference."""
from ._ops import mhc_post, mhc_pre
from .reference import mhc_post_einsum, mhc_pre_einsum

__all__ = ["mhc_post", "mhc_pre", "mhc_post_einsum", "mhc_pre_einsum"]
