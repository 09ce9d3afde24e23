"""Embeddings are written with their metadata: inside a .safetensors file, or in a .json beside a .npy."""

from __future__ import annotations

import numpy as np
import pytest

from tmcheck.empirics.lm.embed import load_embeddings, save_embeddings

INFO = {"model": "runs/m", "kind": "tmcheck", "documents": 3, "shape": [4, 2], "layer": None, "context": 64}


@pytest.mark.parametrize("name", ["e.safetensors", "e.npy"])
def test_metadata_travels_with_the_vectors(tmp_path, name):
    X = np.arange(8, dtype=np.float32).reshape(4, 2)
    written = save_embeddings(tmp_path / name, X, INFO)
    Y, meta = load_embeddings(tmp_path / name)
    np.testing.assert_array_equal(X, Y)
    assert meta == INFO and len(written) == (1 if name.endswith("safetensors") else 2)


def test_other_suffixes_are_refused(tmp_path):
    with pytest.raises(ValueError, match=r"must end in \.safetensors or \.npy"):
        save_embeddings(tmp_path / "e.txt", np.zeros((2, 2)), INFO)


def test_id_estimate_reads_the_safetensors_file(tmp_path):
    from typer.testing import CliRunner

    from tmcheck.cli.main import app

    X = np.random.default_rng(0).standard_normal((400, 3)).astype(np.float32)
    save_embeddings(tmp_path / "e.safetensors", X, INFO)
    res = CliRunner().invoke(app, ["id", "estimate", str(tmp_path / "e.safetensors"), "--key", "embeddings"])
    assert res.exit_code == 0, res.output
