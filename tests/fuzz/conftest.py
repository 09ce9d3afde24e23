"""Fixtures of the fuzz suite: the hostile corpus (built once per session), a scratch root whose
files outside each case's working directory are compared before and after the case, a file no
command may write (`outside`), and a sweep run with random weights and its tokenizer (`run_dir`)."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from corpus import build
from harness import SECRET


@pytest.fixture(scope="session")
def corpus(tmp_path_factory) -> dict[str, Path]:
    return build(tmp_path_factory.mktemp("hostile"))


@pytest.fixture(scope="session")
def scratch(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("cases")


@pytest.fixture
def outside(tmp_path) -> Path:
    """A file the commands must never write: the target of every hostile link."""
    f = tmp_path / "outside" / "precious.txt"
    f.parent.mkdir()
    f.write_text(SECRET)
    return f


@pytest.fixture
def run_dir(tmp_path) -> Path:
    """A sweep run (random weights) with its sweep's tokenizer: SWEEP/runs/<run>/best.pt."""
    from tmcheck.empirics.data.stories import stories
    from tmcheck.empirics.data.tokens import train_tokenizer
    from tmcheck.empirics.lm.checkpoint import save_checkpoint
    from tmcheck.empirics.lm.gpt import GPT, GPTConfig

    tok = train_tokenizer(stories(0, 300), 300)
    run = tmp_path / "sweep" / "runs" / "stories-n1-s0"
    m = GPT(GPTConfig(vocab_size=tok.get_vocab_size(), block_size=16, n_layer=1, n_head=2, n_embd=16))
    save_checkpoint(run / "best.pt", {"model": m.state_dict(), "meta": {"model_config": m.config.__dict__}})
    (run / "tokenizer.json").write_text(tok.to_str())
    return run
