"""A GPT in plain torch (the paper's Section 3 models are GPT-2 style: 12 layers, 12 heads, width 768).

Pre-LayerNorm blocks, causal self-attention through torch's scaled_dot_product_attention, GELU
(tanh approximation) MLP of width 4C, learned positions, tied input/output embeddings. Biases
everywhere, so the weights map one to one onto transformers' GPT-2 (`to_hf` / `from_hf`).

The training loss (`lm_loss`) on the CPU in float32 goes through `HeadCrossEntropy`: the output layer and
the cross-entropy as one autograd function whose log-softmax and gradient overwrite the logits in place,
so a step makes one (B T) x V tensor instead of four; the loss and every gradient are bit for bit those of
`F.cross_entropy(x @ wte.T, y)` (same ATen kernels, tests/empirics/lm/test_gpt_loss.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd.function import once_differentiable


@dataclass
class GPTConfig:
    vocab_size: int = 1024  # BPE vocabulary, including <|endoftext|>
    block_size: int = 128  # context length T
    n_layer: int = 4  # transformer blocks
    n_head: int = 4  # attention heads; n_embd must be divisible by it
    n_embd: int = 128  # width C
    dropout: float = 0.0  # 0 keeps training deterministic; the paper's runs use none

    def __post_init__(self):
        if self.n_embd % self.n_head:
            raise ValueError(f"n_embd={self.n_embd} is not divisible by n_head={self.n_head}")


class CausalSelfAttention(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.n_head, self.dropout = cfg.n_head, cfg.dropout
        self.qkv = nn.Linear(cfg.n_embd, 3 * cfg.n_embd)  # q, k, v for all heads at once
        self.proj = nn.Linear(cfg.n_embd, cfg.n_embd)
        self.resid_drop = nn.Dropout(cfg.dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)  # 3 x (B, T, C)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))  # (B, nh, T, hs)
        y = F.scaled_dot_product_attention(
            q, k, v, is_causal=True, dropout_p=self.dropout if self.training else 0.0
        )  # (B, nh, T, hs)
        y = y.transpose(1, 2).reshape(B, T, C)  # (B, T, C)
        return self.resid_drop(self.proj(y))


class MLP(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.fc = nn.Linear(cfg.n_embd, 4 * cfg.n_embd)
        self.proj = nn.Linear(4 * cfg.n_embd, cfg.n_embd)
        self.drop = nn.Dropout(cfg.dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.drop(self.proj(F.gelu(self.fc(x), approximate="tanh")))  # (B, T, C)


class Block(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.ln1, self.attn = nn.LayerNorm(cfg.n_embd), CausalSelfAttention(cfg)
        self.ln2, self.mlp = nn.LayerNorm(cfg.n_embd), MLP(cfg)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.config = cfg
        self.wte = nn.Embedding(cfg.vocab_size, cfg.n_embd)
        self.wpe = nn.Embedding(cfg.block_size, cfg.n_embd)
        self.drop = nn.Dropout(cfg.dropout)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layer))
        self.ln_f = nn.LayerNorm(cfg.n_embd)
        self.apply(self._init_weights)
        # GPT-2's scaled init of the residual projections: std 0.02 / sqrt(2 L).
        for name, p in self.named_parameters():
            if name.endswith("proj.weight"):
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * cfg.n_layer))

    @staticmethod
    def _init_weights(m: nn.Module) -> None:
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, mean=0.0, std=0.02)
        if isinstance(m, nn.Linear):
            nn.init.zeros_(m.bias)

    def num_params(self, non_embedding: bool = True) -> int:
        n = sum(p.numel() for p in self.parameters())
        return n - self.wpe.weight.numel() if non_embedding else n

    def hidden_states(self, idx: torch.Tensor, layer: int | None = None, final_ln: bool = True) -> torch.Tensor:
        """Residual stream after block `layer` (1-based; None = last; 0 = embeddings), (B, T, C).
        For the last block, final_ln chooses before or after the final LayerNorm."""
        B, T = idx.shape
        if T > self.config.block_size:
            raise ValueError(f"sequence of length {T} exceeds block_size {self.config.block_size}")
        L = self.config.n_layer if layer is None else layer
        if not 0 <= L <= self.config.n_layer:
            raise ValueError(f"layer must be in 0..{self.config.n_layer}, got {layer}")
        pos = torch.arange(T, device=idx.device)
        x = self.drop(self.wte(idx) + self.wpe(pos))  # (B, T, C)
        for block in self.blocks[:L]:
            x = block(x)
        return self.ln_f(x) if (final_ln and L == self.config.n_layer) else x

    def forward(self, idx: torch.Tensor, targets: torch.Tensor | None = None, *, with_logits: bool = True):
        """Logits (B, T, V); with targets (B, T) also the mean next-token cross-entropy. With targets and
        with_logits=False: (None, loss), through `HeadCrossEntropy` where it applies (the same loss)."""
        x = self.hidden_states(idx)  # (B, T, C)
        if targets is not None and not with_logits and HeadCrossEntropy.applies(x, self.wte.weight, targets):
            flat = x.reshape(-1, x.size(-1))  # (B T, C)
            return None, HeadCrossEntropy.apply(flat, self.wte.weight, targets.reshape(-1))
        logits = x @ self.wte.weight.T  # (B, T, V), tied embeddings
        if targets is None:
            return logits, None
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)).float(), targets.reshape(-1))
        return logits, loss


def lm_loss(model: nn.Module, batch) -> torch.Tensor:
    """Language-modelling loss for the trainer: batch = (x, y) token ids of shape (B, T). The logits are
    not returned, so the loss may take the fused path (`HeadCrossEntropy`)."""
    x, y = batch
    return model(x, y, with_logits=False)[1]


class HeadCrossEntropy(torch.autograd.Function):
    """mean cross-entropy of softmax(x W^T) against targets, and its gradients, with one N x V buffer.

    Forward: logits = x W^T (N, V), overwritten by their log-softmax (the kernel reads a row whole before
    it writes it), then nll_loss. Backward: the gradient of the logits is ATen's log-softmax backward,
    written over the saved log-softmax, fed rows at a time from a small zero buffer holding nll_loss's
    gradient (-g / N at each target, as nll_loss_backward writes it); then the two matmuls autograd does
    for x @ W.T. Every kernel, operand layout and order is autograd's for `F.cross_entropy(x @ W.T, t)`,
    so the numbers are the same bits; what changes is that the logits, their log-softmax, nll_loss's dense
    gradient and the logits' gradient no longer each get an N x V tensor of their own. That one buffer is
    kept after the backward for the next step of the same shape (`SPARE`, at most one, like a caching
    allocator): a step then maps no fresh N x V memory, whatever state the C library's heap is in. A
    second backward through the same graph is refused (the saved log-softmax has been overwritten, and
    the version counter of a buffer taken again says so), and so is a double backward."""

    CHUNK = 1 << 20  # elements of nll_loss's gradient held at once (4 MiB in float32): few parallel regions
    SPARE: ClassVar[list[torch.Tensor]] = []  # the last backward's N x V buffer, for the next forward

    @staticmethod
    def applies(x: torch.Tensor, weight: torch.Tensor, targets: torch.Tensor) -> bool:
        """Eager float32 on the CPU, no ignored (negative) targets: where the in-place kernels are autograd's."""
        return (
            x.device.type == "cpu"
            and x.dtype == weight.dtype == torch.float32
            and not torch.is_autocast_enabled("cpu")
            and not torch.compiler.is_compiling()
            and not torch._C._are_functorch_transforms_active()
            and targets.dtype == torch.long
            and targets.numel() > 0
            and int(targets.min()) >= 0
        )

    @staticmethod
    def forward(ctx, x: torch.Tensor, weight: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        logits = HeadCrossEntropy._buffer(x, weight.size(0))
        torch.mm(x, weight.t(), out=logits)  # (N, V)
        logp = torch.log_softmax(logits, 1, out=logits)  # (N, V), in place
        loss, total_weight = torch.ops.aten.nll_loss_forward(logp, targets, None, 1, -100)  # mean
        ctx.save_for_backward(x, weight, targets, logp, total_weight)
        return loss

    @staticmethod
    def _buffer(x: torch.Tensor, v: int) -> torch.Tensor:
        """The spare (N, v) buffer when there is one of that shape, else a new one (x: (N, C))."""
        spare = HeadCrossEntropy.SPARE.pop() if HeadCrossEntropy.SPARE else None
        return spare if spare is not None and spare.shape == (x.size(0), v) else x.new_empty(x.size(0), v)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad: torch.Tensor):
        x, weight, targets, logp, total_weight = ctx.saved_tensors
        N, V = logp.shape
        value = -(grad / total_weight)  # nll_loss's gradient at each target
        rows = max(1, HeadCrossEntropy.CHUNK // V)
        dense = logp.new_zeros(min(rows, N), V)  # nll_loss's gradient, `rows` rows at a time
        for r0 in range(0, N, rows):
            r1 = min(N, r0 + rows)
            part, at = dense[: r1 - r0], targets[r0:r1, None]
            part.scatter_(1, at, value.expand(r1 - r0, 1))
            block = logp[r0:r1]
            torch.ops.aten._log_softmax_backward_data.out(part, block, 1, torch.float32, out=block)
            part.scatter_(1, at, 0.0)
        g, wt = logp, weight.t()  # g (N, V): the gradient of the logits, where their log-softmax was
        # the matmuls of autograd's mm backward for x @ W.T, with its choice of operand order by layout
        gx = gw = None
        if ctx.needs_input_grad[0]:
            gx = wt.mm(g.t()).t() if _column_major(x) else g.mm(weight)  # (N, C)
        if ctx.needs_input_grad[1]:
            gw = g.t().mm(x) if _column_major(wt) else x.t().mm(g).t()  # (V, C)
        HeadCrossEntropy.SPARE[:] = [logp]
        return gx, gw, None


def _column_major(m: torch.Tensor) -> bool:
    """autograd's test (mm_mat1_backward, mm_mat2_backward) for a matrix stored column by column."""
    return m.stride(0) == 1 and m.stride(1) == m.size(0)


# --- transformers GPT-2 format -------------------------------------------------------------------
# GPT-2 stores its linear layers as Conv1D with weight (in, out): ours are (out, in), hence .T.
_HF_NAMES = {
    "attn.qkv": "attn.c_attn",
    "attn.proj": "attn.c_proj",
    "mlp.fc": "mlp.c_fc",
    "mlp.proj": "mlp.c_proj",
    "ln1": "ln_1",
    "ln2": "ln_2",
}


def hf_config(cfg: GPTConfig):
    from transformers import GPT2Config

    return GPT2Config(
        vocab_size=cfg.vocab_size,
        n_positions=cfg.block_size,
        n_embd=cfg.n_embd,
        n_layer=cfg.n_layer,
        n_head=cfg.n_head,
        n_inner=4 * cfg.n_embd,
        activation_function="gelu_new",
        resid_pdrop=cfg.dropout,
        embd_pdrop=cfg.dropout,
        attn_pdrop=cfg.dropout,
        layer_norm_epsilon=1e-5,
        tie_word_embeddings=True,
        bos_token_id=0,
        eos_token_id=0,
    )


def _hf_names(cfg: GPTConfig):
    """(our parameter name, GPT-2 name, transposed?) for every weight."""
    yield from (
        ("wte.weight", "transformer.wte.weight", False),
        ("wpe.weight", "transformer.wpe.weight", False),
        ("ln_f.weight", "transformer.ln_f.weight", False),
        ("ln_f.bias", "transformer.ln_f.bias", False),
    )
    for i in range(cfg.n_layer):
        for ours, theirs in _HF_NAMES.items():
            linear = not ours.startswith("ln")
            yield f"blocks.{i}.{ours}.weight", f"transformer.h.{i}.{theirs}.weight", linear
            yield f"blocks.{i}.{ours}.bias", f"transformer.h.{i}.{theirs}.bias", False


def hf_state_dict(model: GPT) -> dict[str, torch.Tensor]:
    """Our weights under GPT-2's names (the `transformer.` prefix of GPT2LMHeadModel)."""
    out = {}
    for ours, theirs, transposed in _hf_names(model.config):
        w = model.get_parameter(ours).detach()
        out[theirs] = (w.T if transposed else w).contiguous().clone()
    return out


def to_hf(model: GPT):
    """A transformers GPT2LMHeadModel with exactly our weights."""
    from transformers import GPT2LMHeadModel

    hf = GPT2LMHeadModel(hf_config(model.config))
    missing, unexpected = hf.load_state_dict(hf_state_dict(model), strict=False)
    if unexpected or [k for k in missing if not k.endswith("lm_head.weight")]:
        raise RuntimeError(f"GPT-2 export mismatch: missing {missing}, unexpected {unexpected}")
    hf.tie_weights()
    return hf.eval()


def from_hf(hf) -> GPT:
    """Our GPT from a transformers GPT2LMHeadModel (GELU-tanh, tied embeddings, as GPT-2 itself)."""
    c = hf.config
    if getattr(c, "model_type", None) != "gpt2":
        raise ValueError(f"can import only GPT-2 models, got model_type={getattr(c, 'model_type', None)!r}")
    if c.activation_function not in ("gelu_new", "gelu_pytorch_tanh"):
        raise ValueError(f"unsupported activation {c.activation_function!r}")
    model = GPT(
        GPTConfig(
            vocab_size=c.vocab_size, block_size=c.n_positions, n_layer=c.n_layer, n_head=c.n_head, n_embd=c.n_embd
        )
    )
    theirs = hf.state_dict()
    with torch.no_grad():
        for ours, name, transposed in _hf_names(model.config):
            model.get_parameter(ours).copy_(theirs[name].T if transposed else theirs[name])
    return model.eval()
