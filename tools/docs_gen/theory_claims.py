"""The paper's claims (docs/theory/claims.md): errata, verdicts and reach of every obligation, computed by
proofs_check when the docs are built."""

from __future__ import annotations

from collections.abc import Callable

from docs_gen._common import table
from docs_gen._theory import machine_independent, outcomes

PAGES = ("docs/theory/claims.md",)


def errata() -> str:
    """Every finding of the registry (proofs_check.errata), with its first breaking witness."""
    from tmcheck.proofs_check.errata import render

    return machine_independent(render(outcomes(), framed=False)) + "\n"


def verdicts() -> str:
    """Verdicts per section and per kind of claim (proofs_check.report)."""
    from tmcheck.proofs_check.registry import SECTIONS
    from tmcheck.proofs_check.report import LABELS, gaps, totals

    outs = outcomes()
    rows = []
    for sec in SECTIONS:
        mine = [o for o in outs if o.obligation.section == sec]
        t = totals(mine)
        rows.append([f"`{sec}`", len(mine), *(t[k] for k in LABELS[:4]), gaps(mine)])
    t = totals(outs)
    rows.append(["all", len(outs), *(t[k] for k in LABELS[:4]), gaps(outs)])
    kinds = {}
    for o in outs:
        k = kinds.setdefault(o.obligation.kind.value, {lab: 0 for lab in LABELS[:4]})
        k[o.label] = k.get(o.label, 0) + 1
    by_kind = [[kind, *(c[lab] for lab in LABELS[:4])] for kind, c in kinds.items()]
    return (
        table(["section", "obligations", *LABELS[:4], "proof gaps"], rows)
        + "\n\n"
        + table(["kind", *LABELS[:4]], by_kind)
        + "\n"
    )


def reach() -> str:
    """The static reach scan (proofs_check.reach) and the witness ratio of every finding's satisfying search."""
    from tmcheck.proofs_check.reach import scan
    from tmcheck.proofs_check.registry import Verdict, all_obligations

    obls = all_obligations()
    names = scan(obls)
    reached = sum(1 for v in names.values() if v)
    rows = []
    for o in obls:
        out = next(x for x in outcomes() if x.obligation.id == o.id)
        if out.result is None or out.result.verdict not in (Verdict.FAILS, Verdict.CORRECTED):
            continue
        sat = o.judge(**o.satisfied)
        rows.append(
            [
                f"`{o.id}`",
                out.result.searched,
                sat.searched,
                f"{sat.searched / out.result.searched:.2f}",
                sat.verdict.value,
            ]
        )
    return (
        f"{reached} of {len(obls)} obligations reach `tmcheck.theory` (named oracles with no reach: "
        f"{len(obls) - reached}).\n\n"
        + table(["finding", "witnesses", "satisfying search", "ratio", "its verdict"], rows)
        + "\n"
    )


GENERATORS: dict[str, Callable[[], str]] = {
    "theory.errata": errata,
    "theory.verdicts": verdicts,
    "theory.reach": reach,
}
