"""tmcheck.cli: the Typer app `tmcheck`; thin wrappers over library functions."""
