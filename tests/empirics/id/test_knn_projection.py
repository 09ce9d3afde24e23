"""The candidate search in a principal subspace (kneighbors(project=...)) changes the speed, never the
answer: on low-dimensional data in a high-dimensional space, at any subspace dimension (a poor one sends
rows to the range query), with either search type, over tiles, the neighbours and distances are those of
the search in the whole space, bit for bit; and the certificate's bound is what keeps it so."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tmcheck.empirics.id import knn, validation_points
from tmcheck.empirics.id.knn import kneighbors


def _same(a, b):
    assert (a.indices == b.indices).all()
    assert (a.distances == b.distances).all()


# integer draws as (low, high): n points near a d-dimensional subspace of R^dim, searched in projection p, k, block
SIZES = {"n": (40, 260), "d": (1, 6), "dim": (8, 48), "p": (1, 12), "k": (1, 8), "block": (16, 96), "seed": (0, 2**16)}


@given(
    **{name: st.integers(*span) for name, span in SIZES.items()},
    noise=st.sampled_from([0.0, 1e-6, 1e-2, 0.3]),
    offset=st.sampled_from([0.0, 1e3]),
    precision=st.sampled_from(["bfloat16", "float32"]),
)
@settings(max_examples=60, deadline=None)
def test_any_subspace_gives_the_whole_space_answer(n, d, dim, p, k, block, noise, offset, seed, precision):
    rng = np.random.default_rng(seed)
    basis = np.linalg.qr(rng.normal(size=(dim, d)))[0]
    X = rng.normal(size=(n, d)) @ basis.T + noise * rng.normal(size=(n, dim)) + offset
    k = min(k, n - 1)
    ref = kneighbors(X, k, block_size=block, precision=precision, project=0)
    _same(kneighbors(X, k, block_size=block, precision=precision, project=p), ref)


def test_with_ties_and_duplicates():
    rng = np.random.default_rng(3)
    X = np.repeat(rng.integers(0, 3, size=(60, 40)).astype(float), 3, axis=0)  # exact ties and copies
    for p in (1, 4, 16):
        _same(kneighbors(X, 9, block_size=64, project=p), kneighbors(X, 9, block_size=64, project=0))


def test_the_bound_is_what_keeps_it_exact(monkeypatch):
    """The mutant that trusts every row searched in the subspace (no certificate) gives wrong neighbours
    at a poor subspace; the real bound sends those rows to the range query."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 32))  # isotropic: a 2-dimensional subspace ranks badly
    ref = kneighbors(X, 5, block_size=128, project=0)
    real = kneighbors(X, 5, block_size=128, project=2)
    _same(real, ref)
    assert real.n_recomputed > 0
    monkeypatch.setattr(knn._Projected, "lower", lambda self, pts, t, reach: reach + np.inf)
    trusting = kneighbors(X, 5, block_size=128, project=2)
    assert trusting.n_recomputed == 0 and not (trusting.indices == ref.indices).all()


def test_the_bound_carries_its_rounding_terms(monkeypatch):
    """delta (P orthonormal only up to rounding) and E (z = xs P rounded) are in the bound: positive, and
    of rounding size (a mutant that drops either, as if P and z were exact, fails here)."""
    X = validation_points("sphere", 3000, d=4, D=64, noise=1e-3, seed=1)
    seen = {}
    real = knn._projection

    def spy(fr, project, dtype=None):
        out = real(fr, project, dtype)
        seen["proj"] = out
        return out

    monkeypatch.setattr(knn, "_projection", spy)
    kneighbors(X, 10, block_size=512, project=16)
    proj = seen["proj"]
    assert 0 < proj.delta < 1e-12 and 0 < proj.E < 1e-12 and proj.p == 16


def test_auto_projects_low_dimensional_data_and_leaves_isotropic_data_alone(monkeypatch):
    """(In float32, where the decision pays at this shape: see the next test for bf16.)"""
    seen = []
    real = knn._projection
    monkeypatch.setattr(
        knn, "_projection", lambda fr, project, dtype: seen.append(real(fr, project, dtype)) or seen[-1]
    )
    low = validation_points("sphere", 4096, d=8, D=256, noise=1e-3, seed=0)
    a = kneighbors(low, 10, precision="float32")
    assert seen[-1] is not None and seen[-1].p == 16
    _same(a, kneighbors(low, 10, project=0))
    iso = np.random.default_rng(0).normal(size=(4096, 256))
    kneighbors(iso, 10, precision="float32")
    assert seen[-1] is None


