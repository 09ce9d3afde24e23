"""An export of `tmcheck export hf`, made under one transformers and loaded under another.

    python tests/infra/hf_export_check.py make DIR    # tmcheck's venv: a small GPT, its BPE, DIR/hf
    python tests/infra/hf_export_check.py check DIR   # any venv with transformers (tmcheck not needed)

`check` loads DIR/hf with AutoTokenizer and AutoModelForCausalLM offline, tokenizes a prompt far longer
than the context with truncation, generates from it, and fails (exit 1, one line) on any warning or
transformers log message at WARNING or above, on a tokenizer class outside the standard ones, on a
missing or wrong model_max_length, or on truncation that does not cut. .ci/transformers-floor.sh runs
`make` in the lock's venv and `check` in a fresh venv with the floor of tmcheck's range; the default
suite runs both under the lock (tests/empirics/test_lm_own_data_hf.py).
"""

from __future__ import annotations

import io
import json
import logging
import sys
import warnings
from pathlib import Path

CONTEXT = 16
NEW_TOKENS = 4
STANDARD = ("PreTrainedTokenizerFast", "GPT2TokenizerFast", "TokenizersBackend")  # the last: what 5.x loads it as
PROMPT = "Once upon a time there was a little dog who liked to run in the park with her friends. " * 6


def make(root: Path) -> Path:
    """A random GPT of context CONTEXT with a BPE trained on stories, exported to root/hf."""
    import torch

    from tmcheck.empirics.data.stories import stories
    from tmcheck.empirics.data.tokens import train_tokenizer
    from tmcheck.empirics.lm.checkpoint import save_checkpoint
    from tmcheck.empirics.lm.gpt import GPT, GPTConfig
    from tmcheck.empirics.lm.hf import export_hf

    tok = train_tokenizer(stories(0, 300), 300)
    run = root / "run"
    torch.manual_seed(0)  # the same random weights every time
    model = GPT(GPTConfig(vocab_size=tok.get_vocab_size(), block_size=CONTEXT, n_layer=1, n_head=2, n_embd=16))
    save_checkpoint(run / "best.pt", {"model": model.state_dict(), "meta": {"model_config": model.config.__dict__}})
    (run / "tokenizer.json").write_text(tok.to_str(), encoding="utf-8")
    export_hf(run, root / "hf")
    return root / "hf"


def check(hf_dir: Path) -> dict:
    """Load, truncate and generate under the installed transformers; AssertionError naming what failed."""
    import transformers
    from tokenizers import Tokenizer
    from transformers import AutoModelForCausalLM, AutoTokenizer

    log = io.StringIO()
    handler = logging.StreamHandler(log)
    handler.setLevel(logging.WARNING)
    transformers.logging.get_logger().addHandler(handler)
    transformers.logging.disable_progress_bar()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tok = AutoTokenizer.from_pretrained(hf_dir, local_files_only=True)
        model = AutoModelForCausalLM.from_pretrained(hf_dir, local_files_only=True)
        written = json.loads((hf_dir / "tokenizer_config.json").read_text())["tokenizer_class"]
        assert written in STANDARD[:2], f"the export names tokenizer class {written!r}"
        assert type(tok).__name__ in STANDARD, f"loaded as {type(tok).__name__}"
        assert tok.model_max_length == model.config.n_positions == CONTEXT, (tok.model_max_length, CONTEXT)
        full = Tokenizer.from_file(str(hf_dir / "tokenizer.json")).encode(PROMPT).ids  # no warning asked for
        assert len(full) > CONTEXT, "the prompt must be longer than the context"
        assert len(tok(PROMPT, truncation=True).input_ids) == CONTEXT, "truncation=True does not cut"
        enc = tok(PROMPT, truncation=True, max_length=CONTEXT - NEW_TOKENS, return_tensors="pt")
        # min_new_tokens: a random model may emit <|endoftext|> early, which would end generation short
        out = model.generate(**enc, max_new_tokens=NEW_TOKENS, min_new_tokens=NEW_TOKENS, do_sample=False)
        assert out.shape[1] == CONTEXT, out.shape
        text = tok.decode(out[0][-NEW_TOKENS:])
    noise = [str(w.message).splitlines()[0][:160] for w in caught] + log.getvalue().strip().splitlines()
    assert not noise, f"warnings under transformers {transformers.__version__}: {noise}"
    return {"transformers": transformers.__version__, "tokenizer": type(tok).__name__, "generated": text}


if __name__ == "__main__":
    what, where = sys.argv[1], Path(sys.argv[2])
    try:
        result = {"hf": str(make(where))} if what == "make" else check(where / "hf")
    except AssertionError as exc:
        print(f"hf_export_check: {exc}", file=sys.stderr)
        sys.exit(1)
    print(json.dumps(result))
