"""The ID guide (docs/guide/intrinsic-dimension.md): the estimators on data of known dimension, from
benchmarks/results/id.json; filled when the site is built."""

from __future__ import annotations

from collections.abc import Callable

from docs_gen._common import load_bench

PAGES = ("docs/guide/intrinsic-dimension.md",)


def id_validation() -> str:
    v = load_bench("id").get("validation_markdown")
    return v.strip() if v else "*(benchmarks/results/id.json has no validation table yet: `make bench BENCH=id`)*"


# benchmark numbers (benchmarks/results/*.json): filled when the site is built, never committed
AT_BUILD = {"id_validation"}

GENERATORS: dict[str, Callable[[], str]] = {
    "id_validation": id_validation,
}
