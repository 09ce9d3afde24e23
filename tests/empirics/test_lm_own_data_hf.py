"""One's own corpus, model-size flags, `export hf` to a GPT-2 directory and `train --init-from` it."""

import json

import pytest
import torch
from typer.testing import CliRunner

from tmcheck.cli.main import app
from tmcheck.empirics.data.corpora import load_corpus, split_corpus
from tmcheck.empirics.data.stories import stories
from tmcheck.empirics.lm.checkpoint import load_gpt

runner = CliRunner()


@pytest.fixture(scope="module")
def my_text(tmp_path_factory):
    path = tmp_path_factory.mktemp("own") / "my.txt"
    docs = stories(7, 600)
    path.write_text("\n\n".join(docs + docs[:50]), encoding="utf-8")  # 50 exact duplicates to drop
    return path


@pytest.fixture(scope="module")
def trained(my_text, tmp_path_factory):
    out = tmp_path_factory.mktemp("runs") / "mine"
    res = runner.invoke(
        app,
        [
            "train",
            "--text",
            str(my_text),
            "--n-layer",
            "2",
            "--n-embd",
            "64",
            "--block-size",
            "32",
            "--max-steps",
            "60",
            "--threads",
            "1",
            "--out",
            str(out),
            "--json",
        ],
    )
    assert res.exit_code == 0, res.output
    return out, json.loads(res.stdout)


def test_own_text_is_split_and_deduplicated_like_the_builtins(my_text):
    docs = load_corpus(f"text:{my_text}")
    assert len(docs) == len(set(docs)) and len(docs) < my_text.read_text().count("\n\n") + 1
    parts = split_corpus(docs)
    assert all(parts[s] for s in ("train", "val", "test"))


def test_own_directory_is_a_corpus(tmp_path):
    (tmp_path / "a.txt").write_text("first file\n\nsecond paragraph")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.md").write_text("another file")
    (tmp_path / ".hidden").write_text("skipped")
    assert load_corpus(f"dir:{tmp_path}") == ["first file\n\nsecond paragraph", "another file"]


def test_corpus_slugs_are_safe_names(tmp_path):
    from tmcheck.empirics.data import check_corpus, corpus_slug

    assert corpus_slug("stories") == "stories"
    slug = corpus_slug("text:/a/../../etc/my notes.txt")
    assert slug.startswith("text-my_notes-") and "/" not in slug and ".." not in slug
    assert corpus_slug("dir:/x") != corpus_slug("dir:/y")
    for bad in ("../stories", "/some/where/stories", "text:", "nope"):
        with pytest.raises(ValueError, match="unknown corpus"):
            check_corpus(bad)


def test_train_on_own_text_with_model_sizes(trained):
    out, row = trained
    cfg = row["model_config"]
    assert (cfg["n_layer"], cfg["n_embd"], cfg["block_size"]) == (2, 64, 32)
    assert row["corpus"].startswith("text:") and row["test_loss"] < 6.0  # below uniform over 384 tokens
    assert load_gpt(out).config.n_layer == 2


def test_a_changed_text_file_is_not_silently_reused(trained, my_text, tmp_path):
    out, _ = trained
    changed = tmp_path / "my.txt"
    changed.write_text(my_text.read_text() + "\n\nOne more story.")
    data = json.loads((out / "data" / "dataset.json").read_text())
    assert data["source_sha256"]
    from tmcheck.empirics.data import DatasetSpec, prepare_dataset

    spec = DatasetSpec(**data["spec"])
    my_text_backup = my_text.read_bytes()
    try:
        my_text.write_text(changed.read_text())
        with pytest.raises(ValueError, match="other contents"):
            prepare_dataset(spec, out / "data")
    finally:
        my_text.write_bytes(my_text_backup)
    assert prepare_dataset(spec, out / "data") == data


