"""softmax_cross_entropy_with_logits: values against a float64 reference, layouts, strides,
autograd against torch's autograd of the pure-torch formula, torch.ops registration."""
import pytest
import torch

import aclnn_portable as ap
from conftest import KERNEL_DTYPES, assert_within_ulp, make, soft_labels

sce_op = torch.ops.aclnn_portable.softmax_cross_entropy_with_logits


def reference64(features, labels, dim):
    """TensorFlow's formulas in float64 on the (already rounded) inputs."""
    f, y = features.double(), labels.double()
    m = f.amax(dim, keepdim=True)
    z = f - m
    log_s = torch.log(torch.exp(z).sum(dim, keepdim=True))
    loss = (y * (log_s - z)).sum(dim)
    backprop = torch.exp(z - log_s) - y
    return loss, backprop


def check_values(features, labels, dim=-1):
    loss, backprop = ap.softmax_cross_entropy_with_logits(features, labels, dim)
    ref_loss, ref_bp = reference64(features, labels, dim)
    assert loss.dtype == features.dtype and backprop.dtype == features.dtype
    assert loss.shape == ref_loss.shape and backprop.shape == features.shape
    dtype = features.dtype
    if dtype == torch.float32:
        scale = ref_loss.abs().clamp_min(1.0)
        assert ((loss.double() - ref_loss).abs() <= 1e-5 * scale).all()
        assert ((backprop.double() - ref_bp).abs() <= 2e-6).all()
    else:
        # Widened to fp32, rounded once: within 1 ulp of the fp64 result (plus fp32 noise).
        assert_within_ulp(loss, ref_loss, dtype, atol=1e-5 * ref_loss.abs().max().item())
        assert_within_ulp(backprop, ref_bp, dtype, atol=2e-6)
    return loss, backprop


@pytest.mark.parametrize("dtype", KERNEL_DTYPES)
@pytest.mark.parametrize("n,c", [(1, 1), (3, 2), (7, 5), (16, 16), (5, 33), (64, 1000), (2, 4099),
                                 (4096, 3), (2, 131072)])
def test_nd_values(dtype, n, c):
    check_values(make((n, c), dtype), soft_labels((n, c), -1, dtype))


@pytest.mark.parametrize("dtype", KERNEL_DTYPES)
@pytest.mark.parametrize("shape", [(2, 5, 3, 4), (1, 19, 8, 8), (3, 1, 2, 2), (2, 7, 1, 9)])
def test_nchw_values(dtype, shape):
    check_values(make(shape, dtype), soft_labels(shape, 1, dtype), dim=1)


