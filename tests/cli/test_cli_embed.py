"""`tmcheck embed` through the real CLI app, on tiny models of both kinds made here: --batch-docs does
not change an embedding, options that do not apply are one line and exit 2."""

import json
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

from tmcheck.cli.main import app

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "empirics"))  # the model makers beside the library tests
from test_embed_models import TEXTS, make_bert

runner = CliRunner()


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    from transformers import PreTrainedTokenizerFast

    from tmcheck.empirics.data.tokens import train_tokenizer
    from tmcheck.empirics.lm.gpt import GPT, GPTConfig, to_hf

    root = tmp_path_factory.mktemp("embed")
    make_bert(root / "bert", TEXTS)
    torch.manual_seed(0)
    gpt = GPT(GPTConfig(vocab_size=300, block_size=64, n_layer=2, n_head=2, n_embd=16)).eval()
    to_hf(gpt).save_pretrained(root / "gpt2")
    PreTrainedTokenizerFast(tokenizer_object=train_tokenizer(TEXTS, 300), eos_token="<|endoftext|>").save_pretrained(
        root / "gpt2"
    )
    (root / "docs.txt").write_text("\n\n".join(TEXTS), encoding="utf-8")
    return root


@pytest.mark.parametrize("model,kind", [("bert", "encoder"), ("gpt2", "causal")])
def test_batch_size_1_and_16_identical(setup, model, kind):
    outs = []
    for bs in (1, 16):
        out = setup / f"{model}-{bs}.npy"
        res = runner.invoke(
            app,
            [
                "embed",
                str(setup / model),
                "--text",
                str(setup / "docs.txt"),
                "--output",
                str(out),
                "--batch-docs",
                str(bs),
                "--context",
                "64",
                "--tokens-per-doc",
                "8",
                "--json",
            ],
        )
        assert res.exit_code == 0, res.output
        assert json.loads(res.stdout)["kind"] == kind
        outs.append(np.load(out))
    assert outs[0].shape == (8 * len(TEXTS), 32 if model == "bert" else 16)
    np.testing.assert_array_equal(outs[0], outs[1])


# why kept: a table of bad inputs, one case a row: the shape of other such tables, other data
@pytest.mark.parametrize(
    "args,message",
    [
        (["--final-ln", "before"], "--final-ln before does not apply"),
        (["--layer", "5"], "--layer must be in 0..2"),
        (["--batch-docs", "0"], "--batch-docs"),
        (["--device", "tpu"], "unknown device"),
        (["--special-tokens", "drop"], "special_tokens"),
    ],
)
def test_options_that_do_not_apply_are_one_line(setup, args, message):
    res = runner.invoke(
        app, ["embed", str(setup / "bert"), "--text", str(setup / "docs.txt"), "--output", str(setup / "x.npy"), *args]
    )
    assert res.exit_code == 2, res.output
    assert message in res.stderr and len(res.stderr.strip().splitlines()) == 1
    assert res.stdout == ""  # and loading printed nothing


def _hostile(setup, name: str) -> Path:
    """Files and directories a hostile user hands to embed, made once per name."""
    import os
    import pickle
    import shutil

    from tmcheck.empirics.data.tokens import train_tokenizer

    path = setup / name
    if path.exists():
        return path
    if name == "notjson.json":
        path.write_text("not json {")
    elif name == "big_tokenizer.json":  # another model's tokenizer: ids beyond the vocabulary of 300
        train_tokenizer(TEXTS * 3 + ["zebra quokka xylophone juxtapose"] * 5, 1000).save(str(path))
    elif name == "pickled":  # an HF directory whose weights are a pickle that would run a command
        shutil.copytree(setup / "gpt2", path)
        os.remove(path / "model.safetensors")

        class Payload:
            def __reduce__(self):
                return (os.system, (f"touch {setup / 'PWNED'}",))

        (path / "pytorch_model.bin").write_bytes(pickle.dumps(Payload()))
    return path


