"""The known-exponent sweep and its report (kinds "known"; issue #39 item 2): target scoring, names,
the preset's refusals, and the verdicts on curves whose exponent is known."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from tmcheck.empirics.data.known import generator
from tmcheck.empirics.report import known as report
from tmcheck.empirics.sweep import known, layout
from tmcheck.empirics.sweep.kinds import get_preset


class Uniform(torch.nn.Module):
    """Logits 0 everywhere: log V nats at every position, whatever the context."""

    V = 50

    def forward(self, x):
        return torch.zeros(*x.shape, self.V), None


@pytest.mark.parametrize("N", [5, 33, 64, 65, 100, 257])
@pytest.mark.parametrize("T", [4, 8, 32])
def test_every_target_token_is_scored_once(N, T):
    rng = np.random.default_rng(N * T)
    ids = rng.integers(0, Uniform.V, N)
    everything = np.ones(N, dtype=bool)
    total = known.score_targets(Uniform(), ids, everything, T, 3, "cpu")
    assert total == pytest.approx((N - 1) * math.log(Uniform.V))  # every token but the first is predicted once
    some = rng.random(N) < 0.3
    some[0] = False  # the first token is never predicted
    assert known.score_targets(Uniform(), ids, some, T, 3, "cpu") == pytest.approx(some.sum() * math.log(Uniform.V))


class Oracle(torch.nn.Module):
    """Knows the stream: certain of the next token where the window holds at least T/2 tokens of its past or
    starts the stream (the context a record needs), uniform elsewhere."""

    V = 10_000

    def __init__(self, stream: np.ndarray, T: int):
        super().__init__()
        self.stream, self.T = stream, T
        self.where = {tuple(stream[s : s + 3]): s for s in range(len(stream) - 2)}

    def forward(self, x):
        logits = torch.zeros(*x.shape, self.V)
        for b, row in enumerate(x.numpy()):
            s = self.where[tuple(row[:3])]
            for j in range(x.shape[1]):
                if s + j + 1 < len(self.stream) and (s == 0 or j + 1 >= self.T // 2):
                    logits[b, j, self.stream[s + j + 1]] = 100.0
        return logits, None


@pytest.mark.parametrize("N", [40, 101])
def test_every_target_token_has_half_a_window_of_context(N):
    T = 16
    ids = np.random.default_rng(N).permutation(Oracle.V)[:N]
    assert known.score_targets(Oracle(ids, T), ids, np.ones(N, dtype=bool), T, 4, "cpu") < 1e-6


@pytest.mark.parametrize("kind", ["zipf", "manifold"])
def test_tags_are_valid_run_names(kind):
    for seed in range(5):
        g = generator(kind, tokens=10_000 + seed, seed=seed)
        tag = known.corpus_tag(g.name)
        assert layout.check_run_name(tag) == tag
        assert known.corpus_tag(g.name) != known.corpus_tag(generator(kind, tokens=10_000 + seed, seed=seed + 1).name)


def test_preset_refuses_corpora_without_a_known_exponent():
    with pytest.raises(ValueError, match="no known exponent"):
        get_preset("smoke", "known").with_overrides(corpora=("stories",))
    p = get_preset("cpu", "known")
    assert p.config_corpora({"corpora": list(p.corpora)}) == []  # generated corpora read no files
    assert {round(generator_exponent(c), 3) for c in p.corpora} == {0.5, 0.6}


def generator_exponent(name: str) -> float:
    from tmcheck.empirics.data.known import parse

    return parse(name).exponent


SIZES = np.logspace(4, 6, 5).round()


def rows(alpha: float, corpus: str, noise: float = 0.03, seeds: int = 3, stop: str = "patience") -> list[dict]:
    rng = np.random.default_rng(7)
    return [
        {
            "corpus": corpus,
            "n": float(n),
            "excess": 3 * n**-alpha * math.exp(noise * rng.standard_normal()),
            "stop": stop,
            "max_steps": 1000,
            "seconds": 1.0,
        }
        for n in SIZES
        for _ in range(seeds)
    ]


def test_report_says_equivalent_on_the_truth_and_differs_on_the_shift():
    corpus = generator("zipf").name  # exponent 0.5
    e = report.corpus_entry(corpus, rows(0.5, corpus), 0.1, bootstrap=100, seed=0)
    assert (e["truth_outcome"], e["shifted_outcome"]) == ("equivalent", "differs")
    mutant = report.corpus_entry(corpus, rows(0.6, corpus), 0.1, bootstrap=100, seed=0)  # a curve at 0.6
    assert (mutant["truth_outcome"], mutant["shifted_outcome"]) == ("differs", "equivalent")
    power = report.corpus_power([e, mutant], reps=100)
    assert power["cells"] and len(power["table"]) == len(report.POWER_SEEDS) * len(report.POWER_DECADES)


def test_report_withholds_runs_on_the_step_cap_and_drops_non_positive_excess():
    corpus = generator("zipf").name
    e = report.corpus_entry(corpus, rows(0.5, corpus, stop="cap"), 0.1, bootstrap=100, seed=0)
    assert e["truth_outcome"] == "withheld" and e["fit"]["withheld"]
    bad = rows(0.5, corpus)
    bad[0]["excess"] = -0.01
    e = report.corpus_entry(corpus, bad, 0.1, bootstrap=100, seed=0)
    assert e["non_positive"] == 1 and e["truth_outcome"] == "equivalent"


def test_a_cut_tag_never_ends_in_a_dash():
    """pretrain.corpus_tag cuts the slug at 40 characters and then trims: a cut at a separator left 'x-' and
    an invalid run name before (the same cut before the trim fails this test)."""
    from tmcheck.empirics.sweep.pretrain import corpus_tag

    name = "text:/data/" + "a" * 39 + "-b.txt"  # the 40th character of the slug is the dash
    tag = corpus_tag(name)
    assert "--" not in tag and tag.startswith("text-" + "a" * 39 + "-")
    assert tag.split("-")[1] == "a" * 39


def reference_rows(corpus: str, ratio) -> list[dict]:
    """Rows whose excess is ratio(n) times the reference learner's at each size, no noise, 2 seeds."""
    from tmcheck.empirics.data.known import parse, records_in, reference_excess

    g = parse(corpus)
    base = rows(0.5, corpus, noise=0.0, seeds=2)
    for r in base:
        r["excess"] = ratio(r["n"]) * reference_excess(g, records_in(g, int(r["n"])), 0)
    return base


