"""The fused output layer and cross-entropy (`HeadCrossEntropy`) against autograd's own
`F.cross_entropy(x @ W.T, t)`: the same loss and gradients bit for bit, the same training, and the
paths where it must step aside (ignored targets, torch.func, a second backward)."""

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from tmcheck.empirics.lm.gpt import GPT, GPTConfig, HeadCrossEntropy, lm_loss
from tmcheck.empirics.lm.train import TrainConfig, make_optimizer


def _data(n: int, c: int, v: int, seed: int, scale: float = 1.0, column_major: bool = False):
    """x (n, c), W (v, c) and targets; column_major stores x and W column by column (transposed views)."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, c, generator=g)
    w = torch.randn(v, c, generator=g) * scale
    if column_major:
        x, w = x.t().contiguous().t(), w.t().contiguous().t()
    return x, w, torch.randint(0, v, (n,), generator=g)


def _grads(loss_fn, x, w, t, upstream: float = 1.0):
    """(loss, dL/dx, dL/dW) of loss_fn(x, W, t) * upstream, on fresh leaves."""
    x, w = (m.detach().clone(memory_format=torch.preserve_format).requires_grad_() for m in (x, w))
    loss = loss_fn(x, w, t)
    (loss * upstream).backward()
    return loss.detach(), x.grad, w.grad


def _autograd(x, w, t):
    return F.cross_entropy(x @ w.T, t)


def _fused(x, w, t):
    assert HeadCrossEntropy.applies(x, w, t)
    return HeadCrossEntropy.apply(x, w, t)


def _exp_backward(x, w, t):
    """A mutant: the logits' gradient as exp(log-softmax) * g/N minus g/N at the targets, with torch.exp
    instead of the log-softmax kernel's own exp (equal in exact arithmetic, not in float32)."""

    class Mutant(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, w, t):
            logp = torch.log_softmax(x.mm(w.t()), 1)
            ctx.save_for_backward(x, w, t, logp)
            return F.nll_loss(logp, t)

        @staticmethod
        def backward(ctx, grad):
            x, w, t, logp = ctx.saved_tensors
            s = grad / t.numel()
            g = torch.exp(logp) * s
            g.scatter_add_(1, t[:, None], (-s).expand(t.numel(), 1))
            return g.mm(w), g.t().mm(x), None

    return Mutant.apply(x, w, t)


def _same(a, b) -> bool:
    return all(torch.equal(p, q) for p, q in zip(a, b, strict=True))


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(1, 300),
    c=st.integers(1, 24),
    v=st.integers(2, 600),
    seed=st.integers(0, 2**16),
    scale=st.sampled_from([0.02, 1.0, 8.0]),
    upstream=st.sampled_from([1.0, 0.5, 1.7]),
    column_major=st.booleans(),
)
def test_fused_equals_autograd_bit_for_bit(n, c, v, seed, scale, upstream, column_major):
    """Any shape, scale and upstream gradient, x and W stored by rows or by columns (autograd picks its
    matmuls by layout; so does the fused backward)."""
    x, w, t = _data(n, c, v, seed, scale, column_major)
    assert _same(_grads(_fused, x, w, t, upstream), _grads(_autograd, x, w, t, upstream))


@pytest.mark.parametrize("chunk", [1, 700, 1 << 20])
def test_chunks_of_the_dense_gradient_change_nothing(monkeypatch, chunk):
    """One row at a time, a few rows, or all of them: the log-softmax backward works row by row."""
    x, w, t = _data(257, 16, 350, seed=3)
    monkeypatch.setattr(HeadCrossEntropy, "CHUNK", chunk)
    assert _same(_grads(_fused, x, w, t), _grads(_autograd, x, w, t))


def test_the_comparison_sees_one_ulp():
    """The bit-for-bit check fails on a backward that is right in exact arithmetic (torch.exp is not the
    kernel's exp) and on one changed target."""
    x, w, t = _data(512, 32, 1000, seed=1)
    want = _grads(_autograd, x, w, t)
    mutant = _grads(_exp_backward, x, w, t)
    assert torch.equal(mutant[0], want[0]) and not _same(mutant, want)
    t2 = t.clone()
    t2[0] = (t2[0] + 1) % 1000
    assert not _same(_grads(_fused, x, w, t2), want)


