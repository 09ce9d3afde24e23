"""The static reach scan (proofs_check/reach.py): every obligation's check reaches tmcheck.theory, and so does every
re-check of a finding; the scan itself sees a function that reaches none, reads keyword-only defaults, and follows a
function imported from a sibling proofs_check module."""

from __future__ import annotations

import ast
from pathlib import Path

from tmcheck.proofs_check import reach, registry

HERE = Path(__file__).parent


def test_every_obligation_reaches_theory():
    scan = reach.scan(registry.all_obligations())
    assert len(scan) == 97
    assert sorted(oid for oid, names in scan.items() if not names) == []


def test_the_scan_tells_reaching_from_not_reaching():
    assert reach.reach("tmcheck.proofs_check.registry", "fmt_value") == set()  # formats text, no theory
    psi = reach.reach("tmcheck.proofs_check.lemma1", "psi_partition_of_unity")
    assert "tmcheck.theory.sparse" in psi  # through network_psi, a function of its module
    lip = reach.reach("tmcheck.proofs_check.lemma2_lipschitz", "lipschitz_constant")
    assert any(n.startswith("tmcheck.theory.backends") for n in lip)  # through the sibling module lipschitz


def test_the_scan_on_source_with_and_without_theory(tmp_path):
    src = tmp_path / "m.py"
    src.write_text(
        "from tmcheck.theory.bounds import alpha_D\n\n"
        "def helper(d):\n    return alpha_D(d)\n\n"
        "def uses(d):\n    return helper(d) + 1\n\n"
        "def alone(d):\n    return d + 1\n",
        encoding="utf-8",
    )
    assert reach.file_reach(src, "uses") == {"tmcheck.theory.bounds.alpha_D"}
    assert reach.file_reach(src, "alone") == set()


def test_the_scan_reads_keyword_only_defaults(tmp_path):
    """Keyword-only arguments with a default (read) and without one (nothing to read) in the same def."""
    src = tmp_path / "m.py"
    src.write_text(
        "from tmcheck.theory.bounds import alpha_D, alpha_N\n\n"
        "def check(*, points=alpha_D(1, 1), n):\n    return points + n\n\n"
        "def bare(*, n):\n    return alpha_N(n, 1)\n",
        encoding="utf-8",
    )
    assert reach.file_reach(src, "check") == {"tmcheck.theory.bounds.alpha_D"}
    assert reach.file_reach(src, "bare") == {"tmcheck.theory.bounds.alpha_N"}


def test_the_scan_follows_a_function_imported_from_a_sibling(tmp_path):
    """`from tmcheck.proofs_check.lemma2 import ffn_all_kappa`: the scan follows that function into lemma2, where
    it runs tmcheck's exact backend."""
    src = tmp_path / "m.py"
    src.write_text(
        "from tmcheck.proofs_check.lemma2 import ffn_all_kappa\n\n"
        "def check(k):\n    return ffn_all_kappa([1, 1], k, k)\n",
        encoding="utf-8",
    )
    found = reach.file_reach(src, "check")
    assert "tmcheck.theory.backends.run_blocks" in found
    assert found == reach.reach("tmcheck.proofs_check.lemma2", "ffn_all_kappa")


def test_every_recheck_runs_theory_code():
    path = HERE / "test_counterexamples.py"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    rechecks = [n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("recheck_")]
    assert len(rechecks) >= 49
    assert sorted(name for name in rechecks if not reach.file_reach(path, name)) == []


def test_names_of_source_imports():
    src = (
        "import tmcheck.theory.bounds\n"
        "import tmcheck.theory.spec as sp\n"
        "import math\n"
        "from tmcheck.theory import sparse as sps, targets\n"
        "from tmcheck.theory.lemmas.lemma1 import lemma1_plan\n"
        "from tmcheck.proofs_check import lemma3\n"
        "from tmcheck.proofs_check.registry import obligation as ob\n"
        "def f():\n    return 1\n"
        "class C:\n    pass\n"
    )
    names = reach.names_of_source(src)
    assert names.theory == {
        "tmcheck.theory.bounds": "tmcheck.theory.bounds",
        "sp": "tmcheck.theory.spec",
        "sps": "tmcheck.theory.sparse",
        "targets": "tmcheck.theory.targets",
        "lemma1_plan": "tmcheck.theory.lemmas.lemma1.lemma1_plan",
    }
    assert names.siblings == {
        "lemma3": ("tmcheck.proofs_check.lemma3", ""),
        "ob": ("tmcheck.proofs_check.registry", "obligation"),
    }
    assert set(names.functions) == {"f", "C"}
