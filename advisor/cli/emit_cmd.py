"""``advisor emit``: the profile's settings in a format sites load."""

from __future__ import annotations

import os
from pathlib import Path
from typing import List, Optional

import typer

from advisor.cli import common, complete, outpath
from advisor.cli.boundary import boundary, err, out, warn
from advisor.errors import BadInputError
from advisor.specs.selection import MODULE_DEPENDENCIES

#: ``--spec-range`` values (``advisor.config.schema.SpackSection.spec_range`` checks them).
SPEC_RANGES = ("exact", "minor", "major")
#: The formats --mpi-module and --module-dependency shape (modulefiles that depend on an MPI
#: module: advisor.formats.moddeps).
MODULE_FORMATS = ("lmod", "tcl")


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
    mpi_module: Optional[List[str]] = typer.Option(
        None, "--mpi-module", metavar="LIBRARY=NAME", help="lmod/tcl: the site's module of "
        "this MPI library, e.g. mpich=mpich/4.3.2 (repeatable; [modules] mpi; default "
        "LIBRARY/VERSION from the profile)."),
    module_dependency: Optional[str] = typer.Option(
        None, "--module-dependency", metavar="KIND", help="lmod/tcl: how the module depends "
        "on that MPI module: prereq, depends_on, family or none ([modules] dependency; default "
        "prereq).", autocompletion=lambda: list(MODULE_DEPENDENCIES)),
    spec_range: Optional[str] = typer.Option(None, "--spec-range", metavar="RANGE",
                                             autocompletion=complete.choices(SPEC_RANGES),
                                             help="spack-modules, easybuild-hooks: the versions "
                                             "a block covers: exact (mpich@5.0.2), minor (mpich@5.0) "
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
    if spec_range is not None and format not in ("spack-modules", "easybuild-hooks"):
        raise BadInputError(f"--spec-range goes with --format spack-modules or easybuild-hooks, "
                            f"not {format}")
    used = [o for o, v in (("--mpi-module", mpi_module), ("--module-dependency",
                                                          module_dependency)) if v]
    if used and format not in MODULE_FORMATS and not list_:  # a new user's finding: ignored
        raise BadInputError(f"{used[0]} goes with --format {' or '.join(MODULE_FORMATS)}, not "
                            f"{format}")
    if spec_range is not None and spec_range not in SPEC_RANGES:
        raise BadInputError(f"--spec-range {spec_range!r}: expected one of "
                            f"{', '.join(SPEC_RANGES)}")
    # [plugins], and below the pins, exclusions, [modules] and [spack] emit applies; the
    # command's options are the command line's scope (--spec-range: [spack] spec_range)
    cli, origins = _modules_scope(mpi_module, module_dependency)
    if spec_range:
        cli["spack"] = {"spec_range": spec_range}
        origins[("spack", "spec_range")] = "--spec-range"
    cfg = common.load_config(cli, origins)
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
    from advisor.emit import emitter_of, left_out_notes, plan, write
    from advisor.specs.selection import EmitOptions

    emitter_of(reg, format)  # a misspelt format is the news before a missing profile
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
                   else err(f"note: {line}"), source=label)
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


def _modules_scope(mpi_module: Optional[List[str]],
                   dependency: Optional[str]) -> tuple[dict, dict]:
    """``--mpi-module``/``--module-dependency`` as the command line's configuration scope
    (``[modules]``) and the option of each key, for ``common.load_config``.

    :raises BadInputError: an ``--mpi-module`` that is not ``LIBRARY=NAME`` with a plain module
        name (``advisor.config.schema.MODULE_NAME``); an unknown ``--module-dependency``.
    """
    import re

    from advisor.config.schema import LIBRARY_KEY, MODULE_NAME

    sec: dict = {}
    origins: dict = {}
    for spec in mpi_module or ():
        lib, eq, name = spec.partition("=")
        if not (eq and re.fullmatch(LIBRARY_KEY, lib.strip())
                and re.fullmatch(MODULE_NAME, name.strip())):
            raise BadInputError(f"--mpi-module {spec!r}: give LIBRARY=NAME, a library name "
                                "and a plain module name (letters, digits, _ . - and /), e.g. "
                                "mpich=mpich/4.3.2")
        sec.setdefault("mpi", {})[lib.strip()] = name.strip()
        origins[("modules", "mpi", lib.strip())] = "--mpi-module"
    if dependency is not None and dependency not in MODULE_DEPENDENCIES:
        raise BadInputError(f"--module-dependency {dependency!r}: not one of "
                            f"{', '.join(MODULE_DEPENDENCIES)}")
    if dependency is not None:
        sec["dependency"] = dependency
        origins[("modules", "dependency")] = "--module-dependency"
    return ({"modules": sec} if sec else {}), origins
