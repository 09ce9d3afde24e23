"""`tmcheck data`: the corpora of the data-scaling experiment (paper Section 3, on offline data).

`stats` prints documents, bytes, BPE tokens and gzip ratio per split; `prepare` installs and
extracts the optional Debian corpora, with its progress on stderr (also under --json).
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
