"""`tmcheck data`: the corpora of the data-scaling experiment (paper Section 3, on offline data).

`stats` prints documents, bytes, BPE tokens and gzip ratio per split; `prepare` installs and
extracts the optional Debian corpora, with its progress on stderr (also under --json); `synth` names
(and with --out prepares) a generated corpus whose data-scaling exponent is known (issue #39).
Library: tmcheck.empirics.data.
"""

from __future__ import annotations

import typer
from rich.table import Table

from tmcheck.cli.common import console, handle_errors, print_json
from tmcheck.cli.options import JsonOpt


def _vocab(value: int) -> int:
    from tmcheck.empirics.data.tokens import check_vocab

    try:
        return check_vocab(value)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None


app = typer.Typer(no_args_is_help=True, help="Corpora for pretraining: stats and preparation (paper Sec. 3).")


@app.command()
@handle_errors
def stats(
    corpus: list[str] | None = typer.Argument(None, help="Corpora (default: code, prose, stories)."),
    vocab: int = typer.Option(
        4096, "--vocab", callback=_vocab, help="BPE vocabulary trained on each corpus to count tokens (258-1048576)."
    ),
    json_: JsonOpt = False,
) -> None:
    """Documents, bytes, tokens and gzip ratio of each corpus, per train/val/test split."""
    from tmcheck.empirics.data import BUILTIN, corpus_stats
    from tmcheck.util.progress import bar

    names = corpus or list(BUILTIN)
    rows = []
    with bar(len(names), "corpus stats", corpus="-") as advance:
        for c in names:
            rows.append(corpus_stats(c, vocab))
            advance(corpus=c)
    if json_:
        print_json(rows)
        return
    table = Table(title=f"corpora (byte-level BPE, vocabulary {vocab}; gzip ratio = compressed / raw bytes)")
    for col in ("corpus", "split", "documents", "bytes", "tokens", "gzip ratio"):
        table.add_column(col, justify="left" if col in ("corpus", "split") else "right")
    for r in rows:
        for split, s in [*r["splits"].items(), ("total", r["total"])]:
            table.add_row(
                r["corpus"] if split == "train" else "",
                split,
                f"{s['documents']:,}",
                f"{s['bytes']:,}",
                f"{s['tokens']:,}",
                f"{s['gzip_ratio']:.3f}",
            )
    console.print(table)


@app.command()
@handle_errors
def prepare(
    name: str = typer.Argument(
        ..., help="sql (mariadb-test-data) or prose-large (linux-source-6.1, python3.11-doc, sword-text-web)."
    ),
    no_install: bool = typer.Option(False, "--no-install", help="Skip apt-get (packages already installed)."),
    json_: JsonOpt = False,
) -> None:
    """Install the Debian packages of an optional corpus and extract its documents to the data root."""
    from tmcheck.empirics.data.prepare import STAGES
    from tmcheck.empirics.data.prepare import prepare as do_prepare
    from tmcheck.util.progress import bar

    with bar(len(STAGES), f"prepare {name}", stage="-") as advance:
        path = do_prepare(name, install=not no_install, on_stage=lambda stage: advance(stage=stage))
    if json_:
        print_json({"corpus": name, "path": str(path)})
    else:
        console.print(f"prepared {name}: {path}")


@app.command()
@handle_errors
def synth(
    kind: str = typer.Argument(..., help="manifold (α = 2β/(2β+d)) or zipf (α = a/(1+a), Hutter 2021)."),
    param: list[str] | None = typer.Option(
        None, "--set", help="A generator parameter key=value (repeat; e.g. --set d=1 --set beta=0.5)."
    ),
    tokens: int = typer.Option(1_000_000, "--tokens", min=1000, help="Symbols of the whole corpus (all splits)."),
    seed: int = typer.Option(0, "--seed", min=0, help="Seed of the generator."),
    out: str | None = typer.Option(
        None, "--out", help="Also tokenize it into this directory (BPE and token shards, as `sweep pretrain` does)."
    ),
    vocab: int = typer.Option(1024, "--vocab", callback=_vocab, help="BPE vocabulary of --out (258-1048576)."),
    json_: JsonOpt = False,
) -> None:
    """A corpus whose data-scaling exponent is known by construction (issue #39): its corpus name (what
    `train` and `sweep pretrain --corpus` take), the exponent and the size; --out prepares its shards."""
    from pathlib import Path

    from tmcheck.empirics.data import known
    from tmcheck.empirics.data.tokens import DatasetSpec, prepare_dataset

    g = known.parse(f"{known.PREFIX}{kind}:" + ":".join([f"tokens={tokens}", f"seed={seed}", *(param or [])]))
    row = known.describe(g)
    if out is not None:
        meta = prepare_dataset(DatasetSpec(corpus=g.name, vocab_size=vocab), Path(out))
        row["dataset"] = {"path": out, "splits": meta["splits"], "vocab_size": meta["vocab_size"]}
    if json_:
        print_json(row)
        return
    console.print(f"corpus {row['corpus']}")
    console.print(
        f"{row['kind']}: exponent {row['exponent']:.4f}; {row['records']:,} records in {row['documents']:,} documents "
        f"({row['symbols_per_record']} symbols a record)"
    )
    if out is not None:
        tok = {s: v["tokens"] for s, v in row["dataset"]["splits"].items()}
        console.print(f"prepared {out}: " + ", ".join(f"{s} {n:,} tokens" for s, n in tok.items()))
