"""Lemmas 3-7 (docs/theory/lemmas.md): the Lemma 3 threshold, computed by tmcheck.theory."""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

from docs_gen._common import table
from docs_gen._theory import short

PAGES = ("docs/theory/lemmas.md",)


def lemma3_threshold() -> str:
    """Lemma 3's exact threshold C* against the paper's C, for the default kernels (κ = 1, M = 2)."""
    from tmcheck.theory.lemmas.interaction import default_kernels, interaction

    Q, K = default_kernels(Fraction(1))
    rows = []
    for l, t1, t2 in ((4, 0, 3), (8, 1, 6), (16, 3, 10), (32, 3, 20), (64, 3, 40)):
        c = interaction(l, t1, t2, 1, Q, K, Fraction(2))
        cmin, cpap = c.constants["C_min"], c.constants["C_paper"]
        rows.append(
            [l, t1, t2, short(float(cmin)), short(float(cpap)), short(float(cpap / cmin)), short(float(cmin) / l**2)]
        )
    return table(["l", "t1", "t2", "exact C*", "paper's C", "paper / C*", "C* / l²"], rows) + "\n"


GENERATORS: dict[str, Callable[[], str]] = {
    "theory.lemma3-threshold": lemma3_threshold,
}
