"""The development page (docs/development.md): the CI's test timing and the GPU check's status line."""

from __future__ import annotations

from collections.abc import Callable

from docs_gen._common import cell, gpu_checks_words, gpu_doc, timing_words

PAGES = ("docs/development.md",)


def ci_timing() -> str:
    return timing_words("ci", "The last timed `.ci/run`")


def gpu_status() -> str:
    doc = gpu_doc()
    if doc is None:
        return (
            "`benchmarks/results/gpu.json` holds no CUDA run: the GPU check has not been run on a GPU, "
            "and no GPU figure is quoted."
        )
    env = doc.get("environment", {})
    return (
        f"The last GPU check ran on {cell(env.get('device_name', 'an unrecorded device'))} "
        f"({doc.get('started_utc', 'an unrecorded date')}, torch {env.get('torch')}): "
        f"{gpu_checks_words(doc)}; its figures are on [Speed](speed.md#gpu)."
    )


# benchmark numbers (benchmarks/results/*.json): filled when the site is built, never committed
AT_BUILD = {"dev.gpu"}

GENERATORS: dict[str, Callable[[], str]] = {
    "dev.ci-timing": ci_timing,
    "dev.gpu": gpu_status,
}