@pytest.mark.parametrize(
    "model,extra,message",
    [
        ("gpt2", ["--tokenizer", "absent.json"], "no such tokenizer file"),
        ("gpt2", ["--tokenizer", "notjson.json"], "not a tokenizer.json"),
        ("gpt2", ["--tokenizer", "big_tokenizer.json"], "vocabulary has 300 entries"),
        ("pickled", [], "safetensors only"),
    ],
)
def test_hostile_inputs_are_one_line_and_run_nothing(setup, model, extra, message):
    if extra and extra[1] != "absent.json":
        extra = [extra[0], str(_hostile(setup, extra[1]))]
    elif extra:
        extra = [extra[0], str(setup / extra[1])]
    src = _hostile(setup, model) if model == "pickled" else setup / model
    res = runner.invoke(
        app,
        [
            "embed",
            str(src),
            "--text",
            str(setup / "docs.txt"),
            "--output",
            str(setup / "h.npy"),
            "--context",
            "64",
            "--tokens-per-doc",
            "4",
            *extra,
        ],
    )
    assert res.exit_code == 2, res.output
    assert message in res.stderr and len(res.stderr.strip().splitlines()) == 1
    assert not (setup / "PWNED").exists() and not (setup / "h.npy").exists()


def test_the_pickle_payload_is_real(setup, tmp_path):
    """The refused payload does run when unpickled: the test above could fail."""
    import pickle

    (setup / "PWNED").unlink(missing_ok=True)
    pickle.loads((_hostile(setup, "pickled") / "pytorch_model.bin").read_bytes())
    assert (setup / "PWNED").exists()
    (setup / "PWNED").unlink()


def _embed(setup, *extra, model="gpt2", env=None):
    args = ["embed", str(setup / model), "--text", str(setup / "docs.txt"), "--output", str(setup / "m.npy")]
    return runner.invoke(app, [*args, "--context", "64", "--tokens-per-doc", "4", *map(str, extra)], env=env)


@pytest.mark.parametrize(("extra", "block"), [((), 2), (("--layer", "1"), 1), (("--layer", "0"), 0)])
def test_the_metadata_names_the_layer_embedded(setup, extra, block):
    # before: "layer": null for the default (the last block)
    res = _embed(setup, *extra, "--json")
    assert res.exit_code == 0, res.output
    info = json.loads(res.stdout)
    assert (info["layer"], info["layers"]) == (block, 2)
    assert json.loads((setup / "m.json").read_text())["layer"] == block  # the file's metadata too


def test_embed_shows_progress_with_elapsed_time(setup, monkeypatch):
    # before: nothing on stderr while the model ran
    import re

    import tmcheck.cli.embed as cli_embed

    monkeypatch.setattr(cli_embed, "PROGRESS_MIN_DOCS", 1)
    res = _embed(setup, "--json", env={"TMCHECK_PROGRESS": "always"})
    assert res.exit_code == 0 and f"embedding {len(TEXTS)} documents at layer 2" in res.stderr
    assert re.search(r"\d:\d\d:\d\d", res.stderr), res.stderr
    json.loads(res.stdout)
    assert "embedding" not in _embed(setup, env={"TMCHECK_PROGRESS": "never"}).stderr


@pytest.mark.parametrize("special", ["fifo", "directory"])
def test_a_text_that_is_no_regular_file_is_refused_at_once(setup, tmp_path, special):
    # before: a FIFO was called "no such text file" (is_file is false for it)
    import os
    import time

    path = tmp_path / special
    os.mkfifo(path) if special == "fifo" else path.mkdir()
    t0 = time.monotonic()
    res = runner.invoke(app, ["embed", str(setup / "gpt2"), "--text", str(path), "--output", str(tmp_path / "o.npy")])
    assert res.exit_code == 2 and f"{path} is a" in res.stderr and len(res.stderr.strip().splitlines()) == 1
    assert time.monotonic() - t0 < 1.0
