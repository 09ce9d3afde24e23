"""Token embeddings for the intrinsic-dimension measurement (Section 3 and Appendix A of the paper).

The paper's protocol: for each test document take a 1024-token subsequence, run the model trained
on the full training split, and keep the final-layer hidden states of 32 tokens of that
subsequence. Its released code differs in ways kept here as explicit options, and recorded:
- `window`: "random" (a random 1024-token window, as stated) or "prefix" (the first tokens, as coded);
- `final_ln`: "after" or "before" the final LayerNorm (the code used "before" for nanoGPT
  checkpoints and "after" for transformers models);
- `layer`: any block (1-based; 0 = the input embeddings); the default is the last.
Models: our checkpoints (best.pt / last.pt, or a run directory) and any local transformers
causal-LM directory (GPT-2, Pythia, ...). Nothing is ever downloaded.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np


@dataclass
class EmbedOptions:
    context: int = 1024          # tokens per document fed to the model (paper: 1024)
    tokens_per_doc: int = 32     # hidden states kept per document (paper: 32)
    window: str = "random"       # "random" (paper text) or "prefix" (paper code)
    final_ln: str = "after"      # "after" or "before" the final LayerNorm, last layer only
    layer: int | None = None     # block index, 1-based; 0 = embeddings; None = last
    seed: int = 0                # windows and token positions
    batch_docs: int = 16         # documents per forward pass

    def __post_init__(self):
        if self.window not in ("random", "prefix"):
            raise ValueError(f"window must be 'random' or 'prefix', got {self.window!r}")
        if self.final_ln not in ("after", "before"):
            raise ValueError(f"final_ln must be 'after' or 'before', got {self.final_ln!r}")
        if self.context < 1 or self.tokens_per_doc < 1:
            raise ValueError("context and tokens_per_doc must be positive")

    def as_dict(self) -> dict:
        return asdict(self)


class CausalLM:
    """A uniform view of our GPT and of transformers causal LMs: hidden(ids, layer, final_ln) -> (B, T, C)."""

    def __init__(self, model, kind: str, tokenizer=None, source: str = ""):
        self.model, self.kind, self.tokenizer, self.source = model.eval(), kind, tokenizer, source

    @property
    def n_layer(self) -> int:
        c = self.model.config
        return c.n_layer if self.kind == "tmcheck" else c.num_hidden_layers

    @property
    def context(self) -> int:
        c = self.model.config
        if self.kind == "tmcheck":
            return c.block_size
        return int(getattr(c, "n_positions", None) or getattr(c, "max_position_embeddings", 1024))

    def hidden(self, ids, layer: int | None = None, final_ln: str = "after"):
        import torch

        L = self.n_layer if layer is None else layer
        if not 0 <= L <= self.n_layer:
            raise ValueError(f"layer must be in 0..{self.n_layer}, got {layer}")
        with torch.no_grad():
            if self.kind == "tmcheck":
                return self.model.hidden_states(ids, L, final_ln == "after")
            if L < self.n_layer or final_ln == "after":
                # transformers: hidden_states[L] is the residual stream after block L; the last entry
                # has the final norm applied.
                return self.model(input_ids=ids, output_hidden_states=True).hidden_states[L]
            captured = {}
            norm = _final_norm(self.model)
            handle = norm.register_forward_hook(lambda m, inp, out: captured.setdefault("x", inp[0]))
            try:
                self.model(input_ids=ids)
            finally:
                handle.remove()
            return captured["x"]


def _final_norm(model):
    base = model.base_model
    for name in ("ln_f", "final_layer_norm", "norm", "final_layernorm"):
        if hasattr(base, name):
            return getattr(base, name)
    raise ValueError(f"cannot find the final norm of {type(model).__name__}; use --final-ln after")


def load_model(path: Path) -> CausalLM:
    """Our checkpoint (file, or run directory holding best.pt) or a local transformers causal-LM directory."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(2, "no such model file or directory", str(path))
    if path.is_dir() and (path / "best.pt").exists():
        path = path / "best.pt"
    if path.is_file():
        from tmcheck.empirics.sweep import load_gpt

        return CausalLM(load_gpt(path), "tmcheck", source=str(path))
    if not (path / "config.json").exists():
        raise ValueError(f"{path} is neither a tmcheck checkpoint nor a transformers model directory (no config.json)")
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(path, local_files_only=True)
    try:
        tok = AutoTokenizer.from_pretrained(path, local_files_only=True)
    except (OSError, ValueError, TypeError):
        tok = None
    return CausalLM(model, "transformers", tok, source=str(path))


def embed_documents(lm: CausalLM, docs: list[np.ndarray], opts: EmbedOptions) -> np.ndarray:
    """Hidden states of opts.tokens_per_doc positions per document, drawn without replacement from the
    document's window; returns (N, C) float32. Documents shorter than tokens_per_doc give all their tokens."""
    import torch

    rng = np.random.default_rng(opts.seed)
    ctx = min(opts.context, lm.context)
    windows, picks = [], []
    for ids in docs:
        ids = np.asarray(ids, dtype=np.int64)
        if len(ids) == 0:
            continue
        start = 0 if (opts.window == "prefix" or len(ids) <= ctx) else int(rng.integers(0, len(ids) - ctx + 1))
        w = ids[start:start + ctx]
        windows.append(w)
        picks.append(np.sort(rng.choice(len(w), size=min(opts.tokens_per_doc, len(w)), replace=False)))
    if not windows:
        raise ValueError("no non-empty documents to embed")
    device = next(lm.model.parameters()).device
    out = []
    order = np.argsort([len(w) for w in windows], kind="stable")  # similar lengths share a batch
    for i in range(0, len(order), opts.batch_docs):
        group = order[i:i + opts.batch_docs]
        T = max(len(windows[j]) for j in group)
        batch = torch.zeros(len(group), T, dtype=torch.long)  # right padding; causal attention ignores it
        for r, j in enumerate(group):
            batch[r, : len(windows[j])] = torch.from_numpy(windows[j])
        h = lm.hidden(batch.to(device), opts.layer, opts.final_ln).float().cpu().numpy()  # (b, T, C)
        out.extend((j, h[r, picks[j]]) for r, j in enumerate(group))
    out.sort(key=lambda t: t[0])
    return np.concatenate([x for _, x in out]).astype(np.float32)


