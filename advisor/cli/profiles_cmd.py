"""``advisor profiles list``: the shipped profiles (``advisor.shipped``) with their provenance;
each is read with ``--profile @NAME``."""

from __future__ import annotations

import os
import sys

import typer

from advisor.cli import common
from advisor.cli.boundary import boundary, out

__all__ = ["profiles_app", "list_"]

profiles_app = typer.Typer(help="Profiles shipped with hpc-advisor, measured on known machines "
                           "(read one with --profile @NAME).", no_args_is_help=True)


@profiles_app.command("list")
@boundary
def list_(json_: bool = common.JsonOpt,
          details: bool = typer.Option(False, "--details", help="A table of everything: "
                                       "machine, provenance (how and when probed), probes and "
                                       "their status, fingerprint.")) -> None:
    """List the shipped profiles, one line each: name, date probed, machine (cut to the
    terminal; whole into a pipe or file); --details: with provenance, probes and fingerprint."""
    from advisor.report.tables import Table
    from advisor.shipped import list_shipped

    shipped = list_shipped()
    if json_:
        import json

        out(json.dumps([s.as_dict() for s in shipped], indent=2) + "\n")
        return
    from advisor.cli.render import console, print_compact, print_table

    if not details:
        brief = Table("", ("--profile @NAME", "probed", "machine"),
                      [(f"@{s.name}", s.created[:10], " ".join(s.machine.split()))
                       for s in shipped])
        if not sys.stdout.isatty() and not os.environ.get("COLUMNS"):
            # a pipe or file reads whole lines (a new user's finding: grep saw a cut machine)
            wide = max(len(r[0]) for r in [brief.headers, *brief.rows])
            out("".join(f"{r[0]:<{wide}}  {r[1]:<10}  {r[2]}\n"
                        for r in [brief.headers, *brief.rows]))
            return
        con = console(soft_wrap=False)
        if not print_compact(con, brief, cut="machine", rule=False):  # too narrow even for the names
            for name, created, _machine in brief.rows:
                out(f"{name} {created}\n")
        return
    rows = [(f"@{s.name}", s.machine,
             f"{s.created}, {s.duration_s:.0f} s on {s.hostname or '?'}, advisor "
             f"{s.advisor_version}: {s.command}\n{s.how}",
             ", ".join(f"{p} {st}" for p, st in s.probes.items()), s.fingerprint)
            for s in shipped]
    print_table(console(soft_wrap=False), Table(
        "Shipped profiles (use with --profile @NAME)",
        ("name", "machine", "provenance", "probes", "fingerprint"), rows))
