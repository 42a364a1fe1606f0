"""Rich rendering of ``advisor.report.tables.Table`` rows: every cell plain, printable text."""

from __future__ import annotations

import os
import sys

from advisor.cli.boundary import printable


def console(stderr: bool = False, **kw):
    """A rich Console for tables: the terminal's width, or 160 columns when the output is a file
    or pipe (rich's 80-column default folds every cell of a profile table)."""
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    width = None if stream.isatty() or os.environ.get("COLUMNS") else 160
    return Console(file=stream, width=width, **kw)


def rich_table(table):
    """A rich Table of ``table`` (an ``advisor.report.tables.Table``) whose cells fold instead
    of ending in an ellipsis (names, values and errors are read in full or not at all), and are
    never read as rich markup (a value such as ``[/x]`` would raise MarkupError or restyle)."""
    from rich.table import Table
    from rich.text import Text

    t = Table(title=table.title or None)
    for h in table.headers:
        t.add_column(h, overflow="fold")
    for row in table.rows:
        t.add_row(*(Text(printable(str(c), keep_newlines=True)) for c in row))
    return t


def print_table(con, table) -> bool:
    """Print ``table`` on ``con`` when it has rows; returns whether it did."""
    if not table.rows:
        return False
    con.print(rich_table(table))
    return True


def print_line(con, text: str, **kw) -> None:
    """One plain line on ``con``: escaped, never markup or highlighted."""
    con.print(printable(text), markup=False, highlight=False, **kw)
