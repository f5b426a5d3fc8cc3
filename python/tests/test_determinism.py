"""Results through the torch ops are bit-identical for any ACLNN_PORTABLE_NUM_THREADS, and for
every kernel ISA (ACLNN_PORTABLE_ISA; one the CPU lacks falls back to the default, with a
warning) against the default dispatch (avx512bf16 where the CPU has AVX512_BF16)."""
import os
import subprocess
import sys

import pytest

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
for t in ap.softmax_cross_entropy_with_logits(f.bfloat16(), y.bfloat16()): add(t)
for t in ap.softmax_cross_entropy_with_logits(f4.bfloat16(), y4.bfloat16(), 1): add(t)
f2 = torch.randn(1000, 2); y2 = torch.softmax(torch.randn(1000, 2), -1)
for t in ap.softmax_cross_entropy_with_logits(f2.bfloat16(), y2.bfloat16()): add(t)
print(h.hexdigest())
"""


def _digest(threads=None, isa=None):
    env = dict(os.environ)
    for name, value in (("ACLNN_PORTABLE_NUM_THREADS", threads), ("ACLNN_PORTABLE_ISA", isa)):
        env.pop(name, None)
        if value is not None:
            env[name] = str(value)
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, cwd="/", check=True,
                         capture_output=True, text=True)
    return out.stdout.strip()


def test_bit_identical_across_thread_counts():
    digests = {t: _digest(threads=t) for t in (None, 1, 3, 8)}
    assert len(set(digests.values())) == 1, digests


@pytest.mark.parametrize("isa", ["scalar", "avx2", "avx512"])
def test_bit_identical_across_isas(isa):
    assert _digest(isa=isa, threads=2) == _digest(threads=2)


def test_concurrent_python_threads_get_identical_results():
    """The ops release the GIL; calls from several Python threads share the library safely."""
    import threading

    import torch

    import aclnn_portable as ap

    torch.manual_seed(3)
    x, h, g = torch.randn(4, 128, 256), torch.rand(4), torch.randn(16, 128, 256)
    f, y = torch.randn(256, 1000), torch.softmax(torch.randn(256, 1000), -1)

    def run():
        return (ap.mhc_post(x, h), ap.mhc_pre(g, h), *ap.mhc_post_backward(g, x, h),
                *ap.softmax_cross_entropy_with_logits(f, y))

    expected = run()
    mismatches = []

    def worker():
        for _ in range(8):
            mismatches.extend(i for i, (a, b) in enumerate(zip(run(), expected)) if not torch.equal(a, b))

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not mismatches
