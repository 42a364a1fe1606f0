"""``advisor probe``: detect facts, run the selected probes, write the profile."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path
from typing import List, Optional

import typer

from advisor.cli import common, complete, outpath
from advisor.cli.boundary import boundary, err, exit_with, out, signals_interrupt, warn
from advisor.errors import BadInputError, ExitCode
from advisor.probe import FULL_AIM_S, QUICK_AIM_S


@boundary
def probe(
    plugin: Optional[List[str]] = typer.Option(None, "--plugin", metavar="NAME", help="Run only "
                                               "this probe or plugin (repeatable).",
                                               autocompletion=complete.plugins),
    skip_plugin: Optional[List[str]] = typer.Option(None, "--skip-plugin", metavar="NAME",
                                                    help="Skip this probe or plugin "
                                                    "(repeatable).",
                                                    autocompletion=complete.plugins),
    quick: bool = typer.Option(False, "--quick", help="Smaller sweeps; default budget 60 s."),
    time_budget: Optional[float] = typer.Option(None, "--time-budget", metavar="SECONDS", min=1.0,
                                                help="Total seconds for all probes, a hard "
                                                "bound (default 300, 60 with --quick), shared "
                                                "in turn: each probe may use its equal part of "
                                                "what is left. The run "
                                                f"also aims to end within {FULL_AIM_S:g} s "
                                                f"({QUICK_AIM_S:g} s quick) or this budget: "
                                                "probes that measure until stable "
                                                "may stop there."),
    launcher: Optional[str] = typer.Option(None, "--launcher", metavar="CMD", help="Command that "
                                           "starts a 2-rank MPI job, e.g. 'srun -n 2' (default: "
                                           "$ADVISOR_LAUNCHER or mpiexec -n 2)."),
    option: Optional[List[str]] = typer.Option(None, "--option", "-O", metavar="KEY=VALUE",
                                               help="Probe option KEY=VALUE, e.g. "
                                               "alloc-size=8MiB (repeatable; a key no probe "
                                               "of the run reads is refused; 'advisor "
                                               "plugins --options' lists them)."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", metavar="PATH",
                                          help="Where to write the profile (its directory "
                                          "must exist; default: this host's profile in "
                                          "$ADVISOR_HOME/profiles, created)."),
    mkdir: bool = outpath.MkdirOpt,
    seed: int = typer.Option(12345, "--seed", metavar="N", help="Seed for fills and bootstrap."),
    thin: bool = typer.Option(False, "--thin", help="Fleet profile: thin the samples of each "
                              "point until the profile fits 64 KiB (advisor.fleet.thin), and write "
                              "its summary beside it as <name>.summary.json "
                              "(advisor.fleet.summary)."),
    json_: bool = typer.Option(False, "--json", help="Print a JSON summary on stdout instead of "
                               "the profile's path: the path, and per probe its status, counts "
                               "and seconds (advisor.runner.summary)."),
) -> None:
    """Detect facts, run each plugin's probe, and write the profile (its path goes to stdout)."""
    from advisor.facts import detect
    from advisor.measure.load import LoadWindow
    from advisor.runner import partial, run_probes
    from advisor.save import check_writable, save_or_rescue

    window = LoadWindow()  # other processes' CPU use while the facts are read

    options = common.parse_options(option)
    launcher_argv = common.launcher_argv(launcher)
    reg = common.load_registry(plugin, skip_plugin)
    if not reg.probes:
        raise BadInputError("no probe to run (all plugins skipped or disabled)")
    common.check_option_keys(options, reg.probes)  # a mistyped key would do nothing
    target = common.profile_path(output, write=True)
    if output is not None:  # the store (no -o) is advisor's own and is created
        outpath.check_output(target, mkdir=mkdir)
    check_writable(target)  # fail now, not after minutes of measuring
    facts = detect(reg.fact_detectors)
    for w in facts.warnings:
        warn(w)
    busy = window.wait_result()
    if busy.busy:
        warn(busy.warning())

    from advisor.cli.progress import probe_progress

    during = LoadWindow()  # the hypervisor's steal while the probes measure
    with probe_progress() as on_event, signals_interrupt():
        prof = run_probes(reg.probes, reg.owners("probe"), facts, time_budget_s=time_budget,
                          quick=quick, launcher=launcher_argv, options=options,
                          on_event=on_event, command=" ".join(["advisor"] + sys.argv[1:]),
                          seed=seed, libraries=reg.libraries, busy_cores_before=busy.cores)
    vm = during.result()
    if vm is not None and vm.steal_share is not None:
        prof = prof.model_copy(update={"provenance": prof.provenance.model_copy(
            update={"steal_share": vm.steal_share})})
        if vm.noisy:
            warn(vm.steal_warning())
    if thin:
        from advisor.fleet.thin import FLEET_PROFILE_BYTES, thin_profile

        prof, size = thin_profile(prof)
        if size > FLEET_PROFILE_BYTES:
            warn(f"--thin: the profile is {size} bytes even at one sample per point "
                 f"(target {FLEET_PROFILE_BYTES}); statistics and values are kept whole")
    save_or_rescue(prof, target)  # e.g. the disk filled up while probing: keep the measurements
    if thin:  # the fleet report's shortcut for exactly these bytes (advisor.fleet.summary)
        from advisor.fleet.summary import write_sidecar

        write_sidecar(prof, target, reg.probes)
    for res in prof.results:
        line = f"{res.probe}: {res.status}"
        if res.reason:
            line += f" ({res.reason})"
        line += f", {len(res.recommendations)} recommendation(s), {len(res.findings)} finding(s)"
        err(line)
        for f in res.findings:  # what makes the advice doubtful is said here, not only in show
            if f.severity in ("warning", "error"):
                # cut at a word, marked, not mid-word (show has the whole text)
                first = textwrap.shorten(first_clause(f.message), 200, placeholder=" …")
                err(f"  {f.severity}: {f.id}: {first}"
                    + (f" (fix: {textwrap.shorten(f.remedy, 160, placeholder=' …')})"
                       if f.remedy else ""))
    err(f"profile written to {target}")
    if json_:
        import json

        from advisor.runner import summary

        out(json.dumps(summary(prof, target), indent=2) + "\n")
    else:
        out(f"{target}\n")
    if partial(prof):
        exit_with(ExitCode.PARTIAL)


def first_clause(message: str) -> str:
    """The text of ``message`` up to its first ``"; "`` outside brackets, then `` …`` where
    more followed (``show`` has the whole text): a cut inside ``(0.69, the advice 0.68; 1 =
    ...)`` left the bracket open and the line unmarked."""
    depth = 0
    for i, ch in enumerate(message):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth = max(0, depth - 1)
        elif ch == ";" and depth == 0 and message.startswith("; ", i):
            return message[:i] + " …"
    return message