def test_bad_own_data_is_one_line(tmp_path):
    res = runner.invoke(app, ["train", "--text", str(tmp_path / "none.txt"), "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and "none.txt" in res.stderr
    (tmp_path / "small.txt").write_text("just one paragraph")
    res = runner.invoke(app, ["train", "--text", str(tmp_path / "small.txt"), "--out", str(tmp_path / "o2")])
    assert res.exit_code == 2 and "too small to split" in res.stderr
    res = runner.invoke(app, ["train", "--n-embd", "30", "--n-head", "4", "--out", str(tmp_path / "o3")])
    assert res.exit_code == 2 and "not divisible" in res.stderr
    res = runner.invoke(app, ["train", "--text", "a", "--corpus-dir", "b"])
    assert res.exit_code == 2 and "not both" in res.stderr


def test_export_hf_loads_offline_generates_and_round_trips(trained, tmp_path):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    out, _ = trained
    hf_dir = tmp_path / "hf"
    res = runner.invoke(app, ["export", "hf", str(out), str(hf_dir), "--json"])
    assert res.exit_code == 0, res.output
    files = set(json.loads(res.stdout)["files"])
    assert {"model.safetensors", "config.json", "generation_config.json", "tokenizer.json"} <= files
    model = AutoModelForCausalLM.from_pretrained(hf_dir, local_files_only=True)
    tok = AutoTokenizer.from_pretrained(hf_dir, local_files_only=True)
    assert tok.eos_token == "<|endoftext|>" and tok.eos_token_id == model.generation_config.eos_token_id
    ids = tok("Once upon a time", return_tensors="pt").input_ids
    gen = model.generate(ids, max_new_tokens=8, do_sample=False)
    assert gen.shape[1] > ids.shape[1] and isinstance(tok.decode(gen[0]), str)
    ours = load_gpt(out)
    with torch.no_grad():
        assert torch.allclose(model(ids).logits, ours(ids)[0], atol=1e-5)
    # a second export refuses to overwrite unless told
    res = runner.invoke(app, ["export", "hf", str(out), str(hf_dir)])
    assert res.exit_code == 2 and "exists" in res.stderr


def test_init_from_fine_tunes_the_exported_model(cli_json, trained, my_text, tmp_path):
    from tmcheck.empirics.lm.hf import export_hf

    out, row = trained
    hf_dir = tmp_path / "hf"
    export_hf(out, hf_dir)
    ft = tmp_path / "ft"
    steps = "--block-size 32 --max-steps 15 --threads 1".split()
    tuned = cli_json(["train", "--text", my_text, "--init-from", hf_dir, *steps, "--out", ft])
    assert tuned["init_from"] == str(hf_dir.resolve()) and tuned["model_config"] == row["model_config"]
    # starting from trained weights, the first validation loss is already near the trained model's
    history = json.loads((ft / "result.json").read_text())["history"]
    assert history[0]["val_loss"] < row["best_val"] + 0.5
    res = runner.invoke(app, ["train", "--init-from", str(tmp_path), "--out", str(tmp_path / "x")])
    assert res.exit_code == 2 and "tokenizer.json" in res.stderr


def test_export_finds_the_sweep_tokenizer_and_refuses_a_mismatch(tmp_path):
    from tmcheck.empirics.data.tokens import train_tokenizer
    from tmcheck.empirics.lm.checkpoint import save_checkpoint
    from tmcheck.empirics.lm.gpt import GPT, GPTConfig
    from tmcheck.empirics.lm.hf import export_hf

    tok = train_tokenizer(stories(0, 300), 300)
    run = tmp_path / "sweep" / "runs" / "stories-n1-s0"

    def checkpoint(vocab):
        m = GPT(GPTConfig(vocab_size=vocab, block_size=16, n_layer=1, n_head=2, n_embd=16))
        save_checkpoint(
            run / "best.pt", {"model": m.state_dict(), "meta": {"model_config": m.config.__dict__, "corpus": "stories"}}
        )

    checkpoint(tok.get_vocab_size())
    with pytest.raises(ValueError, match="no tokenizer.json"):
        export_hf(run, tmp_path / "a")
    (tmp_path / "sweep" / "data" / "stories").mkdir(parents=True)
    (tmp_path / "sweep" / "data" / "stories" / "tokenizer.json").write_text(tok.to_str())
    assert export_hf(run, tmp_path / "a")["vocab_size"] == tok.get_vocab_size()
    checkpoint(tok.get_vocab_size() + 1)
    with pytest.raises(ValueError, match="the model's vocabulary is"):
        export_hf(run, tmp_path / "b")
    assert not (tmp_path / "b").exists() and not list(tmp_path.glob(".b.*"))


def test_the_export_gives_tmcheck_logits_loads_truncates_and_generates_without_a_warning(tmp_path):
    """The check .ci/transformers-floor.sh runs under transformers 4.46.3, here under the lock's
    transformers: the logits of model(**tok(text)), generate(**enc), a right-padded batch and a
    left-padded generate equal tmcheck's GPT to 1e-4; a standard tokenizer class, model_max_length =
    the context, truncation that cuts, generate from a prompt longer than the context with no warning
    and no log message. Mutants: an export whose tokenizer returns token_type_ids (what every export
    did under transformers 4.x), and one without a maximum length."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parents[1] / "infra"))
    import hf_export_check

    hf = hf_export_check.make(tmp_path)
    config = json.loads((hf / "tokenizer_config.json").read_text())
    assert config["tokenizer_class"] == "PreTrainedTokenizerFast" and config["model_max_length"] == 16
    assert config["model_input_names"] == ["input_ids", "attention_mask"]
    result = hf_export_check.check(hf)
    assert result["generated"] and result["max_logit_difference"] < 1e-4
    with pytest.raises(AssertionError, match=r"model\(\*\*tok\(text\)\): logits differ"):
        hf_export_check.check(hf_export_check.mutant(hf))
    config.pop("model_max_length")  # mutation: the export of before, without a maximum length
    (hf / "tokenizer_config.json").write_text(json.dumps(config))
    with pytest.raises(AssertionError):
        hf_export_check.check(hf)


def test_the_trained_export_through_the_tokenizer_equals_tmcheck(trained, tmp_path):
    """A trained model: model(**tok(text)) and a padded batch give tmcheck's logits; the tokenizer
    returns no token_type_ids."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from tmcheck.empirics.lm.hf import export_hf

    out, _ = trained
    export_hf(out, tmp_path / "hf")
    model = AutoModelForCausalLM.from_pretrained(tmp_path / "hf", local_files_only=True)
    tok = AutoTokenizer.from_pretrained(tmp_path / "hf", local_files_only=True)
    ours = load_gpt(out)
    texts = ["Once upon a time", "The little dog ran to the park and played"]
    enc = tok(texts, padding=True, return_tensors="pt")
    assert sorted(enc) == ["attention_mask", "input_ids"]
    with torch.no_grad():
        logits = model(**enc).logits
        for i in range(len(texts)):
            n = int(enc.attention_mask[i].sum())
            assert torch.allclose(logits[i, :n], ours(enc.input_ids[i : i + 1, :n])[0][0], atol=1e-4)


def test_every_command_that_takes_a_run_takes_the_out_given_to_train(trained, tmp_path):
    """`train --out DIR` writes the run into DIR itself; a directory of the older layout (DIR/run/)
    is accepted too, and a directory holding other files is refused."""
    import shutil

    out, _ = trained
    assert (out / "best.pt").is_file() and (out / "data" / "tokenizer.json").is_file()
    old = tmp_path / "old"
    shutil.copytree(out, old / "run", ignore=shutil.ignore_patterns("data"))
    shutil.copytree(out / "data", old / "data")
    for run in (out, old):
        res = runner.invoke(app, ["export", "hf", str(run), str(tmp_path / f"hf-{run.name}")])
        assert res.exit_code == 0, res.output
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "thesis.tex").write_text("mine")
    res = runner.invoke(app, ["train", "--out", str(tmp_path / "busy")])
    assert res.exit_code == 2 and "is not a tmcheck run (it holds thesis.tex)" in res.stderr