def _gpt(**kw) -> GPT:
    torch.manual_seed(0)
    return GPT(GPTConfig(vocab_size=300, block_size=16, n_layer=2, n_head=2, n_embd=24, **kw))


def test_training_steps_identical():
    """Five optimizer steps through lm_loss (fused) and through model(x, y) (logits): the same weights."""
    a, b = _gpt(), _gpt()
    opts = [make_optimizer(m, TrainConfig()) for m in (a, b)]
    g = torch.Generator().manual_seed(0)
    for _ in range(5):
        x = torch.randint(0, 300, (4, 16), generator=g)
        y = torch.roll(x, -1, 1)
        losses = [lm_loss(a, (x, y)), b(x, y)[1]]
        assert torch.equal(losses[0], losses[1])
        for loss, m, opt in zip(losses, (a, b), opts, strict=True):
            loss.backward()
            torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
            opt.step()
            opt.zero_grad(set_to_none=True)
    assert _same(a.state_dict().values(), b.state_dict().values())


def test_eval_without_grad_is_the_same_loss():
    m, x = _gpt(), torch.randint(0, 300, (3, 16))
    with torch.no_grad():
        assert torch.equal(lm_loss(m, (x, x)), m(x, x)[1])


def test_ignored_targets_take_the_logits_path():
    """A negative target (cross_entropy's ignore_index) is not the fused function's: the plain path runs."""
    m, x = _gpt(), torch.randint(0, 300, (2, 16))
    y = x.clone()
    y[:, -1] = -100
    h = m.hidden_states(x)
    assert not HeadCrossEntropy.applies(h, m.wte.weight, y)
    assert HeadCrossEntropy.applies(h, m.wte.weight, x)
    assert torch.equal(lm_loss(m, (x, y)), m(x, y)[1])


def test_under_torch_func_the_logits_path_runs():
    """torch.func.grad over lm_loss (functorch active): the plain path, the same gradients as autograd."""
    from torch.func import functional_call, grad

    m, x = _gpt(), torch.randint(0, 300, (2, 16))
    y = torch.roll(x, -1, 1)
    params = {k: v.detach() for k, v in m.named_parameters()}
    got = grad(lambda p: lm_loss(lambda *a, **k: functional_call(m, p, a, k), (x, y)))(params)
    m(x, y)[1].backward()
    assert all(torch.equal(got[k], p.grad) for k, p in m.named_parameters())


def test_second_backward_refused():
    """The backward overwrites the saved log-softmax, so retain_graph cannot give a wrong second gradient."""
    x, w, t = _data(8, 4, 10, seed=0)
    w.requires_grad_()
    loss = HeadCrossEntropy.apply(x, w, t)
    loss.backward(retain_graph=True)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


def test_spare_buffer_reused_and_never_shared():
    """The next step of the same shape writes into the last backward's buffer; two graphs alive at once
    get two buffers, each backward its own right gradients."""
    x, w, t = _data(64, 8, 50, seed=5)
    want = _grads(_autograd, x, w, t)
    assert _same(_grads(_fused, x, w, t), want)
    spare = HeadCrossEntropy.SPARE[0]
    assert _same(_grads(_fused, x, w, t), want) and HeadCrossEntropy.SPARE[0] is spare
    leaves = [[m.clone().requires_grad_() for m in (x, w)] for _ in range(2)]
    losses = [HeadCrossEntropy.apply(a, b, t) for a, b in leaves]
    for loss in losses:
        loss.backward()
    assert all(_same((loss, a.grad, b.grad), want) for loss, (a, b) in zip(losses, leaves, strict=True))


def test_retained_graph_sees_its_buffer_taken():
    """A graph kept with retain_graph whose buffer a later forward reuses cannot backward again."""
    x, w, t = _data(16, 4, 30, seed=6)
    w.requires_grad_()
    first = HeadCrossEntropy.apply(x, w, t)
    first.backward(retain_graph=True)
    HeadCrossEntropy.apply(x, w, t)  # takes the spare: first's saved log-softmax
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        first.backward()
