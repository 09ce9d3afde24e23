"""Token embeddings for the intrinsic-dimension measurement (Section 3 and Appendix A of the paper).

The paper's protocol: for each test document take a 1024-token subsequence, run the model trained
on the full training split, and keep the final-layer hidden states of 32 tokens of that
subsequence. Its released code differs in ways kept here as explicit options, and recorded:
- `window`: "random" (a random window, as stated) or "prefix" (the first tokens, as coded);
- `final_ln`: "after" or "before" the final LayerNorm (the code used "before" for nanoGPT
  checkpoints and "after" for transformers models); only models with a final norm (pre-LN causal
  models) have the choice;
- `layer`: any block by index (1-based; 0 = the input embeddings); the default is the last.

Models, nothing ever downloaded: our checkpoints (a file or a run directory), and any local
transformers directory, loaded with ``AutoModel`` (the base model, no head, so no warnings about
head weights) as one of two kinds, read from its config:
- ``causal`` (GPT-2, Pythia, Llama, ...: an architecture ending in ForCausalLM/LMHeadModel, or
  ``is_decoder``);
- ``encoder`` (BERT, MiniLM, RoBERTa, ...: everything else that is not encoder-decoder).

Batches are right-padded with an attention mask, to a length that depends on the input alone
(``padded_length``), so an embedding is bit-identical whatever batch it was computed in (without
the mask a BERT attends to the padding, and most MiniLM token vectors change with the batch size).
Special tokens the tokenizer adds ([CLS]/[SEP], BOS/EOS) are added around each window, as the
model was trained, and not counted as points unless ``special_tokens="include"``.
"""

from __future__ import annotations

import contextlib
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from tmcheck.util import safeio

KINDS = ("tmcheck", "causal", "encoder")


@dataclass
class EmbedOptions:
    context: int = 1024  # tokens per document fed to the model (paper: 1024)
    tokens_per_doc: int = 32  # hidden states kept per document (paper: 32)
    window: str = "random"  # "random" (paper text) or "prefix" (paper code)
    final_ln: str = "after"  # "after" or "before" the final LayerNorm, last layer only
    layer: int | None = None  # block index, 1-based; 0 = embeddings; None = last
    seed: int = 0  # windows and token positions
    batch_docs: int = 16  # documents per forward pass (the result does not depend on it)
    special_tokens: str = "exclude"  # "exclude" or "include" the tokenizer's special tokens as points

    def __post_init__(self):
        if self.window not in ("random", "prefix"):
            raise ValueError(f"window must be 'random' or 'prefix', got {self.window!r}")
        if self.final_ln not in ("after", "before"):
            raise ValueError(f"final_ln must be 'after' or 'before', got {self.final_ln!r}")
        if self.special_tokens not in ("exclude", "include"):
            raise ValueError(f"special_tokens must be 'exclude' or 'include', got {self.special_tokens!r}")
        if self.context < 1 or self.tokens_per_doc < 1 or self.batch_docs < 1:
            raise ValueError("context, tokens_per_doc and batch_docs must be positive")

    def as_dict(self) -> dict:
        return asdict(self)


