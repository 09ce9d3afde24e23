"""`tmcheck network`: evaluate and inspect tmcheck-network files (format in theory/netfile.py)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from tmcheck.cli.common import UserError, console, handle_errors, network_resources_table, print_json
from tmcheck.cli.options import JsonOpt, positive_int
from tmcheck.theory import netfile
from tmcheck.theory.backends import MAX_BITS, evaluate
from tmcheck.theory.network import resources, to_fraction

app = typer.Typer(no_args_is_help=True, help="Evaluate and inspect tmcheck-network v1 files (Def. 1-7).")


# negative coordinates (-1/2) are not options: unknown "-..." tokens stay arguments
@app.command("eval", context_settings={"ignore_unknown_options": True})
@handle_errors
def eval_cmd(
    file: Path = typer.Argument(..., help="A tmcheck-network v1 JSON file."),
    x: list[str] = typer.Argument(..., help="Input coordinates: D numbers per input ('1/3', '0.5', '-2', '1e-3')."),
    exact: bool | None = typer.Option(None, "--exact/--float", help="Backend (default: the file's arithmetic)."),
    max_bits: int = typer.Option(
        MAX_BITS,
        "--max-bits",
        callback=positive_int,
        help="Exact backend: stop once a numerator or denominator exceeds this many bits.",
    ),
    json_: JsonOpt = False,
) -> None:
    """Evaluate T(x) = H_final[row, col] (Definition 1, Section 2.3) exactly or in float64.

    Example: tmcheck network eval lemma1.json 1/3 -1/2 --float
    """
    net = netfile.load(file)
    if len(x) % net.D:
        raise UserError(f"got {len(x)} coordinates; inputs need a multiple of D = {net.D}")
    vals = [to_fraction(v) for v in x]
    rows = [vals[i : i + net.D] for i in range(0, len(vals), net.D)]
    backend = None if exact is None else ("exact" if exact else "float64")
    out = evaluate(net, rows, backend=backend, max_bits=max_bits)
    used = backend or net.arithmetic
    if json_:
        print_json({"file": str(file), "backend": used, "inputs": rows, "outputs": list(out)})
        return
    table = Table(title=f"T(x) of {file.name} ({used})")
    table.add_column("x")
    table.add_column("T(x)", justify="right")
    for r, v in zip(rows, out, strict=True):
        table.add_row(", ".join(str(c) for c in r), str(v))
    console.print(table)


@app.command("info")
@handle_errors
def info_cmd(
    file: Path = typer.Argument(..., help="A tmcheck-network v1 JSON file."),
    json_: JsonOpt = False,
) -> None:
    """Resources measured from the weights (Definition 2, Section 2.3).

    L_T, m, L_FFN, w_FFN, l, d_embd, kappa, parameters.

    Example: tmcheck network info lemma1.json --json
    """
    net = netfile.load(file)
    res = resources(net)
    if json_:
        print_json(
            {"file": str(file), "arithmetic": net.arithmetic, "decoder": net.decoder, **res.as_dict(), "meta": net.meta}
        )
        return
    console.print(network_resources_table(res, title=f"{file.name} ({net.arithmetic})"))
