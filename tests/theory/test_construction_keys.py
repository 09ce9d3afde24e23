"""A Construction's stated resources use the names check_construction compares: a misspelt one is refused at
construction, instead of silently dropping that claim from the check."""

from __future__ import annotations

import dataclasses
from fractions import Fraction

import pytest

from tmcheck.theory.construction import STATED_RESOURCES
from tmcheck.theory.lemmas.replace import replace


def test_every_lemma_states_only_checked_resources():
    c = replace(4, Fraction(2))
    assert set(c.stated_resources) <= set(STATED_RESOURCES) and c.stated_resources["m"] == 0


@pytest.mark.parametrize("bad", ["M", "l_ffn", "L", "kappa"])
def test_a_misspelt_resource_is_refused(bad):
    c = replace(4, Fraction(2))
    stated = {**{k: v for k, v in c.stated_resources.items() if k.lower() != bad.lower()}, bad: 1}
    with pytest.raises(ValueError, match="stated_resources"):
        dataclasses.replace(c, stated_resources=stated)
