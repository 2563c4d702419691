"""The Typer app: one module per command group. Modules import heavy libraries inside commands only,
so that `dflash-doctor --help` stays instant."""
