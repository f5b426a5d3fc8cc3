"""Results through the torch ops are bit-identical for any ACLNN_PORTABLE_NUM_THREADS."""
import os
import subprocess
import sys

SCRIPT = r"""
import hashlib, torch, aclnn_portable as ap
torch.manual_seed(7)
h = hashlib.sha256()
def add(t): h.update(t.contiguous().view(torch.uint8).numpy().tobytes())
x = torch.randn(3, 200, 257); w = torch.rand(5); g = torch.randn(15, 200, 257)
add(ap.mhc_post(x, w)); add(ap.mhc_pre(g, w))
for t in ap.mhc_post_backward(g, x, w): add(t)
xb = x.bfloat16(); add(ap.mhc_post(xb, w)); add(ap.mhc_post_backward(g.bfloat16(), xb, w)[1])
f = torch.randn(300, 1001) * 4; y = torch.softmax(torch.randn(300, 1001), -1)
for t in ap.softmax_cross_entropy_with_logits(f, y): add(t)
f4 = torch.randn(2, 19, 32, 32); y4 = torch.softmax(torch.randn(2, 19, 32, 32), 1)
for t in ap.softmax_cross_entropy_with_logits(f4, y4, 1): add(t)
for t in ap.softmax_cross_entropy_with_logits(torch.randn(2, 100000), torch.rand(2, 100000)): add(t)
print(h.hexdigest())
"""


def _digest(threads):
    env = dict(os.environ)
    env.pop("ACLNN_PORTABLE_NUM_THREADS", None)
    if threads is not None:
        env["ACLNN_PORTABLE_NUM_THREADS"] = str(threads)
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, cwd="/", check=True,
                         capture_output=True, text=True)
    return out.stdout.strip()


def test_bit_identical_across_thread_counts():
    digests = {t: _digest(t) for t in (None, 1, 3, 8)}
    assert len(set(digests.values())) == 1, digests
