"""The shape of theory/, proofs_check/ and the theory commands: one composition layer, no private name imported
across modules, no function name with two meanings in theory/, and commands that import no other command."""

from __future__ import annotations

import ast
import collections
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
# the theory commands and their demo stages: every module of cli/ but the app and the shared helpers, and
# the stages that show the theory (test_architecture checks the CLI's imports as a whole)
CLI_MODULES = sorted(
    f"cli/{p.name}" for p in (ROOT / "cli").glob("*.py") if p.stem not in ("__init__", "main", "common", "options")
) + [f"cli/stages/{name}.py" for name in ("lemmas", "theorem", "proofs")]
# defined in two modules of theory/ with the same meaning
SAME_MEANING = {
    "construction_of": "the Construction of a built plan (Lemma 1, Theorem 2)",
    "resource_table": "the resource table of a report (Lemma 1, Theorem 2)",
    "_maxabs": "the largest absolute entry of an array",
}


def _modules(*dirs) -> list[Path]:
    return sorted(p for d in dirs for p in (ROOT / d).rglob("*.py"))


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("path", _modules("theory", "proofs_check") + [ROOT / m for m in CLI_MODULES], ids=str)
def test_no_private_name_crosses_a_module(path):
    bad = []
    tree = _tree(path)
    aliases = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("tmcheck"):
            bad += [a.name for a in node.names if a.name.startswith("_")]
            aliases |= {a.asname or a.name for a in node.names}
        elif isinstance(node, ast.Import):
            aliases |= {a.asname or a.name.split(".")[0] for a in node.names if a.name.startswith("tmcheck")}
    for node in ast.walk(tree):  # module._name on an imported tmcheck module
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
            if node.attr.startswith("_") and not node.attr.startswith("__"):
                bad.append(f"{node.value.id}.{node.attr}")
    assert bad == []


def test_no_function_name_with_two_meanings_in_theory():
    where = collections.defaultdict(list)
    for path in _modules("theory"):
        for node in _tree(path).body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                where[node.name].append(str(path.relative_to(ROOT)))
    twice = {name: paths for name, paths in where.items() if len(paths) > 1}
    assert sorted(set(twice) - set(SAME_MEANING)) == [], twice


@pytest.mark.parametrize("module", CLI_MODULES)
def test_a_command_imports_no_other_command(module):
    imported = set()
    for node in ast.walk(_tree(ROOT / module)):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("tmcheck.cli"):
            imported.add(node.module if node.module != "tmcheck.cli" else f"tmcheck.cli.{node.names[0].name}")
    assert imported <= {"tmcheck.cli.common", "tmcheck.cli.options"}, imported


def test_build_plans_and_resource_counts_have_different_names():
    from tmcheck.theory import spec
    from tmcheck.theory.lemmas import lemma1, theorem2

    assert hasattr(spec, "lemma1_spec") and hasattr(spec, "theorem2_spec")  # resource counts
    assert hasattr(lemma1, "lemma1_plan") and hasattr(theorem2, "theorem2_plan")  # build plans
    assert not hasattr(lemma1, "lemma1_spec") and not hasattr(theorem2, "theorem2_spec")


# ------------------------------------------------------------------ one composition layer
def _same_network(blocks_a, blocks_b) -> bool:
    if len(blocks_a) != len(blocks_b):
        return False
    for a, b in zip(blocks_a, blocks_b, strict=True):
        if len(a.heads) != len(b.heads) or len(a.ffn) != len(b.ffn):
            return False
        for h, g in zip(a.heads, b.heads, strict=True):
            if any(not np.array_equal(getattr(h, k), getattr(g, k)) for k in "QKV"):
                return False
        for x, y in zip(a.ffn, b.ffn, strict=True):
            if not (np.array_equal(x.W, y.W) and np.array_equal(x.b, y.b)):
                return False
    return True


def _constructions():
    from tmcheck.theory.lemmas.addition import addition
    from tmcheck.theory.lemmas.gating import gating
    from tmcheck.theory.lemmas.interaction import default_kernels, interaction
    from tmcheck.theory.lemmas.parallel import parallelize
    from tmcheck.theory.lemmas.replace import replace

    a = interaction(6, 1, 4, 0, *default_kernels(Fraction(1)), 2)
    g = gating(6, 3, "suffix", 2)
    return {
        "lemma3": a,
        "lemma4": g,
        "lemma5": addition([Fraction(1, 2), Fraction(-1, 3)], 2),
        "lemma6": replace(5, 2),
        "lemma7": parallelize(a, g),
        "lemma7 nested": parallelize(parallelize(a, g), replace(3, 2)),
    }


@pytest.mark.parametrize("name", list(_constructions()))
def test_lemmas_3_to_7_are_realized_sparse_blocks(name):
    from tmcheck.theory.sparse import realize

    c = _constructions()[name]
    blocks, _ = realize(c.sparse_blocks, c.network.l, "exact")
    assert _same_network(blocks, c.network.blocks)


def test_lemma1_and_theorem2_are_realized_sparse_blocks_and_theorem2_a_union():
    from tmcheck.theory.lemmas.lemma1 import lemma1_network, lemma1_plan
    from tmcheck.theory.lemmas.parallel import union
    from tmcheck.theory.lemmas.theorem2 import chart_blocks, theorem2_network, theorem2_plan
    from tmcheck.theory.manifolds import make_manifold
    from tmcheck.theory.sparse import realize
    from tmcheck.theory.targets import parse_target

    plan = lemma1_plan(parse_target("x0*x1", 2), 1, 1, 0.5, N=3)
    assert _same_network(realize(plan.blocks, plan.l, "exact")[0], lemma1_network(plan).blocks)
    t2 = theorem2_plan(make_manifold("circle", 2), parse_target("x0", 2), 0.5, N=3)
    assert _same_network(realize(t2.blocks, t2.l, "exact")[0], theorem2_network(t2, "exact").blocks)
    per_chart = [chart_blocks(t2, n) for n in range(t2.manifold.C_M)]
    first = union([(per_chart[n][0], n * t2.Lc, t2.Lc) for n in range(t2.manifold.C_M)])
    assert [it.t1 for it in first.interactions] == [it.t1 for it in t2.blocks[0].interactions]