def test_documents(data_dir: Path, max_docs: int | None = None) -> list[np.ndarray]:
    """The token ids of the test split's documents (without their trailing <|endoftext|>)."""
    from tmcheck.empirics.data import open_split

    data_dir = Path(data_dir)
    tokens = open_split(data_dir, "test")
    starts = np.load(data_dir / "test.idx.npy")
    ends = np.append(starts[1:], len(tokens))
    docs = [np.asarray(tokens[s:e - 1]) for s, e in zip(starts, ends)]
    return docs[:max_docs] if max_docs else docs


def encode_text(lm: CausalLM, texts: list[str], tokenizer_path: Path | None = None) -> list[np.ndarray]:
    """Token ids of texts with the model's tokenizer (ours: tokenizer.json beside the data)."""
    if tokenizer_path is not None:
        from tmcheck.empirics.data.tokens import load_tokenizer

        tok = load_tokenizer(tokenizer_path)
        return [np.asarray(e.ids, dtype=np.int64) for e in tok.encode_batch(texts)]
    if lm.tokenizer is None:
        raise ValueError(f"no tokenizer found for {lm.source}; pass --tokenizer")
    return [np.asarray(lm.tokenizer(t)["input_ids"], dtype=np.int64) for t in texts]


@dataclass
class IDOptions:
    estimator: str = "mle"       # "mle" (inverse mean, scikit-dimension's default) or "mle-mean" (mean of
                                 # per-point estimates); any estimator of tmcheck.empirics.id.ESTIMATORS
    k: int = 20                  # neighbours (paper: K=20)
    protocol: str = "paper"      # "paper": disjoint batches, mean of batch estimates; "full": all points
    batch_size: int = 4096       # paper text: 4096; paper code: 3600
    bootstrap: int = 200         # bootstrap resamples for the interval of a single batch / full protocol
    beta: float = 1.0            # Hölder smoothness for the user's alpha_D (beta=1 is always reported too)

    def as_dict(self) -> dict:
        return asdict(self)


def alpha_d(d: float, beta: float = 1.0) -> float:
    """The predicted data-scaling exponent alpha_D = 2 beta / (2 beta + d) (Theorem 1)."""
    return 2 * beta / (2 * beta + d)


def corpus_id(sweep_dir: Path, corpora: list[str] | None = None, embed: EmbedOptions | None = None,
              ids: IDOptions | None = None, device: str = "auto") -> dict:
    """Embed each corpus's test set with its full-split model and estimate the ID; writes sweep_dir/id.json.

    Returns {corpus: {d, ci, alpha_D (beta=1), alpha_D_beta, options...}}; existing entries of
    id.json computed with other options are replaced, others kept."""
    import json

    from tmcheck.util import atomic
    from tmcheck.empirics.id import estimate_id
    from tmcheck.empirics.sweep import full_split_run, load_config, preset_from_config
    from tmcheck.empirics.train import resolve_device

    sweep_dir = Path(sweep_dir)
    config = load_config(sweep_dir)
    preset = preset_from_config(config)
    embed = embed or EmbedOptions(context=preset.id_context, tokens_per_doc=preset.id_tokens_per_doc)
    ids = ids or IDOptions()
    out_path = sweep_dir / "id.json"
    out = json.loads(out_path.read_text()) if out_path.exists() else {}
    for corpus in corpora or config["corpora"]:
        if corpus not in config["corpora"]:
            raise ValueError(f"corpus {corpus!r} is not in this sweep ({', '.join(config['corpora'])})")
        run = full_split_run(sweep_dir, corpus)
        lm = load_model(run)
        lm.model.to(resolve_device(device))
        docs = test_documents(sweep_dir / "data" / corpus, preset.id_docs)
        X = embed_documents(lm, docs, embed)  # (N, C)
        res = estimate_id(X, estimator=ids.estimator, k=ids.k, protocol=ids.protocol, batch_size=ids.batch_size,
                          bootstrap=ids.bootstrap, device=device, seed=embed.seed)
        d = float(res.dimension)
        ci = list(res.ci) if res.ci is not None else None
        out[corpus] = {
            "d": d, "d_ci": ci, "alpha_D": alpha_d(d, 1.0),
            "alpha_D_ci": [alpha_d(ci[1], 1.0), alpha_d(ci[0], 1.0)] if ci else None,
            "beta": ids.beta, "alpha_D_beta": alpha_d(d, ids.beta),
            "points": int(X.shape[0]), "width": int(X.shape[1]), "documents": len(docs), "model": str(run / "best.pt"),
            "embed_options": embed.as_dict(), "id_options": ids.as_dict(), "estimate": res.as_dict(),
        }
    atomic.write_json(out_path, out)
    return out
