"""Bad arguments raise TypeError / ValueError / RuntimeError naming the argument, the expectation
and the value, before any kernel runs, both from the Python functions and from torch.ops."""
import pytest
import torch

import aclnn_portable as ap

ops = torch.ops.aclnn_portable
x3 = torch.ones(2, 3, 4)
h4 = torch.ones(4)

MHC_POST_CASES = [
    # (x, h, exception, message regex)
    (torch.ones(2, 3), h4, ValueError, r"x must be a 3-D tensor .*got a 2-D tensor of shape \[2, 3\]"),
    (torch.ones(1, 2, 3, 4), h4, ValueError, r"x must be a 3-D tensor"),
    (x3, torch.ones(2, 2), ValueError, r"h must be a 1-D tensor \[num_streams\], got a 2-D"),
    (x3, torch.ones(0), ValueError, r"num_streams = h.shape\[0\] must be >= 1, got 0"),
    (x3.double(), h4, TypeError, r"x must have dtype torch.float32, torch.float16 or torch.bfloat16, got torch.float64"),
    (x3.int(), h4, TypeError, r"x must have dtype .*got torch.int"),
    (x3, h4.half(), TypeError, r"h must have dtype torch.float32 or the dtype of x \(torch.float32\), got torch.float16"),
    (x3.bfloat16(), h4.half(), TypeError, r"h must have dtype torch.float32 or the dtype of x \(torch.bfloat16\)"),
    (x3, h4.double(), TypeError, r"h must have dtype"),
    (torch.ones(2, 3, 4, device="meta"), h4, RuntimeError, r"x must be a CPU tensor .*meta"),
    (x3, torch.ones(4, device="meta"), RuntimeError, r"h must be a CPU tensor"),
    (x3.to_sparse(), h4, (TypeError, RuntimeError), r"x must be a dense|layout|sparse"),
]


@pytest.mark.parametrize("x,h,exc,msg", MHC_POST_CASES)
@pytest.mark.parametrize("entry", ["function", "torch.ops"])
def test_mhc_post_errors(x, h, exc, msg, entry):
    fn = ap.mhc_post if entry == "function" else ops.mhc_post
    with pytest.raises(exc, match=msg):
        fn(x, h)


@pytest.mark.parametrize("entry", ["function", "torch.ops"])
def test_mhc_pre_errors(entry):
    fn = ap.mhc_pre if entry == "function" else ops.mhc_pre
    with pytest.raises(ValueError, match=r"x.shape\[0\] = batch \* num_streams must be divisible "
                                         r"by num_streams = h.shape\[0\] = 4, got x of shape \[6, 3, 4\]"):
        fn(torch.ones(6, 3, 4), h4)
    with pytest.raises(ValueError, match=r"x must be a 3-D tensor \[batch \* num_streams"):
        fn(torch.ones(8, 3), h4)
    with pytest.raises(ValueError, match=r"num_streams = h.shape\[0\] must be >= 1"):
        fn(torch.ones(8, 3, 4), torch.ones(0))
    with pytest.raises(TypeError, match=r"x must have dtype"):
        fn(torch.ones(8, 3, 4, dtype=torch.float64), h4)


def test_mhc_post_backward_errors():
    with pytest.raises(ValueError, match=r"x must have shape \[2, 3, 4\]"):
        ap.mhc_post_backward(torch.ones(8, 3, 4), torch.ones(2, 3, 5), h4)
    with pytest.raises(TypeError, match=r"x must have the dtype of grad_out"):
        ap.mhc_post_backward(torch.ones(8, 3, 4), torch.ones(2, 3, 4).bfloat16(), h4)
    with pytest.raises(ValueError, match=r"grad_out.shape\[0\] .* divisible"):
        ap.mhc_post_backward(torch.ones(7, 3, 4), torch.ones(2, 3, 4), h4)


def test_non_tensor_arguments():
    with pytest.raises(TypeError, match=r"mhc_post: x must be a torch.Tensor, got list"):
        ap.mhc_post([[[1.0]]], h4)
    with pytest.raises(TypeError, match=r"mhc_pre: h must be a torch.Tensor, got float"):
        ap.mhc_pre(torch.ones(4, 1, 1), 0.5)
    with pytest.raises(TypeError, match=r"labels must be a torch.Tensor, got NoneType"):
        ap.softmax_cross_entropy_with_logits(torch.ones(2, 3), None)
    with pytest.raises(TypeError, match=r"dim must be an int, got float"):
        ap.softmax_cross_entropy_with_logits(torch.ones(2, 3), torch.ones(2, 3), 1.0)
    with pytest.raises(TypeError, match=r"dim must be an int, got bool"):
        ap.softmax_cross_entropy_with_logits(torch.ones(2, 3), torch.ones(2, 3), True)


f23 = torch.ones(2, 3)
SCE_CASES = [
    (f23, torch.ones(2, 4), -1, ValueError, r"features and labels must have the same shape or broadcastable shapes, got features \[2, 3\] and labels \[2, 4\]"),
    (f23, f23.half(), -1, TypeError, r"labels must have the dtype of features \(torch.float32\), got torch.float16"),
    (f23.double(), f23.double(), -1, TypeError, r"features must have dtype .*got torch.float64"),
    (f23.long(), f23.long(), -1, TypeError, r"features must have dtype .*got torch.int64"),
    (torch.tensor(1.0), torch.tensor(1.0), -1, ValueError, r"at least 1 dimension"),
    (f23, f23, 2, ValueError, r"dim must be in \[-2, 1\] for features of shape \[2, 3\], got 2"),
    (f23, f23, -3, ValueError, r"dim must be in \[-2, 1\]"),
    (torch.ones(2, 3, device="meta"), f23, -1, RuntimeError, r"features must be a CPU tensor"),
    (f23, torch.ones(2, 3, device="meta"), -1, RuntimeError, r"labels must be a CPU tensor"),
]


@pytest.mark.parametrize("features,labels,dim,exc,msg", SCE_CASES)
@pytest.mark.parametrize("entry", ["function", "torch.ops"])
def test_sce_errors(features, labels, dim, exc, msg, entry):
    fn = ap.softmax_cross_entropy_with_logits if entry == "function" else ops.softmax_cross_entropy_with_logits
    with pytest.raises(exc, match=msg):
        fn(features, labels, dim)


def test_errors_under_no_grad_and_with_requires_grad():
    with torch.no_grad():
        with pytest.raises(ValueError, match="3-D"):
            ap.mhc_post(torch.ones(2, 3), h4)
    with pytest.raises(ValueError, match="divisible"):
        ap.mhc_pre(torch.ones(6, 3, 4, requires_grad=True), h4.clone().requires_grad_())


def test_reference_errors():
    with pytest.raises(ValueError, match="num_streams must be > 0"):
        ap.mhc_post_einsum(x3, torch.ones(0))
    with pytest.raises(ValueError, match="divisible|batch \\* num_streams"):
        ap.mhc_pre_einsum(torch.ones(6, 3, 4), h4)
