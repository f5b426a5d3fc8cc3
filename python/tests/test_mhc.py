"""mhc_post / mhc_pre / mhc_post_backward: values (bit-exact where the contract says so, else
against float64), weight-dtype rules, strides, empty shapes, autograd against torch's autograd of
the einsum references, registered torch.ops and the seed's spellings."""
import pytest
import torch

import aclnn_portable as ap
from conftest import KERNEL_DTYPES, assert_bits_equal, assert_within_ulp, make

ops = torch.ops.aclnn_portable

SHAPES = [  # (B, S, D, N): the seed's two, then edge cases
    (2, 64, 256, 4), (4, 32, 128, 8), (1, 1, 1, 1), (3, 5, 7, 3), (2, 3, 13, 9), (1, 2, 15, 64),
    (1, 4, 63, 2), (2, 1, 127, 16),
]
WEIGHT_DTYPE = {torch.float32: torch.float32, torch.float16: torch.float16,
                torch.bfloat16: torch.float32}  # what the kernels take (bf16 keeps fp32 h)


def post_exact(x, h):
    """The contract: one multiply in fp32 of the kernel's weights, rounded once to x's dtype."""
    hw = h.to(WEIGHT_DTYPE[x.dtype]).float()
    b, s, d = x.shape
    return (x.float().unsqueeze(1) * hw.view(1, -1, 1, 1)).to(x.dtype).reshape(b * h.numel(), s, d)


def pre64(x, h):
    hw = h.to(WEIGHT_DTYPE[x.dtype]).double()
    n = h.numel()
    return torch.einsum("bnsd,n->bsd", x.double().reshape(-1, n, *x.shape[1:]), hw)


def grad_h64(grad_out, x, n):
    g = grad_out.double().reshape(x.shape[0], n, *x.shape[1:])
    return torch.einsum("bnsd,bsd->n", g, x.double())


def check_pre_like(actual, ref, dtype, terms):
    """fp32 accumulation of `terms` products per element, rounded once to `dtype`."""
    scale = terms.abs().amax() if terms.numel() else 1.0
    fp32_noise = 4 * 2.0 ** -24 * scale
    if dtype == torch.float32:
        assert ((actual.double() - ref).abs() <= fp32_noise + 2.0 ** -23 * ref.abs()).all()
    else:
        assert_within_ulp(actual, ref, dtype, atol=float(fp32_noise))


@pytest.mark.parametrize("dtype", KERNEL_DTYPES)
@pytest.mark.parametrize("b,s,d,n", SHAPES)
def test_post_bit_exact(dtype, b, s, d, n):
    x = make((b, s, d), dtype)
    h = make((n,), WEIGHT_DTYPE[dtype], 0.1, 1.5)
    out = ap.mhc_post(x, h)
    assert out.shape == (b * n, s, d) and out.dtype == dtype
    assert_bits_equal(out, post_exact(x, h))
    if dtype == torch.float32:  # the seed's reference is exact too
        assert_bits_equal(out, ap.mhc_post_einsum(x, h))


@pytest.mark.parametrize("dtype", KERNEL_DTYPES)
@pytest.mark.parametrize("b,s,d,n", SHAPES)
def test_pre_against_float64(dtype, b, s, d, n):
    x = make((b * n, s, d), dtype)
    h = make((n,), WEIGHT_DTYPE[dtype], -1.0, 1.0)
    out = ap.mhc_pre(x, h)
    assert out.shape == (b, s, d) and out.dtype == dtype
    ref = pre64(x, h)
    check_pre_like(out, ref, dtype, x.double().abs().reshape(b, n, s, d).sum(1))
    torch.testing.assert_close(out.float(), ap.mhc_pre_einsum(x, h).float(),
                               rtol=1e-5 if dtype == torch.float32 else 1e-2, atol=1e-5)


@pytest.mark.parametrize("dtype", KERNEL_DTYPES)
@pytest.mark.parametrize("b,s,d,n", [(2, 64, 256, 4), (4, 32, 128, 8), (1, 1, 1, 1), (3, 5, 7, 3),
                                     (1, 2, 15, 64)])
def test_post_backward_against_float64(dtype, b, s, d, n):
    x = make((b, s, d), dtype)
    g = make((b * n, s, d), dtype)
    h = make((n,), WEIGHT_DTYPE[dtype], -1.0, 1.0)
    grad_x, grad_h = ap.mhc_post_backward(g, x, h)
    assert grad_x.dtype == dtype and grad_h.dtype == torch.float32 and grad_h.shape == (n,)
    check_pre_like(grad_x, pre64(g, h), dtype, g.double().abs().reshape(b, n, s, d).sum(1))
    ref_h = grad_h64(g, x, n)
    bound = (g.double().abs().reshape(b, n, s, d) * x.double().abs().unsqueeze(1)).sum((0, 2, 3))
    assert ((grad_h.double() - ref_h).abs() <= 1e-5 * bound + 1e-30).all()


