"""`Construction`: what every lemma and theorem constructor returns (DESIGN.md, theory).

A construction carries the network, the claim (the exact map it computes on which inputs), the
explicit constants it needed, and the paper's stated bound on ||θ||∞ with every constant written out.
Claims are stated on hidden matrices: `blocks` map structured H (B, 5, l) to H', and `expected(H)`
gives the claimed output; `sample_inputs(rng, n)` draws inputs from the claim's domain (exact
rationals). `network` wraps the blocks with an embedding so the construction can be exported as a
tmcheck-network file and evaluated by any program.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from tmcheck.theory.network import Network, resources

# resource guard of the full constructions: networks with more tokens or heads than this are refused before
# they are built (`spec.ConstructionSpec.check_size`; `--size-limit` raises it). The default Theorem 2 network
# (the circle in R^3 at ε = 0.3) has 17,920 tokens.
SIZE_LIMIT = 500_000
STATED_RESOURCES = ("L_T", "m", "L_FFN", "l")  # what theory.check.check_construction compares, by these names


@dataclass
class Construction:
    name: str  # e.g. "lemma3.interaction"
    paper: str  # location in the paper, e.g. "Appendix G, Lemma 3"
    network: Network  # the weights (exact arithmetic), exportable with netfile.save
    claim: str  # what it computes, exactly, on which inputs (one paragraph)
    sample_inputs: Callable[[np.random.Generator, int], np.ndarray]  # (n, 5, l) hidden matrices in the domain
    expected: Callable[[np.ndarray], np.ndarray]  # claimed output hidden matrices (n, 5, l), exact
    constants: dict[str, Any] = field(default_factory=dict)  # the explicit constants used (C, M, kappa, ...)
    stated_kappa_bound: Fraction | float | None = None  # the paper's ||θ||∞ bound, constants written out
    stated_resources: dict[str, Any] = field(default_factory=dict)  # the paper's L_T, m, l, L_FFN, ... formulas' values
    compare_rows: tuple[int, ...] = (0, 1, 2, 3, 4)  # rows of the output the claim fixes (others are free)
    compare_cols: Callable[[int], Any] | None = None  # columns the claim fixes (default: all)
    # the blocks as the composition layer builds them (`theory.sparse.SparseBlock`), which Lemma 7 composes
    # (`lemmas.parallel.union`); None when the construction is not built from Lemmas 3-7
    sparse_blocks: list | None = None

    def __post_init__(self):
        # check_construction compares exactly these with the measured network: a misspelt key (M for m, l_ffn
        # for L_FFN) would drop that claim from the check without a word, so it is refused here
        unknown = sorted(set(self.stated_resources) - set(STATED_RESOURCES))
        if unknown:
            raise ValueError(
                f"{self.name}: stated_resources has {unknown}; the checked resources are {', '.join(STATED_RESOURCES)}"
            )

    @property
    def blocks(self):
        return self.network.blocks

    def resources(self):
        return resources(self.network)
