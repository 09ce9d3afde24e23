"""An export of `tmcheck export hf`, made under one transformers and loaded under another.

    python tests/infra/hf_export_check.py make DIR      # tmcheck's venv: DIR/hf and DIR/reference.json
    python tests/infra/hf_export_check.py check DIR     # any venv with transformers (tmcheck not needed)
    python tests/infra/hf_export_check.py mutant DIR    # the same check on an export that returns token_type_ids

`make` exports a small GPT and writes, beside the export, tmcheck's own answers (reference.json): the
token ids of its BPE and the logits of its GPT for each prompt, and the greedy continuation with the
logits of each step. `check` loads DIR/hf with AutoTokenizer and AutoModelForCausalLM offline and
compares, to TOL, the logits of the calls a user makes: `model(**tok(text))`, `generate(**enc)`, a
right-padded batch through `model(**enc)` and a left-padded batch through `generate(**enc)`. It also
tokenizes a prompt far longer than the context with truncation, and fails (exit 1, one line) on any
warning or transformers log message at WARNING or above, on a tokenizer class outside the standard
ones, on a missing or wrong model_max_length, or on truncation that does not cut. `mutant` makes a
copy of the export whose tokenizer returns token_type_ids (what transformers 4.x did with the exports
before `model_input_names`: GPT-2 adds their embeddings at every position) and exits 0 only when
`check` fails on it.

.ci/transformers-floor.sh runs `make` in the lock's venv, then `check` and `mutant` in a fresh venv
with the floor of tmcheck's range; the default suite runs all three under the lock
(tests/empirics/test_lm_own_data_hf.py).
"""

from __future__ import annotations

import io
import json
import logging
import shutil
import sys
import warnings
from pathlib import Path

CONTEXT = 16
NEW_TOKENS = 4
TOL = 1e-4  # max |logit difference|; float32 on one CPU differs by about 1e-6
STANDARD = ("PreTrainedTokenizerFast", "GPT2TokenizerFast", "TokenizersBackend")  # the last: what 5.x loads it as
PROMPT = "Once upon a time there was a little dog who liked to run in the park with her friends. " * 6
BATCH = ("The dog ran", "A cat")  # two lengths (9 and 4 tokens): one row is padded


def make(root: Path) -> Path:
    """A random GPT of context CONTEXT with a BPE trained on stories, exported to root/hf, and
    tmcheck's own token ids and logits in root/reference.json."""
    import torch

    from tmcheck.empirics.data.stories import stories
    from tmcheck.empirics.data.tokens import train_tokenizer
    from tmcheck.empirics.lm.checkpoint import save_checkpoint
    from tmcheck.empirics.lm.gpt import GPT, GPTConfig
    from tmcheck.empirics.lm.hf import EOT, export_hf

    tok = train_tokenizer(stories(0, 300), 300)
    run = root / "run"
    torch.manual_seed(0)  # the same random weights every time
    model = GPT(GPTConfig(vocab_size=tok.get_vocab_size(), block_size=CONTEXT, n_layer=1, n_head=2, n_embd=16))
    with torch.no_grad():  # spread the logits: a greedy step must not hang on a near-tie
        for p in model.parameters():
            if p.dim() == 2:
                p.mul_(20)
    save_checkpoint(run / "best.pt", {"model": model.state_dict(), "meta": {"model_config": model.config.__dict__}})
    (run / "tokenizer.json").write_text(tok.to_str(), encoding="utf-8")
    export_hf(run, root / "hf")
    model.eval()
    eot = tok.token_to_id(EOT)
    prompts = [tok.encode(PROMPT).ids[: CONTEXT - NEW_TOKENS]] + [tok.encode(p).ids for p in BATCH]
    assert all(len(ids) <= CONTEXT - NEW_TOKENS for ids in prompts), "a prompt leaves no room to generate"
    ref = {"prompt": prompts[0], "batch": [], "eot": eot}
    for ids in prompts:
        seq, steps = list(ids), []
        with torch.no_grad():
            logits = model(torch.tensor([ids]))[0][0]  # (T, V)
            for _ in range(NEW_TOKENS):  # greedy, <|endoftext|> barred as generate's min_new_tokens does
                step = model(torch.tensor([seq]))[0][0, -1]
                steps.append(step.tolist())
                masked = step.clone()
                masked[eot] = float("-inf")
                top2 = masked.topk(2).values
                assert top2[0] - top2[1] > 100 * TOL, "a near-tie: the greedy continuation is not well defined"
                seq.append(int(masked.argmax()))
        ref["batch"].append({"ids": ids, "logits": logits.tolist(), "new": seq[len(ids) :], "steps": steps})
    (root / "reference.json").write_text(json.dumps(ref), encoding="utf-8")
    return root / "hf"


def close(got, want, what: str) -> float:
    """max |got - want|; AssertionError naming `what` beyond TOL."""
    import torch

    got, want = torch.as_tensor(got, dtype=torch.float64), torch.as_tensor(want, dtype=torch.float64)
    assert got.shape == want.shape, f"{what}: shape {tuple(got.shape)}, tmcheck's {tuple(want.shape)}"
    diff = float((got - want).abs().max())
    assert diff <= TOL, f"{what}: logits differ from tmcheck's by {diff:.3g} (> {TOL})"
    return diff