def test_weight_dtype_rules():
    x16 = make((2, 3, 8), torch.float16)
    h32 = make((4,), torch.float32, 0.1, 1.0)
    # fp16 activations take fp16 weights: fp32 h is rounded to fp16 first
    assert_bits_equal(ap.mhc_post(x16, h32), ap.mhc_post(x16, h32.half()))
    # bf16 activations keep fp32 weights (as the seed); bf16 h is widened exactly
    xb = make((2, 3, 8), torch.bfloat16)
    hb = h32.bfloat16()
    assert_bits_equal(ap.mhc_post(xb, hb), ap.mhc_post(xb, hb.float()))
    assert_bits_equal(ap.mhc_pre(ap.mhc_post(xb, hb), hb), ap.mhc_pre(ap.mhc_post(xb, hb), hb.float()))
    assert ap.mhc_post(xb, h32).dtype == torch.bfloat16


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_non_contiguous_inputs(dtype):
    big = make((3, 10, 12), dtype)
    x = big[:, 2:7, ::2]                      # offset + step
    h = make((8,), WEIGHT_DTYPE[dtype], 0.2, 1.0)[::2]   # strided weights, N = 4
    assert_bits_equal(ap.mhc_post(x, h), post_exact(x.contiguous(), h.contiguous()))
    xt = make((8, 4, 6), dtype).transpose(1, 2)   # [B*N = 8, S = 6, D = 4], N = 4
    check_pre_like(ap.mhc_pre(xt, h), pre64(xt, h), dtype,
                   xt.double().abs().reshape(2, 4, 6, 4).sum(1))
    g = make((8, 6, 8), dtype)[:, :, ::2]
    xb = make((2, 4, 6), dtype).transpose(1, 2)
    grad_x, grad_h = ap.mhc_post_backward(g, xb, h)
    grad_x2, grad_h2 = ap.mhc_post_backward(g.contiguous(), xb.contiguous(), h.contiguous())
    assert_bits_equal(grad_x, grad_x2)
    assert_bits_equal(grad_h, grad_h2)


def test_empty_shapes():
    h = torch.ones(3)
    assert ap.mhc_post(torch.empty(0, 4, 5), h).shape == (0, 4, 5)
    assert ap.mhc_post(torch.empty(2, 0, 5), h).shape == (6, 0, 5)
    assert ap.mhc_pre(torch.empty(6, 4, 0), h).shape == (2, 4, 0)
    grad_x, grad_h = ap.mhc_post_backward(torch.empty(6, 0, 5), torch.empty(2, 0, 5), h)
    assert grad_x.shape == (2, 0, 5) and torch.equal(grad_h, torch.zeros(3))


@pytest.mark.parametrize("dtype", KERNEL_DTYPES)
def test_large_shape(dtype):
    """Larger than the caches (the planner's read-once strategy), N = 4."""
    x = make((16, 64, 4096), dtype)
    h = make((4,), WEIGHT_DTYPE[dtype], 0.1, 1.0)
    assert_bits_equal(ap.mhc_post(x, h), post_exact(x, h))
    g = make((64, 64, 4096), dtype)
    grad_x, grad_h = ap.mhc_post_backward(g, x, h)
    ref_h = grad_h64(g, x, 4)
    bound = (g.double().abs().reshape(16, 4, 64, 4096) * x.double().abs().unsqueeze(1)).sum((0, 2, 3))
    assert ((grad_h.double() - ref_h).abs() <= 1e-5 * bound).all()


def test_deterministic_repeat():
    x, g, h = make((2, 256, 512), torch.float32), make((8, 256, 512), torch.float32), torch.rand(4)
    a = ap.mhc_post_backward(g, x, h)
    b = ap.mhc_post_backward(g, x, h)
    assert_bits_equal(a[0], b[0])
    assert_bits_equal(a[1], b[1])


# ---- autograd ------------------------------------------------------------------------------

def _leaf(t):
    return t.detach().clone().requires_grad_()