def test_the_decision_is_made_only_where_it_can_pay(monkeypatch):
    """'auto' decides on a subspace (a covariance and a block subspace iteration on it) only when that can
    cost less than the whole-space GEMM it could save: not for wide data (N = 2500, D = 1024) nor for a
    bf16 search at N = 4096, D = 256, yes for the benchmark's N = 32768, D = 768 and for float32 at
    N = 4096, D = 256. The answer is the same either way; the mutation (always decide) is seen by the spy
    on the subspace iteration."""
    import torch

    cpu = torch.device("cpu")
    assert knn._decision_pays(32768, 768, cpu, torch.bfloat16) and knn._decision_pays(4096, 256, cpu, torch.float32)
    assert not knn._decision_pays(4096, 256, cpu, torch.bfloat16)
    assert not knn._decision_pays(2500, 1024, cpu, torch.float32)
    calls = []
    real = knn._principal_subspace
    monkeypatch.setattr(knn, "_principal_subspace", lambda cov, width: calls.append(cov.shape) or real(cov, width))
    wide = validation_points("sphere", 2500, d=4, D=1024, noise=1e-3, seed=0)
    _same(kneighbors(wide, 10, precision="float32"), kneighbors(wide, 10, project=0, precision="float32"))
    assert calls == []
    monkeypatch.setattr(knn, "_decision_pays", lambda *a: True)
    kneighbors(wide, 10, precision="float32")
    assert calls == [(1024, 1024)]


def _spy_eigensolvers(monkeypatch):
    """The sizes of the square matrices torch's symmetric eigensolvers are given."""
    import torch

    sizes = []
    for name in ("eigh", "eigvalsh"):
        real = getattr(torch.linalg, name)
        monkeypatch.setattr(torch.linalg, name, lambda a, *args, _real=real, **kw: sizes.append(a.shape[0]) or _real(a))
    return sizes


def test_auto_at_the_benchmarks_width_decides_by_gemms_and_projects(monkeypatch):
    """At bench_id_peers' WIDE case (S^8 in R^768 + noise, N = 8192) 'auto' takes p = 16 in a float32
    search, and the decision eigendecomposes no D x D matrix (only the block's 136 x 136): the D = 768
    eigh and eigvalsh it made before cost 0.7-1.5 s each on this AMD EPYC VM under load and up to 50 s
    inside the engine, so 'auto' took 2.5x the time of project=0 at k = 100 (MOM's default). With the
    block iteration, measured on the same loaded machine: 9.5-12.8 CPU s for 'auto' against 14.0-14.6 for
    project=0, the same neighbours. Mutants: the old full eigendecomposition (seen by the spy), and the
    cost rule flipped (no subspace at this shape)."""
    import torch

    X = validation_points("sphere", 8192, d=8, D=768, noise=1e-3, seed=0)
    fr, _, _ = knn._search_frame(X, torch.device("cpu"), 3072, None)
    sizes = _spy_eigensolvers(monkeypatch)
    assert knn._decision_pays(8192, 768, torch.device("cpu"), torch.float32)
    proj = knn._projection(fr, "auto", torch.float32)
    assert proj is not None and proj.p == 16 and 0 < proj.delta < 1e-12
    assert sizes and max(sizes) == knn._block_width(768) == 136

    def full_eigen(cov, width):  # the old decision: eigenvalues and eigenvectors of the whole covariance
        evals, vecs = torch.linalg.eigh(cov)
        return evals.flip(0), vecs.flip(1)

    sizes.clear()
    monkeypatch.setattr(knn, "_principal_subspace", full_eigen)
    assert knn._projection(fr, "auto", torch.float32).p == 16 and max(sizes) == 768  # what the spy rules out
    pays = knn._decision_pays
    monkeypatch.setattr(knn, "_decision_pays", lambda *a: not pays(*a))
    assert knn._projection(fr, "auto", torch.float32) is None


@pytest.mark.parametrize("bad", [-1, "pca", 1.5])
def test_a_bad_project_value_is_refused(bad):
    with pytest.raises(ValueError, match="project"):
        kneighbors(np.zeros((5, 2)) + np.arange(5)[:, None], 2, project=bad)
