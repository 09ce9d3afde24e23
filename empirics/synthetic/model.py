"""The paper's regression transformer (Definition 1, Appendix D) as a trainable torch module.

    T(x) = D ∘ B_{L_T} ∘ ... ∘ B_1 ∘ (PE + E'(U x)^T)                               (Def. 1, eq. 5)

- tokens: l = D, U = I_D, so token t carries the coordinate x^t; E' = e_0 ∈ R^{d_embd x 1} is fixed
  and PE is the structured positional matrix of tmcheck.theory.network (rows 2-3 the interaction
  vectors (cos(tπ/2l), sin(tπ/2l)), row 4 the constant 1), padded with zero rows when d_embd > 5.
  None of E', U, PE is trained, exactly as in Definition 1.
- each block: B(H) = FFN(MHA(H) + H) + MHA(H) + H (Def. 3), with no normalisation layers;
  ReLU attention (Def. 4): column i of a head is (1/l) Σ_k σ(<Q h_i, K h_k>) V h_k. The 1/l is
  V/l re-parametrised, so the function class is the paper's; it keeps the initial outputs O(1).
  `attention="softmax"` replaces σ(·)/l by the softmax over k of <Q h_i, K h_k>/√d_embd.
- read-out D(H) = H[0, l-1], the first element of the last column (Def. 1).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import torch
from torch import nn

from tmcheck.theory.network import D_EMBD, structured_positional

ATTENTIONS = ("relu", "softmax")


@dataclass(frozen=True)
class ModelConfig:
    D: int = 16  # input dimension = number of tokens l
    d_embd: int = 8  # token dimension (>= 5: the structured rows plus free rows)
    n_blocks: int = 2  # L_T
    n_heads: int = 2  # m
    ffn_width: int = 32  # w_FFN
    ffn_depth: int = 2  # L_FFN (affine layers per FFN)
    attention: str = "relu"

    def __post_init__(self) -> None:
        if self.d_embd < D_EMBD:
            raise ValueError(f"d_embd must be >= {D_EMBD} (structured tokens, Appendix D), got {self.d_embd}")
        if self.attention not in ATTENTIONS:
            raise ValueError(f"unknown attention {self.attention!r}; expected one of {', '.join(ATTENTIONS)}")
        for name in ("D", "n_blocks", "n_heads", "ffn_width", "ffn_depth"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")

    def as_dict(self) -> dict:
        return asdict(self)


def embedding_matrices(D: int, d_embd: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(U, E', PE) of Definition 1 for one token per coordinate: (D, D), (d_embd, 1), (d_embd, D)."""
    pe = torch.zeros(d_embd, D, dtype=torch.float64)
    pe[:D_EMBD] = torch.from_numpy(structured_positional(D, "float64"))
    e = torch.zeros(d_embd, 1, dtype=torch.float64)
    e[0, 0] = 1.0
    return torch.eye(D, dtype=torch.float64), e, pe


class Block(nn.Module):
    """B(H) = FFN(MHA(H) + H) + MHA(H) + H, acting on H of shape (B, l, d_embd) (tokens as rows)."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        m, d = cfg.n_heads, cfg.d_embd
        scale = 1.0 / math.sqrt(d)
        self.Q = nn.Parameter(torch.randn(m, d, d) * scale)
        self.K = nn.Parameter(torch.randn(m, d, d) * scale)
        self.V = nn.Parameter(torch.randn(m, d, d) * scale / m)
        widths = [d] + [cfg.ffn_width] * (cfg.ffn_depth - 1) + [d]
        layers: list[nn.Module] = []
        for i, (a, b) in enumerate(zip(widths[:-1], widths[1:], strict=True)):
            layers.append(nn.Linear(a, b))
            if i < len(widths) - 2:
                layers.append(nn.ReLU())
        self.ffn = nn.Sequential(*layers)
        self.attention = cfg.attention

    def mha(self, H: torch.Tensor) -> torch.Tensor:
        q = torch.einsum("bld,med->bmle", H, self.Q)  # (B, m, l, d): Q h_i
        k = torch.einsum("bld,med->bmle", H, self.K)  # (B, m, l, d): K h_k
        v = torch.einsum("bld,med->bmle", H, self.V)  # (B, m, l, d): V h_k
        s = q @ k.transpose(-1, -2)  # (B, m, l[i], l[k]): <Q h_i, K h_k>
        if self.attention == "relu":
            w = torch.relu(s) / H.shape[1]
        else:
            w = torch.softmax(s / math.sqrt(H.shape[2]), dim=-1)
        return (w @ v).sum(dim=1)  # (B, l, d), heads summed (eq. 17)

    def forward(self, H: torch.Tensor) -> torch.Tensor:
        Z = self.mha(H) + H
        return self.ffn(Z) + Z


class RegressionTransformer(nn.Module):
    """x (B, D) -> T(x) (B,) per Definition 1."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg
        U, E, PE = embedding_matrices(cfg.D, cfg.d_embd)
        self.register_buffer("U", U.float())
        self.register_buffer("E", E.float())
        self.register_buffer("PE", PE.float())
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_blocks))

    def embed(self, x: torch.Tensor) -> torch.Tensor:
        """H_0 = E'(U x)^T + PE as (B, d_embd, l), the paper's orientation (columns are tokens)."""
        ux = x @ self.U.T  # (B, l)
        return self.E[None] * ux[:, None, :] + self.PE[None]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        H = self.embed(x).transpose(1, 2)  # (B, l, d_embd): rows are tokens
        for blk in self.blocks:
            H = blk(H)
        return H[:, -1, 0]  # first element of the last column (token)


def n_params(cfg: ModelConfig) -> int:
    """N: trained parameters (attention and FFN weights; E', U and PE are fixed)."""
    return sum(p.numel() for p in RegressionTransformer(cfg).parameters())


def mse_loss(model: nn.Module, batch: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
    x, y = batch
    return torch.mean((model(x) - y) ** 2)


def predict(model: RegressionTransformer, X, batch: int = 8192):
    """T(x) for the rows of X (numpy), in batches, as a numpy array."""
    import numpy as np

    model.eval()
    with torch.no_grad():
        out = [model(torch.as_tensor(X[i : i + batch], dtype=torch.float32)).numpy() for i in range(0, len(X), batch)]
    return np.concatenate(out)