@pytest.mark.parametrize("b,s,d,n", [(2, 3, 8, 4), (1, 5, 7, 3), (3, 2, 16, 1)])
def test_post_autograd_matches_torch(b, s, d, n):
    x, h = _leaf(make((b, s, d), torch.float32)), _leaf(make((n,), torch.float32, 0.1, 1.0))
    xr, hr = _leaf(x), _leaf(h)
    w = torch.randn(b * n, s, d)
    (ap.mhc_post(x, h) * w).sum().backward()
    (ap.mhc_post_einsum(xr, hr) * w).sum().backward()
    torch.testing.assert_close(x.grad, xr.grad, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(h.grad, hr.grad, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("b,s,d,n", [(2, 3, 8, 4), (1, 5, 7, 3), (3, 2, 16, 1)])
def test_pre_autograd_matches_torch(b, s, d, n):
    x, h = _leaf(make((b * n, s, d), torch.float32)), _leaf(make((n,), torch.float32, 0.1, 1.0))
    xr, hr = _leaf(x), _leaf(h)
    w = torch.randn(b, s, d)
    (ap.mhc_pre(x, h) * w).sum().backward()
    (ap.mhc_pre_einsum(xr, hr) * w).sum().backward()
    torch.testing.assert_close(x.grad, xr.grad, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(h.grad, hr.grad, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("which", ["x", "h"])
@pytest.mark.parametrize("op", ["post", "pre"])
def test_autograd_single_input(which, op):
    n = 4
    x = make((2 * n, 3, 8) if op == "pre" else (2, 3, 8), torch.float32)
    h = make((n,), torch.float32, 0.1, 1.0)
    fn, ref = (ap.mhc_pre, ap.mhc_pre_einsum) if op == "pre" else (ap.mhc_post, ap.mhc_post_einsum)
    x.requires_grad_(which == "x")
    h.requires_grad_(which == "h")
    fn(x, h).square().sum().backward()
    leaf = x if which == "x" else h
    got = leaf.grad
    leaf.grad = None
    ref(x, h).square().sum().backward()
    torch.testing.assert_close(got, leaf.grad, rtol=1e-5, atol=1e-5)
    other = h if which == "x" else x
    assert other.grad is None


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_autograd_half_activations_fp32_weights(dtype):
    x, h = _leaf(make((2, 4, 16), dtype)), _leaf(make((4,), torch.float32, 0.1, 1.0))
    y = ap.mhc_pre(ap.mhc_post(x, h), h)
    y.float().square().sum().backward()
    assert x.grad.dtype == dtype and h.grad.dtype == torch.float32
    x32, h32 = _leaf(x.float()), _leaf(h)
    ap.mhc_pre_einsum(ap.mhc_post_einsum(x32, h32), h32).square().sum().backward()
    torch.testing.assert_close(x.grad.float(), x32.grad, rtol=3e-2, atol=3e-2)
    torch.testing.assert_close(h.grad, h32.grad, rtol=3e-2, atol=3e-1)


def test_registered_ops_are_differentiable():
    x, h = _leaf(make((2, 3, 8), torch.float32)), _leaf(make((4,), torch.float32, 0.1, 1.0))
    out = ops.mhc_pre(ops.mhc_post(x, h), h)
    assert out.grad_fn is not None
    out.sum().backward()
    xr, hr = _leaf(x), _leaf(h)
    ap.mhc_pre_einsum(ap.mhc_post_einsum(xr, hr), hr).sum().backward()
    torch.testing.assert_close(x.grad, xr.grad, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(h.grad, hr.grad, rtol=1e-5, atol=1e-4)
    gx, gh = ops.mhc_post_backward(torch.ones(8, 3, 8), x.detach(), h.detach())
    assert gx.shape == (2, 3, 8) and gh.shape == (4,)


def test_double_backward_is_refused():
    x, h = _leaf(make((2, 3, 8), torch.float32)), _leaf(make((4,), torch.float32, 0.1, 1.0))
    out = ap.mhc_post(x, h).square().sum()
    with pytest.raises(RuntimeError, match="double backward"):
        torch.autograd.grad(out, (x, h), create_graph=True)


def test_no_grad_and_inference_mode():
    x, h = _leaf(make((2, 3, 8), torch.float32)), _leaf(make((4,), torch.float32, 0.1, 1.0))
    with torch.no_grad():
        assert ap.mhc_post(x, h).grad_fn is None
    with torch.inference_mode():
        assert_bits_equal(ap.mhc_post(x.detach(), h.detach()), post_exact(x.detach(), h.detach()))


# ---- seed spellings ------------------------------------------------------------------------

def test_seed_spellings():
    x, h = make((2, 64, 256), torch.float32), make((4,), torch.float32, 0.1, 1.0)
    h = h / h.sum()  # the seed normalises the weights
    out = ap.mhc_post_ext.forward(x, h)
    assert out.shape == (8, 64, 256)
    ref = torch.einsum("bsd,n->bnsd", x, h).reshape(2 * 4, -1, x.size(-1))
    assert_bits_equal(out, ref)
    assert_bits_equal(ap.mhc_post_einsum(x, h), ref)
    from aclnn_portable.mhc_post_ops import mhc_post, mhc_post_einsum
    assert_bits_equal(mhc_post(x, h), mhc_post_einsum(x, h))
    with pytest.raises(ValueError, match="num_streams"):
        ap.mhc_post_einsum(x, torch.empty(0))


def test_ops_usable_from_torchscript():
    @torch.jit.script
    def block(x: torch.Tensor, h_post: torch.Tensor, h_pre: torch.Tensor) -> torch.Tensor:
        return torch.ops.aclnn_portable.mhc_pre(torch.ops.aclnn_portable.mhc_post(x, h_post), h_pre)

    x, hp, hq = make((2, 3, 8), torch.float32), torch.rand(4), torch.rand(4)
    assert_bits_equal(block(x, hp, hq), ap.mhc_pre(ap.mhc_post(x, hp), hq))
