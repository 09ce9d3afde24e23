"""A GPT in plain torch (the paper's Section 3 models are GPT-2 style: 12 layers, 12 heads, width 768).

Pre-LayerNorm blocks, causal self-attention through torch's scaled_dot_product_attention, GELU
(tanh approximation) MLP of width 4C, learned positions, tied input/output embeddings. Biases
everywhere, so the weights map one to one onto transformers' GPT-2 (`to_hf` / `from_hf`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


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

    def forward(self, idx: torch.Tensor, targets: torch.Tensor | None = None):
        """Logits (B, T, V); with targets (B, T) also the mean next-token cross-entropy."""
        x = self.hidden_states(idx)  # (B, T, C)
        logits = x @ self.wte.weight.T  # (B, T, V), tied embeddings
        if targets is None:
            return logits, None
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)).float(), targets.reshape(-1))
        return logits, loss


def lm_loss(model: nn.Module, batch) -> torch.Tensor:
    """Language-modelling loss for the trainer: batch = (x, y) token ids of shape (B, T)."""
    x, y = batch
    return model(x, y)[1]


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