@pytest.mark.parametrize("shape,dim", [((10,), 0), ((10,), -1), ((6, 4), 0), ((3, 6, 5), 1),
                                       ((3, 6, 5), -1), ((3, 6, 5), 0), ((2, 3, 4, 5), -1),
                                       ((2, 3, 4, 5), 2), ((2, 3, 4, 5), 0), ((2, 2, 3, 2, 3), 3)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_any_dim(shape, dim, dtype):
    loss, backprop = check_values(make(shape, dtype), soft_labels(shape, dim, dtype), dim)
    expected = list(shape)
    del expected[dim]
    assert list(loss.shape) == expected


def test_tensorflow_known_values():
    logits = torch.tensor([[1., 1., 1., 1.], [1., 2., 3., 4.]])
    labels = torch.tensor([[0., 0., 0., 1.], [0., .5, .5, 0.]])
    loss, backprop = ap.softmax_cross_entropy_with_logits(logits, labels)
    torch.testing.assert_close(loss, torch.tensor([1.3862944, 1.9401897]))
    torch.testing.assert_close(backprop, torch.tensor(
        [[.25, .25, .25, -.75], [.0320586, -.4128557, -.2631172, .6439143]]))
    # a single class: loss 0, backprop 1 - y exactly
    loss, backprop = ap.softmax_cross_entropy_with_logits(
        torch.tensor([[1.], [-1.], [0.], [1.]]), torch.tensor([[-1.], [0.], [1.], [1.]]))
    assert torch.equal(loss, torch.zeros(4))
    assert torch.equal(backprop, torch.tensor([[2.], [1.], [0.], [0.]]))


@pytest.mark.parametrize("dtype", KERNEL_DTYPES)
def test_large_logits_do_not_overflow(dtype):
    features = make((8, 300), dtype, 90.0, 100.0)
    loss, backprop = check_values(features, soft_labels((8, 300), -1, dtype))
    assert torch.isfinite(loss).all() and torch.isfinite(backprop).all()


@pytest.mark.parametrize("dtype", KERNEL_DTYPES)
def test_non_contiguous_inputs(dtype):
    base = make((40, 30), dtype)
    labels_base = soft_labels((40, 30), 0, dtype)
    check_values(base.t(), labels_base.t())                           # transposed [30, 40]
    check_values(base[3:, 2::3], soft_labels((37, 10), -1, dtype))    # offset + step
    row = soft_labels((1, 30), -1, dtype)
    check_values(base, row.expand(40, 30))                            # zero-stride labels
    nchw = make((2, 6, 5, 4), dtype)
    cl = nchw.contiguous(memory_format=torch.channels_last)
    check_values(cl, soft_labels((2, 6, 5, 4), 1, dtype), dim=1)      # channels-last NCHW
    check_values(make((3, 8, 6, 6), dtype)[:, 1:7, ::2, 1:], soft_labels((3, 6, 3, 5), 1, dtype), 1)
    check_values(make((4, 5, 6), dtype).transpose(0, 2), soft_labels((6, 5, 4), 1, dtype), 1)


def test_outputs_are_fresh_and_inputs_untouched():
    features = make((6, 9), torch.float32)
    labels = soft_labels((6, 9), -1, torch.float32)
    f0, y0 = features.clone(), labels.clone()
    loss, backprop = ap.softmax_cross_entropy_with_logits(features, labels)
    assert torch.equal(features, f0) and torch.equal(labels, y0)
    assert backprop.data_ptr() != features.data_ptr()


def test_empty():
    loss, backprop = ap.softmax_cross_entropy_with_logits(torch.empty(0, 5), torch.empty(0, 5))
    assert loss.shape == (0,) and backprop.shape == (0, 5)
    loss, backprop = ap.softmax_cross_entropy_with_logits(torch.empty(3, 0), torch.empty(3, 0))
    assert torch.equal(loss, torch.zeros(3)) and backprop.shape == (3, 0)


def test_registered_op_matches_function():
    features, labels = make((5, 7, 3), torch.float32), soft_labels((5, 7, 3), 1, torch.float32)
    loss, backprop = sce_op(features, labels, 1)
    loss2, backprop2 = ap.softmax_cross_entropy_with_logits(features, labels, dim=1)
    assert torch.equal(loss, loss2) and torch.equal(backprop, backprop2)
    loss3, _ = sce_op(features.transpose(1, 2).contiguous(), labels.transpose(1, 2).contiguous())
    assert torch.equal(loss3, loss)  # default dim=-1


# ---- autograd ------------------------------------------------------------------------------

def torch_loss(features, labels, dim):
    return -(labels * torch.log_softmax(features, dim)).sum(dim)


@pytest.mark.parametrize("shape,dim", [((6, 11), -1), ((2, 5, 3, 4), 1), ((7, 4), 0), ((3, 6, 5), 1)])
def test_autograd_matches_torch(shape, dim):
    f = make(shape, torch.float32).requires_grad_()
    y = soft_labels(shape, dim, torch.float32).requires_grad_()
    f_ref = f.detach().clone().requires_grad_()
    y_ref = y.detach().clone().requires_grad_()
    loss, backprop = ap.softmax_cross_entropy_with_logits(f, y, dim)
    ref = torch_loss(f_ref, y_ref, dim)
    weights = torch.randn(loss.shape)
    (loss * weights).sum().backward()
    (ref * weights).sum().backward()
    torch.testing.assert_close(loss, ref, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(f.grad, f_ref.grad, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(y.grad, y_ref.grad, rtol=1e-5, atol=1e-6)


def test_autograd_through_backprop_output():
    """backprop = softmax - labels is differentiable too (softmax Jacobian, -1 for labels)."""
    f = make((5, 8), torch.float32).requires_grad_()
    y = soft_labels((5, 8), -1, torch.float32).requires_grad_()
    f_ref = f.detach().clone().requires_grad_()
    y_ref = y.detach().clone().requires_grad_()
    loss, backprop = ap.softmax_cross_entropy_with_logits(f, y)
    w = torch.randn(5, 8)
    (loss.sum() + (backprop * w).sum()).backward()
    ref = torch_loss(f_ref, y_ref, -1).sum() + ((torch.softmax(f_ref, -1) - y_ref) * w).sum()
    ref.backward()
    torch.testing.assert_close(f.grad, f_ref.grad, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(y.grad, y_ref.grad, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_autograd_half_precision(dtype):
    f = make((4, 37), dtype).requires_grad_()
    y = soft_labels((4, 37), -1, dtype).requires_grad_()
    loss, _ = ap.softmax_cross_entropy_with_logits(f, y)
    loss.sum().backward()
    f32 = f.detach().float().requires_grad_()
    y32 = y.detach().float().requires_grad_()
    torch_loss(f32, y32, -1).sum().backward()
    assert f.grad.dtype == dtype and y.grad.dtype == dtype
    torch.testing.assert_close(f.grad.float(), f32.grad, rtol=0, atol=8e-3)
    torch.testing.assert_close(y.grad.float(), y32.grad, rtol=1e-2, atol=5e-2)


def test_autograd_only_features_and_registered_op():
    f = make((3, 2, 4, 4), torch.float32).requires_grad_()
    y = soft_labels((3, 2, 4, 4), 1, torch.float32)
    loss, _ = sce_op(f, y, 1)
    loss.mean().backward()
    f_ref = f.detach().clone().requires_grad_()
    torch_loss(f_ref, y, 1).mean().backward()
    torch.testing.assert_close(f.grad, f_ref.grad, rtol=1e-5, atol=1e-7)
    assert y.grad is None


# ---- broadcasting (TensorFlow / CANN semantics; torch rules for other ranks) ----------------

def test_tensorflow_broadcast_known_values():
    logits = torch.tensor([[1., 1., 1., 1.], [1., 2., 3., 4.]])
    loss, _ = ap.softmax_cross_entropy_with_logits(logits, torch.tensor([[0., 0., 0., 1.]]))
    torch.testing.assert_close(loss, torch.tensor([1.3862944, 0.4401897]))
    loss, backprop = ap.softmax_cross_entropy_with_logits(
        torch.tensor([[1., 2., 3., 4.]]), torch.tensor([[0., 0., 0., 1.], [0., .5, .5, 0.]]))
    torch.testing.assert_close(loss, torch.tensor([0.4401897, 1.9401897]))
    assert backprop.shape == (2, 4)


@pytest.mark.parametrize("dtype", KERNEL_DTYPES)
@pytest.mark.parametrize("fshape,lshape,dim", [
    ((6, 9), (1, 9), -1), ((6, 9), (6, 1), -1), ((6, 9), (1, 1), -1), ((1, 9), (6, 9), -1),
    ((6, 1), (6, 9), -1), ((1, 9), (6, 1), -1), ((2, 5, 3, 4), (1, 5, 1, 4), 1),
    ((3, 6, 5), (6, 1), 1), ((7, 4), (4,), -1), ((4, 7), (4, 1), 0)])
def test_broadcast_values(dtype, fshape, lshape, dim):
    features = make(fshape, dtype)
    labels = make(lshape, dtype, 0.0, 1.0)
    shape = torch.broadcast_shapes(fshape, lshape)
    loss, backprop = ap.softmax_cross_entropy_with_logits(features, labels, dim)
    assert backprop.shape == shape
    ref_loss, ref_bp = reference64(features.expand(shape), labels.expand(shape), dim)
    tol = 1e-5 if dtype == torch.float32 else 1e-2
    torch.testing.assert_close(loss.double(), ref_loss, rtol=tol, atol=tol)
    torch.testing.assert_close(backprop.double(), ref_bp, rtol=tol, atol=tol)


@pytest.mark.parametrize("fshape,lshape,dim,label_dim", [
    ((6, 9), (1, 9), -1, -1), ((1, 9), (6, 9), -1, -1), ((6, 1), (6, 9), -1, -1),
    ((3, 6, 5), (6, 1), 1, 0)])
def test_broadcast_autograd_reduces_to_input_shapes(fshape, lshape, dim, label_dim):
    # labels that sum to 1 along the classes: then TensorFlow's gradient (grad * backprop) is
    # the exact derivative of the loss formula
    f = make(fshape, torch.float32).requires_grad_()
    y = soft_labels(lshape, label_dim, torch.float32).requires_grad_()
    f_ref, y_ref = f.detach().clone().requires_grad_(), y.detach().clone().requires_grad_()
    loss, _ = ap.softmax_cross_entropy_with_logits(f, y, dim)
    shape = torch.broadcast_shapes(fshape, lshape)
    w = torch.randn(loss.shape)
    (loss * w).sum().backward()
    (torch_loss(f_ref.expand(shape), y_ref.expand(shape), dim) * w).sum().backward()
    assert f.grad.shape == fshape and y.grad.shape == lshape
    torch.testing.assert_close(f.grad, f_ref.grad, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(y.grad, y_ref.grad, rtol=1e-5, atol=1e-5)
