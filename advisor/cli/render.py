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


def print_compact(con, table, cut: str = "", rule: bool = True) -> bool:
    """``table`` as plain aligned lines, one per row: the title, the headers, a rule (unless
    not ``rule``), the rows,
    each column as wide as its widest cell, nothing wrapped (a name is never split).  The
    column headed ``cut`` (prose) takes the width left and ends in ``…`` where it is cut.
    Prints nothing and returns False when the other columns alone do not fit the console."""
    from rich.cells import cell_len

    cells = [[printable(str(c)) for c in row] for row in [table.headers, *table.rows]]
    widths = [max(cell_len(row[i]) for row in cells) for i in range(len(table.headers))]
    col = table.headers.index(cut) if cut in table.headers else -1
    fixed = sum(w + 2 for i, w in enumerate(widths) if i != col)
    if col >= 0:
        room = con.width - fixed - 2
        if room < 10:
            return False
        widths[col] = min(widths[col], room)
    elif fixed > con.width:
        return False
    if table.title:
        con.print(table.title, style="italic", markup=False, highlight=False)
    for n, row in enumerate(cells):
        parts = []
        for i, (text, w) in enumerate(zip(row, widths)):
            if cell_len(text) > w:
                text = text[:w - 1] + "…"
            parts.append(" " + text + " " * (w - cell_len(text)) + " ")
        con.print("".join(parts).rstrip(), markup=False, highlight=False, soft_wrap=True)
        if n == 0 and rule:
            con.print(" " + "─" * (sum(w + 2 for w in widths) - 2), markup=False,
                      highlight=False, soft_wrap=True)
    return True


def print_table(con, table) -> bool:
    """Print ``table`` on ``con`` when it has rows; returns whether it did."""
    if not table.rows:
        return False
    con.print(rich_table(table))
    return True


def print_line(con, text: str, **kw) -> None:
    """One plain line on ``con``: escaped, never markup or highlighted."""
    con.print(printable(text), markup=False, highlight=False, **kw)


def print_wrapped(con, text: str, indent: str = "", hang: str = "    ",
                  max_lines: int = 0) -> int:
    """``text`` on ``con`` as lines of at most the console's width, broken only at spaces (a
    word longer than the width, e.g. a long setting name, stays whole on its own line: never
    cut inside); ``indent`` starts the first line, ``hang`` the others.  With ``max_lines``
    (> 0) the text is cut at a space to fit that many lines and ends in ``…``.  Returns the
    number of lines printed."""
    import textwrap

    width = max(con.width, 20)
    lines = textwrap.wrap(printable(text), width=width, initial_indent=indent,
                          subsequent_indent=hang, break_long_words=False,
                          break_on_hyphens=False) or [""]
    if 0 < max_lines < len(lines):
        lines = lines[:max_lines]
        last = lines[-1]
        while len(last) + 2 > width and " " in last.strip():
            last = last.rstrip().rsplit(" ", 1)[0]
        lines[-1] = last.rstrip(" ,;:") + " …"
    for line in lines:
        con.print(line, markup=False, highlight=False, soft_wrap=True)
    return len(lines)
