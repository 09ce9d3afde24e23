"""The obligation registry: the single source for `tmcheck proofs` and the README's errata.

An obligation is one claim of the paper: a stable id with a section prefix (`lemma3.case2b`), the
paper location, the claim as written, and a check. Running the check returns a Result: a verdict
(HOLDS, FAILS-AS-WRITTEN with a counterexample, HOLDS-AFTER-CORRECTION with the corrected statement)
and the evidence. Any module of this package declares obligations with @obligation (ids must start
with a prefix in SECTIONS); `all_obligations()` imports every module of the package and returns
them in paper order.
"""

from __future__ import annotations

import enum
import importlib
import pkgutil
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable


class Verdict(str, enum.Enum):
    HOLDS = "HOLDS"
    FAILS = "FAILS-AS-WRITTEN"
    CORRECTED = "HOLDS-AFTER-CORRECTION"


@dataclass
class Result:
    verdict: Verdict
    evidence: str
    counterexample: Any = None  # required for FAILS and CORRECTED: the input where the claim as written breaks
    corrected: str | None = None  # required for CORRECTED: the statement that holds (and tmcheck implements)
    data: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.verdict in (Verdict.FAILS, Verdict.CORRECTED) and self.counterexample is None:
            raise ValueError(f"a {self.verdict.value} result needs a counterexample")
        if self.verdict is Verdict.CORRECTED and not self.corrected:
            raise ValueError("a HOLDS-AFTER-CORRECTION result needs the corrected statement")


@dataclass(frozen=True)
class Obligation:
    id: str
    location: str  # e.g. "Appendix G, proof of Lemma 3, case 2b"
    claim: str  # the claim as written in the paper
    method: str  # "symbolic" | "exact" | "interval" | "numeric search" | "construction"
    check: Callable[[], Result]
    implemented_as: str = ""  # how tmcheck implements the claim (for the errata)

    @property
    def section(self) -> str:
        return self.id.split(".", 1)[0]


@dataclass
class Outcome:
    obligation: Obligation
    result: Result | None
    seconds: float
    error: str | None = None  # the check itself crashed: a defect of tmcheck, not a finding


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


def obligation(id: str, location: str, claim: str, method: str, implemented_as: str = ""):
    """Decorator: register `check` (a no-argument function returning a Result) under `id`."""

    def wrap(check: Callable[[], Result]) -> Callable[[], Result]:
        if id in _REGISTRY:
            raise ValueError(f"duplicate obligation id {id!r}")
        if id.split(".", 1)[0] not in SECTIONS:
            raise ValueError(f"obligation id {id!r} has no known section prefix")
        _REGISTRY[id] = Obligation(id, location, claim, method, check, implemented_as)
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
        res = obl.check()
        if not isinstance(res, Result):
            raise TypeError(f"check returned {type(res).__name__}, not Result")
        return Outcome(obl, res, time.perf_counter() - t0)
    except Exception as exc:  # reported, never hidden: the CLI exits non-zero on any error
        tb = traceback.format_exception_only(type(exc), exc)[-1].strip()
        return Outcome(obl, None, time.perf_counter() - t0, error=tb)