class LanguageModel:
    """A uniform view of our GPT and of local transformers models:
    hidden(ids, mask, layer, final_ln) -> (B, T, C). kind: 'tmcheck', 'causal' or 'encoder'."""

    def __init__(self, model, kind: str, tokenizer=None, source: str = ""):
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
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

    @property
    def vocab_size(self) -> int:
        return int(self.model.config.vocab_size)

    @property
    def pad_id(self) -> int:
        tok = self.tokenizer
        pad = None if tok is None else (tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id)
        return int(pad or 0)  # padded positions are masked, so the id only has to be valid

    def check_options(self, opts: EmbedOptions) -> None:
        """A one-line ValueError for an option that does not apply to this kind of model."""
        if opts.layer is not None and not 0 <= opts.layer <= self.n_layer:
            raise ValueError(
                f"--layer must be in 0..{self.n_layer} for {self.source} ({self.n_layer} blocks), got {opts.layer}"
            )
        last = opts.layer is None or opts.layer == self.n_layer
        if opts.final_ln == "before" and last and self.kind != "tmcheck" and _final_norm(self.model) is None:
            raise ValueError(
                f"--final-ln before does not apply to {self.source}: this {self.kind} model "
                f"({type(self.model).__name__}) has no final LayerNorm, so its last layer has one value"
            )

    def hidden(self, ids, mask=None, layer: int | None = None, final_ln: str = "after"):
        """Residual stream after block `layer` (None: last), (B, T, C); mask (B, T) marks real tokens."""
        import torch

        L = self.n_layer if layer is None else layer
        if not 0 <= L <= self.n_layer:
            raise ValueError(f"layer must be in 0..{self.n_layer}, got {layer}")
        with torch.no_grad():
            if self.kind == "tmcheck":  # causal and right-padded: real tokens never see the padding
                return self.model.hidden_states(ids, L, final_ln == "after")
            if L < self.n_layer or final_ln == "after":
                # hidden_states[L] is the residual stream after block L; the last entry has the final
                # norm applied (pre-LN models) or is the last block's output (post-LN encoders)
                return self.model(input_ids=ids, attention_mask=mask, output_hidden_states=True).hidden_states[L]
            captured = {}
            handle = _final_norm(self.model).register_forward_hook(lambda m, inp, out: captured.setdefault("x", inp[0]))
            try:
                self.model(input_ids=ids, attention_mask=mask)
            finally:
                handle.remove()
            return captured["x"]

    def hidden_layers(self, ids, mask, layers: list[int], final_ln: str = "after") -> list:
        """`hidden` at several layers; a transformers model computes them in one forward pass."""
        import torch

        if self.kind == "tmcheck" or (final_ln == "before" and self.n_layer in layers):
            return [self.hidden(ids, mask, L, final_ln) for L in layers]
        bad = [L for L in layers if not 0 <= L <= self.n_layer]
        if bad:
            raise ValueError(f"layer must be in 0..{self.n_layer}, got {bad[0]}")
        with torch.no_grad():
            hs = self.model(input_ids=ids, attention_mask=mask, output_hidden_states=True).hidden_states
        return [hs[L] for L in layers]

    def special_ids(self) -> tuple[list[int], list[int]]:
        """(ids put before, ids put after) a window, as the tokenizer adds them to a text."""
        tok = self.tokenizer
        if tok is None or self.kind == "tmcheck":
            return [], []
        content = tok("a", add_special_tokens=False)["input_ids"]
        full = tok("a")["input_ids"]  # the same text as the tokenizer wraps it
        for i in range(len(full) - len(content) + 1):
            if full[i : i + len(content)] == content:
                return list(full[:i]), list(full[i + len(content) :])
        raise ValueError(f"cannot tell the special tokens of the tokenizer of {self.source}")


def _final_norm(model):
    """The final LayerNorm of a pre-LN model (GPT-2's ln_f, Pythia's final_layer_norm, ...), or None."""
    base = getattr(model, "base_model", model)
    for name in ("ln_f", "final_layer_norm", "norm", "final_layernorm"):
        if hasattr(base, name):
            return getattr(base, name)
    return None


def model_kind(config) -> str:
    """'causal' or 'encoder' from a transformers config; encoder-decoder models are refused."""
    if getattr(config, "is_encoder_decoder", False):
        raise ValueError(
            f"{config.model_type}: encoder-decoder models are not supported; give an encoder or a causal LM"
        )
    archs = getattr(config, "architectures", None) or []
    if getattr(config, "is_decoder", False) or any(a.endswith(("ForCausalLM", "LMHeadModel")) for a in archs):
        return "causal"
    if archs:
        return "encoder"
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
        MODEL_FOR_MASKED_LM_MAPPING_NAMES,
    )

    mt = config.model_type
    return (
        "causal"
        if mt in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES and mt not in MODEL_FOR_MASKED_LM_MAPPING_NAMES
        else "encoder"
    )


@contextlib.contextmanager
def _quiet_transformers():
    """transformers' logging at error level while loading (no wall of unused-weight notes), then restored."""
    from transformers.utils import logging as hf_logging

    old = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        hf_logging.set_verbosity(old)
        hf_logging.enable_progress_bar()


