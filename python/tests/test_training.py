"""A tiny mHC-style model trained with our ops (expand with mhc_post, mix, reduce with mhc_pre,
soft-label loss) tracks the same model written in pure torch, and its loss falls."""
import copy

import torch

import aclnn_portable as ap


class TinyMHC(torch.nn.Module):
    def __init__(self, dim, classes, streams, kernels):
        super().__init__()
        self.kernels = kernels
        self.streams = streams
        self.h_post = torch.nn.Parameter(torch.rand(streams) + 0.5)
        self.h_res = torch.nn.Parameter(torch.eye(streams) + 0.1 * torch.randn(streams, streams))
        self.mix = torch.nn.Linear(dim, dim)
        self.h_pre = torch.nn.Parameter(torch.rand(streams) / streams + 0.1)
        self.head = torch.nn.Linear(dim, classes)

    def forward(self, x):
        b, s, d = x.shape
        post = ap.mhc_post if self.kernels else ap.mhc_post_einsum
        pre = ap.mhc_pre if self.kernels else ap.mhc_pre_einsum
        streams = post(x, self.h_post).view(b, self.streams, s, d)        # expand 1 -> N
        streams = torch.einsum("mn,bnsd->bmsd", self.h_res, streams)      # mix the streams
        streams = torch.tanh(self.mix(streams)).reshape(b * self.streams, s, d)
        return self.head(pre(streams, self.h_pre))                        # reduce N -> 1

    def loss(self, x, labels):
        logits = self(x)
        if self.kernels:
            return ap.softmax_cross_entropy_with_logits(logits, labels)[0].mean()
        return -(labels * torch.log_softmax(logits, -1)).sum(-1).mean()


def test_training_matches_pure_torch_and_loss_falls():
    torch.manual_seed(0)
    batch, seq, dim, classes, streams = 4, 8, 16, 5, 4
    ours = TinyMHC(dim, classes, streams, kernels=True)
    ref = copy.deepcopy(ours)
    ref.kernels = False
    x = torch.randn(batch, seq, dim)
    target = torch.softmax(3 * torch.randn(batch, seq, classes), -1)
    opt_ours = torch.optim.SGD(ours.parameters(), lr=0.3)
    opt_ref = torch.optim.SGD(ref.parameters(), lr=0.3)
    losses = []
    for step in range(40):
        for model, opt in ((ours, opt_ours), (ref, opt_ref)):
            opt.zero_grad()
            model.loss(x, target).backward()
        loss_ours = ours.loss(x, target).item()
        loss_ref = ref.loss(x, target).item()
        losses.append(loss_ours)
        assert abs(loss_ours - loss_ref) <= 1e-4 * abs(loss_ref), (step, loss_ours, loss_ref)
        for (name, p), q in zip(ours.named_parameters(), ref.parameters()):
            torch.testing.assert_close(p.grad, q.grad, rtol=1e-3, atol=1e-5, msg=f"{name} at step {step}")
        opt_ours.step()
        opt_ref.step()
    assert losses[-1] < 0.8 * losses[0], losses


def _bf16_run(kernels):
    torch.manual_seed(1)
    batch, seq, dim, streams = 2, 4, 8, 3
    x = torch.randn(batch, seq, dim).bfloat16()
    target = torch.softmax(torch.randn(batch, seq, dim), -1).bfloat16()
    h_post = torch.nn.Parameter(torch.full((streams,), 0.5))
    h_pre = torch.nn.Parameter(torch.full((streams,), 0.5))
    opt = torch.optim.SGD([h_post, h_pre], lr=0.05)
    losses = []
    for _ in range(15):
        opt.zero_grad()
        if kernels:
            logits = ap.mhc_pre(ap.mhc_post(x, h_post), h_pre) * 4
            loss = ap.softmax_cross_entropy_with_logits(logits, target)[0].float().mean()
        else:  # the same model in fp32 on the same (bf16-valued) data
            logits = ap.mhc_pre_einsum(ap.mhc_post_einsum(x.float(), h_post), h_pre) * 4
            loss = -(target.float() * torch.log_softmax(logits, -1)).sum(-1).mean()
        loss.backward()
        assert h_post.grad.dtype == torch.float32 and torch.isfinite(h_post.grad).all()
        opt.step()
        losses.append(loss.item())
    return losses


def test_training_bf16_activations_fp32_weights_tracks_fp32_and_learns():
    ours, ref = _bf16_run(True), _bf16_run(False)
    for a, b in zip(ours, ref):
        assert abs(a - b) <= 0.01 * abs(b), (ours, ref)
    assert ours[-1] < 0.5 * ours[0]
