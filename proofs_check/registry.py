"""The obligation registry: the single source for `tmcheck proofs` and the README's errata.

An obligation is one claim of the paper: a stable id with a section prefix (`lemma3.case2b`), the
paper location, the claim as written, its kind (a lemma's or theorem's statement, a step of its
proof, a resource bound of its construction, or a definition/notation) and a check.

A verdict is a function of evidence (DESIGN.md, "Verdicts are derived"). A check returns Evidence:
the claim as written evaluated on every witness it searched (each Witness holds both sides and the
relation between them), the search domain, and, where tmcheck implements a correction, the corrected
claim evaluated on the same witnesses. A check never states a verdict: `Result(evidence)` derives it.

* HOLDS: no searched witness breaks the claim as written;
* FAILS-AS-WRITTEN: one does, and no corrected claim survives the same search;
* HOLDS-AFTER-CORRECTION: one does, and the corrected claim holds on every witness;
* NOT-EVALUABLE: the check returned Unevaluable (a definition or a notation slip that no computation
  can decide); it says which reading tmcheck takes.

A failing proof step or construction resource is a gap in the proof, not a refutation of the
statement (`Result.gap`). Modules declare obligations with @obligation (ids start with a prefix in
SECTIONS); `all_obligations()` imports every module of the package and returns them in paper order.
"""

from __future__ import annotations

import enum
import functools
import importlib
import operator
import pkgutil
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any


class Verdict(str, enum.Enum):
    HOLDS = "HOLDS"
    FAILS = "FAILS-AS-WRITTEN"
    CORRECTED = "HOLDS-AFTER-CORRECTION"
    UNEVALUABLE = "NOT-EVALUABLE"


class Kind(str, enum.Enum):
    STATEMENT = "statement"  # what a lemma or theorem asserts
    STEP = "proof step"  # one inequality or identity of a proof
    RESOURCE = "construction resource"  # a bound on l, m, κ, depth ... of the proof's construction
    NOTATION = "definition or notation"


def _equal(a: Any, b: Any) -> bool:
    import sympy as sp

    if a is None or b is None:
        return a is b
    if isinstance(a, sp.Basic) or isinstance(b, sp.Basic):
        return sp.simplify(sp.sympify(a) - sp.sympify(b)) == 0
    return bool(a == b)


RELATIONS: dict[str, Callable[[Any, Any], bool]] = {
    "<=": operator.le,
    "<": operator.lt,
    ">=": operator.ge,
    ">": operator.gt,
    "==": _equal,
    "!=": lambda a, b: not _equal(a, b),
}


# An O(·) claim whose hidden constant must not depend on a variable (d, ε, l, C_M) is evaluated on a finite search
# as: the ratio to the O(·) form at each witness is at most ORDER_SLACK times its value at the smallest witness.
ORDER_SLACK = 10


@dataclass(frozen=True)
class Witness:
    """One point of a search: where (`at`), the two sides of the claim there, and their relation."""

    at: dict[str, Any]
    lhs: Any
    rhs: Any
    rel: str = "<="

    def __post_init__(self) -> None:
        if self.rel not in RELATIONS:
            raise ValueError(f"unknown relation {self.rel!r}; expected one of {', '.join(RELATIONS)}")

    @property
    def holds(self) -> bool:
        return bool(RELATIONS[self.rel](self.lhs, self.rhs))

    def as_dict(self) -> dict[str, Any]:
        return {"at": self.at, "lhs": self.lhs, "rel": self.rel, "rhs": self.rhs, "holds": self.holds}


@dataclass(frozen=True)
class Evidence:
    """The claim as written on the witnesses searched and, optionally, the corrected claim on the same ones."""

    domain: str  # the search domain, in words (its size is len(written))
    written: Sequence[Witness]
    corrected: Sequence[Witness] | None = None
    corrected_claim: str = ""  # the statement the `corrected` witnesses evaluate (and tmcheck implements)
    note: str = ""  # what the numbers mean
    data: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.written:
            raise ValueError("evidence needs at least one witness: an empty search shows nothing")
        if self.corrected is not None:
            if not self.corrected_claim:
                raise ValueError("a corrected search needs the corrected claim it evaluates")
            if [w.at for w in self.corrected] != [w.at for w in self.written]:
                raise ValueError("the corrected claim must be evaluated on the same witnesses as the written one")


@dataclass(frozen=True)
class Unevaluable:
    """A definition or notation slip: no computation decides it; `reading` is the one tmcheck takes."""

    reason: str
    reading: str


