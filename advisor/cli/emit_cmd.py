"""``advisor emit``: the profile's settings in a format sites load."""

from __future__ import annotations

import os
from pathlib import Path
from typing import List, Optional

import typer

from advisor.cli import common, complete, outpath
from advisor.cli.boundary import boundary, err, out, warn
from advisor.errors import BadInputError

#: ``--spec-range`` values (``advisor.config.schema.SpackSection.spec_range`` checks them).
SPEC_RANGES = ("exact", "minor", "major")


@boundary
def emit(
    format: str = typer.Option("env", "--format", "-f", metavar="FORMAT", help="Output format "
                               "(see --list).", autocompletion=complete.emit_formats),
    profile: Optional[Path] = common.ProfileOpt,
    list_: bool = typer.Option(False, "--list", help="List the formats and exit."),
    json_: bool = typer.Option(False, "--json", help="With --list: the formats as JSON (name, "
                               "description, plugin, extension, setting kinds, lint-readable)."),
    no_comments: bool = typer.Option(False, "--no-comments", help="Drop the rationale comments."),
    all_: bool = typer.Option(False, "--all", help="Also write settings measured to be right "
                              "at the library default, and advice advisor verify refuted on "
                              "the profile's machine class (with a comment)."),
    plugin: Optional[List[str]] = typer.Option(None, "--plugin", metavar="NAME", help="Only this "
                                               "probe/plugin.", autocompletion=complete.plugins),
    strict: bool = typer.Option(False, "--strict", help="Refuse a profile from another machine "
                                "or other library versions."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", metavar="PATH",
                                          help="Write to this file (atomically) instead of stdout "
                                               "('-': stdout); its directory must exist."),
    mkdir: bool = outpath.MkdirOpt,
    spec_range: Optional[str] = typer.Option(None, "--spec-range", metavar="RANGE",
                                             autocompletion=complete.choices(SPEC_RANGES),
                                             help="spack-modules: the versions a package block "
                                             "covers: exact (mpich@5.0.2), minor (mpich@5.0) "
                                             "or major (mpich@5) (default: [spack] spec_range "
                                             "of the configuration, exact)."),
) -> None:
    """Print the profile's settings in a format sites load (env, csh, fish, lmod, tcl, ...)."""
    if output is not None and str(output) == "-":
        output = None
    if output is not None:
        outpath.check_output(output, mkdir=mkdir)  # nothing else is read before a refusal
    from advisor.facts import detect_fingerprint_facts
    from advisor.plugins import collect
    from advisor.steps import start_step

    # This machine's facts for the "profile from another machine" check: started first so
    # that its subprocess (mpichversion) runs while the profile is read.  It never raises.
    here = start_step(detect_fingerprint_facts, name="advisor-detect")
    # Every plugin is loaded even for a core format: a setting is emitted only when a
    # registered knob declares it, and the knobs' version ranges decide which settings the
    # recorded library versions read (advisor.libraries.reads.drop_reason).
    if spec_range is not None and format != "spack-modules":
        raise BadInputError(f"--spec-range goes with --format spack-modules, not {format}")
    if spec_range is not None and spec_range not in SPEC_RANGES:
        raise BadInputError(f"--spec-range {spec_range!r}: expected one of "
                            f"{', '.join(SPEC_RANGES)}")
    # [plugins], and below the pins and exclusions emit applies; --spec-range is the command
    # line scope of [spack] spec_range
    cfg = common.load_config({"spack": {"spec_range": spec_range}} if spec_range else None,
                             {("spack", "spec_range"): "--spec-range"})
    reg = collect(common.plugin_manager(cfg))
    if list_:
        if json_:
            import json

            out(json.dumps([{"name": n, "description": e.description, "plugin": e.plugin,
                             "extension": e.extension,
                             "kinds": list(e.kinds) if e.kinds is not None else None,
                             "lint": e.parse is not None}
                            for n, e in sorted(reg.emitters.items())], indent=2) + "\n")
            return
        width = max((len(n) for n in reg.emitters), default=4)
        out("".join(f"{n:<{width}}  {e.description}\n" for n, e in sorted(reg.emitters.items())))
        return
    if json_:
        raise BadInputError("--json goes with --list (the formats as JSON); an emitted file is "
                            "chosen with --format json")
    from advisor.emit import left_out_notes, plan, write
    from advisor.specs.selection import EmitOptions

    prof = common.load(profile)
    if output is not None:
        try:
            same = output.exists() and os.path.samefile(output, common.profile_path(profile))
        except OSError:
            same = False
        if same:
            raise BadInputError(f"{output}: is the profile being read; --output must name "
                                "another file")
    common.check_profile_plugins(prof, plugin)
    label = str(common.profile_path(profile))
    spack = cfg.model.spack  # [spack] of the configuration scopes (docs/config.md)
    placement = spack.every_program
    opts = EmitOptions(comments=not no_comments, include_defaults=all_,
                       plugins=frozenset(plugin) if plugin else None, refuse_undeclared=True,
                       spec_range=spack.spec_range,
                       every_program=placement if isinstance(placement, str)
                       else tuple(placement))
    planned = plan(prof, reg, cfg, here(None), fmt=format, options=opts, label=label,
                   strict=strict, say=lambda level, line: warn(line) if level == "warning"
                   else err(f"note: {line}"))
    text = write(planned.emitter, planned.selection, label=label)
    if output is not None:
        from advisor.save import atomic_write_text, check_writable

        check_writable(output)  # before the notes: a file that cannot be written is the news
    notes = planned.emitter.notes(planned.selection) if planned.emitter.notes else []
    for level, line in [*left_out_notes(planned.selection, planned.emitter.kinds), *notes]:
        if level == "warning":
            warn(line)
        else:
            err(f"note: {line}")
    if output is not None:
        atomic_write_text(output, text)
        err(f"{format} written to {output}")
    else:
        out(text)