def test_reference_section_reads_a_constant_ratio_as_the_reference_slope():
    """A GPT at twice the memoriser's excess has the memoriser's slope (0.50 on these sizes) and a flat ratio;
    a mutant whose ratio falls with n (3 → 1.5 over 2 decades) reads as steeper than the reference."""
    corpus = generator("zipf").name
    e = report.corpus_entry(corpus, reference_rows(corpus, lambda n: 2.0), 0.1, bootstrap=100, seed=0)
    ref = e["reference"]
    assert [r["n"] for r in ref["sizes"]] == [int(n) for n in SIZES]
    assert all(abs(r["ratio"] - 2.0) < 1e-9 for r in ref["sizes"])
    assert abs(report.gpt_alpha(e) - ref["reference_slope"]) < 1e-9 and abs(ref["reference_slope"] - 0.5) < 0.01
    falling = report.corpus_entry(
        corpus, reference_rows(corpus, lambda n: 3.0 * (n / 1e4) ** -0.15), 0.1, bootstrap=100, seed=0
    )
    ref = falling["reference"]
    assert abs(report.gpt_alpha(falling) - ref["reference_slope"] - 0.15) < 1e-6
    assert ref["sizes"][0]["ratio"] > ref["sizes"][-1]["ratio"]
    text = "\n".join(report.reference_lines({"corpora": [falling]}))
    assert "the ratio falls from 3.00 to 1.50" in text


def test_reference_section_is_left_out_without_a_fit():
    corpus = generator("zipf").name
    e = report.corpus_entry(corpus, rows(0.5, corpus, stop="cap"), 0.1, bootstrap=100, seed=0)
    assert e["reference"] is None
    assert len(report.reference_lines({"corpora": [e]})) == 1  # the explanation only


def test_plan_runs_every_corpus_small_sizes_first():
    """size_major: the second size of any corpus comes after the first size of every corpus; within a size
    the corpora and seeds keep their order. The mutant that keeps corpus-major order fails."""
    from tmcheck.empirics.sweep.core import RunSpec

    specs = [(i, RunSpec("known", f"{c}-{i}-{s}", {})) for c in "ab" for i in range(3) for s in (0, 1)]
    runs = [s.run for s in known.size_major(specs)]
    assert runs == [f"{c}-{i}-{s}" for i in range(3) for c in "ab" for s in (0, 1)]
    assert runs != [s.run for _, s in specs]  # corpus-major, the order before