def load_model(path: Path) -> LanguageModel:
    """Our checkpoint (file, or run directory) or a local transformers directory (causal or encoder)."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(2, "no such model file or directory", str(path))
    if not (path / "config.json").exists():
        if path.is_dir() and not any((path / n).is_file() for n in ("best.safetensors", "last.safetensors", "best.pt")):
            raise ValueError(
                f"{path} is neither a tmcheck checkpoint nor a transformers model directory (no config.json)"
            )
        from tmcheck.empirics.lm.checkpoint import load_gpt, resolve

        return LanguageModel(load_gpt(path), "tmcheck", source=str(resolve(path)))
    from transformers import AutoConfig, AutoModel, AutoTokenizer

    with _quiet_transformers():
        config = AutoConfig.from_pretrained(path, local_files_only=True)
        kind = model_kind(config)
        try:
            model = AutoModel.from_pretrained(path, local_files_only=True)
        except (OSError, ValueError, TypeError) as exc:
            raise ValueError(f"cannot load {path}: {str(exc).splitlines()[0]}") from None
        try:
            tok = AutoTokenizer.from_pretrained(path, local_files_only=True)
        except (OSError, ValueError, TypeError):
            tok = None
    return LanguageModel(model, kind, tok, source=str(path))


PAD_MULTIPLE = 32


def padded_length(n: int, limit: int) -> int:
    """The length an input of n tokens is padded to: the next multiple of 32, at most limit.

    It depends on n alone, never on the other inputs of a batch. Padding is masked, but a longer
    padded sequence changes the floating-point summation order of attention (MiniLM: |diff| up to 4e-6
    between 100 tokens alone and padded to 128), while the batch size itself does not change a
    row's result; so with this rule the embeddings are bit-identical for every batch size."""
    return min(-(-n // PAD_MULTIPLE) * PAD_MULTIPLE, limit)


def embed_documents(
    lm: LanguageModel,
    docs: list[np.ndarray],
    opts: EmbedOptions,
    positions: bool = False,
    layers: list[int] | None = None,
):
    """Hidden states of opts.tokens_per_doc positions per document, drawn without replacement from the
    document's window (special tokens added around it and, by default, never drawn); returns (N, C)
    float32. Documents shorter than tokens_per_doc give all their tokens. With `positions`, returns
    (X, pos): pos (N,) the 0-based position of each row's token within its window (a special token
    put before the window has position -1; the ablation by context position reads it). With `layers`
    (block indices), returns {layer: X} for the same tokens from one pass (opts.layer is ignored)."""
    import torch

    lm.check_options(opts)
    rng = np.random.default_rng(opts.seed)
    before, after = lm.special_ids()
    ctx = min(opts.context, lm.context) - len(before) - len(after)
    if ctx < 1:
        raise ValueError(f"context {opts.context} leaves no room for tokens besides the special tokens")
    inputs, picks = [], []
    for ids in docs:
        ids = np.asarray(ids, dtype=np.int64)
        if len(ids) == 0:
            continue
        start = 0 if (opts.window == "prefix" or len(ids) <= ctx) else int(rng.integers(0, len(ids) - ctx + 1))
        w = ids[start : start + ctx]
        full = np.concatenate([np.asarray(before, dtype=np.int64), w, np.asarray(after, dtype=np.int64)])
        pool = (
            np.arange(len(full)) if opts.special_tokens == "include" else np.arange(len(before), len(before) + len(w))
        )
        inputs.append(full)
        picks.append(np.sort(rng.choice(pool, size=min(opts.tokens_per_doc, len(pool)), replace=False)))
    if not inputs:
        raise ValueError("no non-empty documents to embed")
    top = max(int(w.max()) for w in inputs)
    if top >= lm.vocab_size or min(int(w.min()) for w in inputs) < 0:
        where = lm.source or "the model"
        raise ValueError(f"token id {top:,} lies outside the vocabulary of {where} ({lm.vocab_size:,})")
    device = next(lm.model.parameters()).device
    limit = ctx + len(before) + len(after)
    padded = [padded_length(len(w), limit) for w in inputs]
    want = list(layers) if layers is not None else [opts.layer if opts.layer is not None else lm.n_layer]
    out = {L: [] for L in want}
    for T in sorted(set(padded)):  # a batch holds inputs of one padded length only
        members = [j for j in range(len(inputs)) if padded[j] == T]
        for i in range(0, len(members), opts.batch_docs):
            group = members[i : i + opts.batch_docs]
            batch = torch.full((len(group), T), lm.pad_id, dtype=torch.long)  # right padding, masked
            mask = torch.zeros(len(group), T, dtype=torch.long)
            for r, j in enumerate(group):
                batch[r, : len(inputs[j])] = torch.from_numpy(inputs[j])
                mask[r, : len(inputs[j])] = 1
            ids, m = batch.to(device), mask.to(device)
            hs = (
                lm.hidden_layers(ids, m, want, opts.final_ln)
                if layers is not None
                else [lm.hidden(ids, m, opts.layer, opts.final_ln)]
            )
            for L, h in zip(want, hs, strict=True):
                h = h.float().cpu().numpy()  # (b, T, C)
                out[L].extend((j, h[r, picks[j]]) for r, j in enumerate(group))
    Xs = {}
    for L, rows in out.items():
        rows.sort(key=lambda t: t[0])
        Xs[L] = np.concatenate([x for _, x in rows]).astype(np.float32)
        if not np.isfinite(Xs[L]).all():  # NaN weights (a diverged run) give NaN rows: not points
            raise ValueError(f"{lm.source or 'the model'} gives NaN or infinite hidden states at layer {L}")
    if layers is not None:
        return Xs
    X = Xs[want[0]]
    if positions:
        order = sorted(j for j, _ in out[want[0]])
        return X, np.concatenate([picks[j] - len(before) for j in order]).astype(np.int64)
    return X


def test_documents(data_dir: Path, max_docs: int | None = None) -> list[np.ndarray]:
    """The token ids of the test split's documents (without their trailing <|endoftext|>)."""
    from tmcheck.empirics.data import open_split

    data_dir = Path(data_dir)
    tokens = open_split(data_dir, "test")
    starts = np.load(safeio.check_regular(data_dir / "test.idx.npy", "a document index"), allow_pickle=False)
    if starts.ndim != 1 or len(starts) and (starts[0] != 0 or np.any(np.diff(starts) < 1) or starts[-1] >= len(tokens)):
        raise ValueError(f"{data_dir / 'test.idx.npy'} is not the document index of the test split")
    ends = np.append(starts[1:], len(tokens))
    docs = [np.asarray(tokens[s : e - 1]) for s, e in zip(starts, ends, strict=True)]
    return docs[:max_docs] if max_docs else docs


def encode_text(lm: LanguageModel, texts: list[str], tokenizer_path: Path | None = None) -> list[np.ndarray]:
    """Token ids of texts with the model's tokenizer (ours: tokenizer.json beside the data)."""
    if tokenizer_path is not None:
        from tmcheck.empirics.data.tokens import load_tokenizer

        tok = load_tokenizer(tokenizer_path)
        return [np.asarray(e.ids, dtype=np.int64) for e in tok.encode_batch(texts)]
    if lm.tokenizer is None:
        raise ValueError(f"no tokenizer found for {lm.source}; pass --tokenizer")
    # content tokens only: embed_documents adds the special tokens around each window. A document longer
    # than the model's maximum length is fine (it is windowed), so transformers' "(590 > 512) ... will
    # result in indexing errors" warning would mislead: it is silenced here.
    with _quiet_transformers():
        return [np.asarray(lm.tokenizer(t, add_special_tokens=False)["input_ids"], dtype=np.int64) for t in texts]


EMBEDDING_FORMATS = (".safetensors", ".npy")


def save_embeddings(path: Path, X: np.ndarray, info: dict) -> list[Path]:
    """The embeddings X (points, width) with their metadata, written atomically: a .safetensors file holds
    both (tensor "embeddings", metadata as JSON strings in its header); a .npy file gets the metadata in
    a .json beside it. Returns the files written."""
    import io
    import json

    from tmcheck.util.atomic import write_bytes, write_text

    path = Path(path)
    if path.suffix not in EMBEDDING_FORMATS:
        raise ValueError(f"the embeddings file must end in {' or '.join(EMBEDDING_FORMATS)}, got {path}")
    meta = {k: json.dumps(v) for k, v in info.items()}
    if path.suffix == ".safetensors":
        from safetensors.numpy import save

        write_bytes(path, save({"embeddings": np.ascontiguousarray(X)}, metadata=meta))
        return [path]
    buf = io.BytesIO()
    np.save(buf, X)
    write_bytes(path, buf.getvalue())
    side = path.with_suffix(".json")
    write_text(side, json.dumps(info, indent=2) + "\n")
    return [path, side]


def load_embeddings(path: Path) -> tuple[np.ndarray, dict]:
    """The embeddings and the metadata `save_embeddings` wrote."""
    import json

    path = safeio.check_regular(path, "an embeddings file")
    if path.suffix == ".safetensors":
        from safetensors import safe_open

        with safe_open(str(path), framework="np") as f:
            meta = f.metadata() or {}
            return f.get_tensor("embeddings"), {k: json.loads(v) for k, v in meta.items()}
    side = path.with_suffix(".json")
    return np.load(path, allow_pickle=False), safeio.read_json_optional(side, "an embeddings record", {})