@dataclass(frozen=True)
class Result:
    """The registry's judgement of one check's evidence; the verdict is derived, never given."""

    evidence: Evidence | Unevaluable
    kind: Kind = Kind.STATEMENT

    def __post_init__(self) -> None:
        if not isinstance(self.evidence, (Evidence, Unevaluable)):
            raise TypeError(f"a check returns Evidence or Unevaluable, not {type(self.evidence).__name__}")

    @functools.cached_property
    def broken(self) -> list[Witness]:
        return [] if isinstance(self.evidence, Unevaluable) else [w for w in self.evidence.written if not w.holds]

    @functools.cached_property
    def verdict(self) -> Verdict:
        ev = self.evidence
        if isinstance(ev, Unevaluable):
            return Verdict.UNEVALUABLE
        if not self.broken:
            return Verdict.HOLDS
        if ev.corrected is not None and all(w.holds for w in ev.corrected):
            return Verdict.CORRECTED
        return Verdict.FAILS

    @property
    def gap(self) -> bool:
        """A step or resource bound that fails as written: the proof has a gap; the statement is not refuted."""
        return self.kind in (Kind.STEP, Kind.RESOURCE) and self.verdict in (Verdict.FAILS, Verdict.CORRECTED)

    @property
    def searched(self) -> int:
        return 0 if isinstance(self.evidence, Unevaluable) else len(self.evidence.written)

    @property
    def counterexample(self) -> dict[str, Any] | None:
        return self.broken[0].as_dict() if self.broken else None

    @property
    def corrected(self) -> str | None:
        if isinstance(self.evidence, Unevaluable):
            return self.evidence.reading
        return self.evidence.corrected_claim or None

    @property
    def summary(self) -> str:
        """One paragraph: what was searched, what broke, the correction's fate, the check's note."""
        ev = self.evidence
        if isinstance(ev, Unevaluable):
            return f"not evaluable: {ev.reason} Reading taken: {ev.reading}"
        parts = [f"{self.searched} witness(es) searched ({ev.domain}); {len(self.broken)} break the claim as written"]
        if self.broken:
            w = self.broken[0]
            parts.append(f"first at {short(w.at)}: {short(w.lhs)} {w.rel} {short(w.rhs)} is false")
            if ev.corrected is not None:
                bad = sum(not c.holds for c in ev.corrected)
                parts.append(
                    f"the corrected claim {'holds on all' if not bad else f'breaks on {bad} of'} {len(ev.corrected)}"
                )
        text = "; ".join(parts) + "."
        if self.gap:
            what = (
                "the construction does not reach the bound as written"
                if self.kind is Kind.RESOURCE
                else "the argument does not reach the claim as written"
            )
            closed = "; the corrected claim closes the gap" if self.verdict is Verdict.CORRECTED else ""
            text += f" A gap in the proof: {what}{closed}; the statement is not refuted."
        return text + (f" {ev.note}" if ev.note else "")


def fmt_value(v: Any) -> str:
    if isinstance(v, dict):
        return "(" + ", ".join(f"{k} = {fmt_value(x)}" for k, x in v.items()) + ")"
    if isinstance(v, (tuple, list)):
        return "(" + ", ".join(fmt_value(x) for x in v) + ")"
    return str(v)


def short(v: Any, limit: int = 160) -> str:
    s = fmt_value(v)
    return s if len(s) <= limit else s[: limit - 1] + "…"


@dataclass(frozen=True)
class Obligation:
    id: str
    location: str  # e.g. "Appendix G, proof of Lemma 3, case 2b"
    claim: str  # the claim as written in the paper
    method: str  # "symbolic" | "exact" | "interval" | "numeric search" | "construction"
    check: Callable[..., Evidence | Unevaluable]
    implemented_as: str = ""  # how tmcheck implements the claim (for the errata)
    kind: Kind = Kind.STEP
    satisfied: dict[str, Any] | None = None  # check arguments whose search satisfies the written claim

    @property
    def section(self) -> str:
        return self.id.split(".", 1)[0]

    def judge(self, **params: Any) -> Result:
        """Run the check (with `params` in place of its default search) and derive the verdict."""
        return Result(self.check(**params), self.kind)


@dataclass
class Outcome:
    obligation: Obligation
    result: Result | None
    seconds: float
    error: str | None = None  # the check itself crashed: a defect of tmcheck, not a finding

    @property
    def label(self) -> str:
        return "ERROR" if self.error else self.result.verdict.value


_REGISTRY: dict[str, Obligation] = {}

# Section prefixes of obligation ids, in paper order.
SECTIONS = [
    "definitions",
    "lemma1",
    "lemma2",
    "lemma3",
    "lemma4",
    "lemma5",
    "lemma6",
    "lemma7",
    "lemma8",
    "theorem1",
    "theorem2",
    "appendixB",
    "table1",
]


def obligation(
    id: str,
    location: str,
    claim: str,
    method: str,
    implemented_as: str = "",
    *,
    kind: Kind,
    satisfied: dict[str, Any] | None = None,
):
    """Decorator: register `check` (returning Evidence or Unevaluable) under `id`.

    `satisfied`: arguments of `check` under which the written claim holds; tests run them and expect
    HOLDS, so a finding that no evidence could overturn is caught.
    """

    def wrap(check: Callable[..., Evidence | Unevaluable]) -> Callable[..., Evidence | Unevaluable]:
        if id in _REGISTRY:
            raise ValueError(f"duplicate obligation id {id!r}")
        if id.split(".", 1)[0] not in SECTIONS:
            raise ValueError(f"obligation id {id!r} has no known section prefix")
        _REGISTRY[id] = Obligation(id, location, claim, method, check, implemented_as, Kind(kind), satisfied)
        return check

    return wrap


def all_obligations() -> list[Obligation]:
    import tmcheck.proofs_check as pkg

    for info in pkgutil.iter_modules(pkg.__path__):
        if info.name not in ("registry", "__init__", "__main__"):
            importlib.import_module(f"{pkg.__name__}.{info.name}")
    order = {s: i for i, s in enumerate(SECTIONS)}
    return sorted(_REGISTRY.values(), key=lambda o: (order[o.section], o.id))


def run(obl: Obligation) -> Outcome:
    t0 = time.perf_counter()
    try:
        return Outcome(obl, obl.judge(), time.perf_counter() - t0)
    except Exception as exc:  # reported, never hidden: the CLI exits non-zero on any error
        tb = traceback.format_exception_only(type(exc), exc)[-1].strip()
        return Outcome(obl, None, time.perf_counter() - t0, error=tb)
