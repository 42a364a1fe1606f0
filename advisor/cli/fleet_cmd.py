"""``advisor fleet``: probe every node through the scheduler, and report on the nodes' profiles."""

from __future__ import annotations

import typer

fleet_app = typer.Typer(help="Probe every node of a partition through the scheduler; group "
                        "nodes into machine classes, write one profile per class, name "
                        "outlier nodes.", no_args_is_help=True, add_completion=False)