def same_logits(model, tok, ref: dict) -> float:
    """The logits of `model(**tok(...))`, `generate(**enc)` and two padded batches against tmcheck's;
    the largest difference."""
    import torch

    one, rows = ref["batch"][0], ref["batch"][1:]
    worst = 0.0
    with torch.no_grad():
        enc = tok(PROMPT, truncation=True, max_length=CONTEXT - NEW_TOKENS, return_tensors="pt")
        assert enc.input_ids[0].tolist() == one["ids"], "the tokenizer's ids differ from tmcheck's BPE"
        worst = max(worst, close(model(**enc).logits[0], one["logits"], "model(**tok(text))"))
        gen = model.generate(
            **enc,
            max_new_tokens=NEW_TOKENS,
            min_new_tokens=NEW_TOKENS,  # a random model may emit <|endoftext|> early
            do_sample=False,
            output_logits=True,
            return_dict_in_generate=True,
        )
        worst = max(worst, close(torch.stack(gen.logits)[:, 0], one["steps"], "generate(**enc)"))
        assert gen.sequences[0, -NEW_TOKENS:].tolist() == one["new"], "generate(**enc) wrote other tokens"
        tok.padding_side = "right"  # the default
        enc = tok(list(BATCH), padding=True, return_tensors="pt")
        logits = model(**enc).logits
        for i, row in enumerate(rows):
            n = len(row["ids"])
            assert enc.input_ids[i, :n].tolist() == row["ids"] and int(enc.attention_mask[i].sum()) == n
            worst = max(worst, close(logits[i, :n], row["logits"], "a right-padded batch through model(**enc)"))
        tok.padding_side = "left"  # what batched generation asks for
        enc = tok(list(BATCH), padding=True, return_tensors="pt")
        gen = model.generate(
            **enc,
            max_new_tokens=NEW_TOKENS,
            min_new_tokens=NEW_TOKENS,
            do_sample=False,
            output_logits=True,
            return_dict_in_generate=True,
        )
        for i, row in enumerate(rows):
            worst = max(worst, close(torch.stack(gen.logits)[:, i], row["steps"], "a left-padded generate(**enc)"))
            assert gen.sequences[i, -NEW_TOKENS:].tolist() == row["new"], "a batched generate wrote other tokens"
    return worst


def check(hf_dir: Path) -> dict:
    """Load, compare the logits, truncate and generate under the installed transformers;
    AssertionError naming what failed. tmcheck's answers are read from reference.json beside hf_dir."""
    import transformers
    from tokenizers import Tokenizer
    from transformers import AutoModelForCausalLM, AutoTokenizer

    ref = json.loads((hf_dir.parent / "reference.json").read_text(encoding="utf-8"))
    log = io.StringIO()
    handler = logging.StreamHandler(log)
    handler.setLevel(logging.WARNING)
    transformers.logging.get_logger().addHandler(handler)
    transformers.logging.disable_progress_bar()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tok = AutoTokenizer.from_pretrained(hf_dir, local_files_only=True)
        model = AutoModelForCausalLM.from_pretrained(hf_dir, local_files_only=True)
        model.eval()
        written = json.loads((hf_dir / "tokenizer_config.json").read_text())["tokenizer_class"]
        assert written in STANDARD[:2], f"the export names tokenizer class {written!r}"
        assert type(tok).__name__ in STANDARD, f"loaded as {type(tok).__name__}"
        assert tok.model_max_length == model.config.n_positions == CONTEXT, (tok.model_max_length, CONTEXT)
        worst = same_logits(model, tok, ref)
        assert sorted(tok("x").keys()) == ["attention_mask", "input_ids"], f"the tokenizer returns {list(tok('x'))}"
        full = Tokenizer.from_file(str(hf_dir / "tokenizer.json")).encode(PROMPT).ids  # no warning asked for
        assert len(full) > CONTEXT, "the prompt must be longer than the context"
        assert len(tok(PROMPT, truncation=True).input_ids) == CONTEXT, "truncation=True does not cut"
        tok.padding_side = "right"
        enc = tok(PROMPT, truncation=True, max_length=CONTEXT - NEW_TOKENS, return_tensors="pt")
        out = model.generate(**enc, max_new_tokens=NEW_TOKENS, min_new_tokens=NEW_TOKENS, do_sample=False)
        assert out.shape[1] == CONTEXT, out.shape
        text = tok.decode(out[0][-NEW_TOKENS:])
    noise = [str(w.message).splitlines()[0][:160] for w in caught] + log.getvalue().strip().splitlines()
    assert not noise, f"warnings under transformers {transformers.__version__}: {noise}"
    return {
        "transformers": transformers.__version__,
        "tokenizer": type(tok).__name__,
        "generated": text,
        "max_logit_difference": worst,
    }


def mutant(hf_dir: Path) -> Path:
    """A copy of the export (beside it, with reference.json) whose tokenizer returns token_type_ids."""
    root = hf_dir.parent.parent / f"{hf_dir.parent.name}-mutant"
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(hf_dir, root / "hf")
    shutil.copy(hf_dir.parent / "reference.json", root / "reference.json")
    config = json.loads((root / "hf" / "tokenizer_config.json").read_text())
    config["model_input_names"] = ["input_ids", "token_type_ids", "attention_mask"]
    (root / "hf" / "tokenizer_config.json").write_text(json.dumps(config))
    return root / "hf"


if __name__ == "__main__":
    what, where = sys.argv[1], Path(sys.argv[2])
    try:
        if what == "make":
            result = {"hf": str(make(where))}
        elif what == "check":
            result = check(where / "hf")
        else:
            try:
                check(mutant(where / "hf"))
            except AssertionError as caught:
                result = {"mutant": "fails as it must", "why": str(caught)}
            else:
                raise AssertionError("the export returning token_type_ids passed: the check cannot fail")
    except AssertionError as exc:
        print(f"hf_export_check: {exc}", file=sys.stderr)
        sys.exit(1)
    print(json.dumps(result))
