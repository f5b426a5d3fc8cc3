import math

import pytest
import torch

import aclnn_portable  # noqa: F401  (registers torch.ops.aclnn_portable)

KERNEL_DTYPES = [torch.float32, torch.float16, torch.bfloat16]

# Explicit mantissa step and smallest normal of each dtype (for ulp-based tolerances).
_EPS = {torch.float16: 2.0 ** -10, torch.bfloat16: 2.0 ** -7, torch.float32: 2.0 ** -23}
_MIN_NORMAL = {torch.float16: 2.0 ** -14, torch.bfloat16: 2.0 ** -126, torch.float32: 2.0 ** -126}


def ulp(reference, dtype):
    """The spacing of `dtype` numbers at |reference| (a float64 tensor)."""
    mag = reference.abs().clamp_min(_MIN_NORMAL[dtype])
    return torch.exp2(torch.floor(torch.log2(mag))) * _EPS[dtype]


def assert_within_ulp(actual, reference, dtype, ulps=1.0, atol=0.0):
    """|actual - reference| <= ulps * ulp(reference) + atol, elementwise; reference float64."""
    actual = actual.double()
    err = (actual - reference).abs()
    tol = ulps * ulp(reference, dtype) + atol
    bad = ~(err <= tol)
    if bad.any():
        i = int(bad.flatten().nonzero()[0])
        raise AssertionError(
            f"{int(bad.sum())} of {bad.numel()} elements differ: e.g. actual "
            f"{actual.flatten()[i].item()!r} reference {reference.flatten()[i].item()!r} "
            f"(tolerance {tol.flatten()[i].item():.3g})")


def assert_bits_equal(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, b.dtype, a.shape, b.shape)
    view = torch.int32 if a.element_size() == 4 else torch.int16
    ai, bi = a.contiguous().view(view), b.contiguous().view(view)
    diff = (ai != bi)
    assert not diff.any(), f"{int(diff.sum())} of {diff.numel()} elements differ in bits"


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(1234)
    yield


def make(shape, dtype, low=-3.0, high=3.0):
    return (torch.rand(shape, dtype=torch.float64) * (high - low) + low).to(dtype)


def soft_labels(shape, dim, dtype):
    return torch.softmax(torch.randn(shape, dtype=torch.float64) * 2, dim).to(dtype)
