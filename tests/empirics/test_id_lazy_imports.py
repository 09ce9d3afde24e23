"""`tmcheck.empirics.id` imports its names on first use (PEP 562), so reading points (``id.io``) costs no
scikit-learn, scipy.stats or torch import: ``tmcheck id estimate`` reads its file in a thread while those
import (#28). Each check is shown to catch its mutation."""

from __future__ import annotations

import ast
import subprocess
import sys

import pytest

PROBE = "import sys, {mod}; print(sorted(m for m in ('sklearn', 'scipy.stats', 'torch') if m in sys.modules))"


def heavy_after(mod: str) -> list[str]:
    out = subprocess.run([sys.executable, "-c", PROBE.format(mod=mod)], capture_output=True, text=True, check=True)
    return ast.literal_eval(out.stdout.strip())


def test_reading_points_imports_neither_sklearn_nor_torch():
    assert heavy_after("tmcheck.empirics.id.io") == []


def test_the_probe_sees_an_eager_import():
    """The mutation: a package that imports its estimators at once (as it did) is caught by the probe."""
    assert "sklearn" in heavy_after("tmcheck.empirics.id.estimators")


def test_every_public_name_resolves_and_an_unknown_one_is_refused():
    import tmcheck.empirics.id as pkg

    for name in pkg.__all__:
        assert getattr(pkg, name) is not None
        assert name in dir(pkg)
    from tmcheck.empirics.id.estimators import MLE

    assert pkg.MLE is MLE
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        pkg.nope  # noqa: B018
