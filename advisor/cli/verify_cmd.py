"""``advisor verify``: re-measure each recommendation here and store the verdicts."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from advisor.baseline import Baseline  # no models import: the CLI starts fast
from advisor.cli import common, complete
from advisor.cli.boundary import boundary, err, exit_with, out, warn
from advisor.cli.render import console, print_table, rich_table
from advisor.errors import BadInputError, ExitCode

VerifyJsonOpt = typer.Option(False, "--json", help="Print the verdicts as JSON on stdout instead "
                             "of the profile's path (the tables still go to stderr).")


@boundary
def verify(
    profile: Optional[Path] = common.ProfileOpt,
    plugin: Optional[List[str]] = typer.Option(None, "--plugin", metavar="NAME", help="Verify "
                                               "only this probe or plugin's recommendations "
                                               "(repeatable).",
                                               autocompletion=complete.plugins),
    against: Baseline = typer.Option(Baseline.DEFAULTS, "--against", case_sensitive=False,
                                     help="The baseline: the library defaults, or the current "
                                     "environment's values."),
    against_env: bool = typer.Option(False, "--against-env", help="Same as --against env."),
    alone: bool = typer.Option(False, "--alone", help="Only each recommendation with its own "
                               "settings; skip the joint emitted environment (half the "
                               "measurements, no interaction check)."),
    json_: bool = VerifyJsonOpt,
    quick: bool = typer.Option(False, "--quick", help="Fewer sizes and repeats; default budget "
                               "60 s."),
    time_budget: Optional[float] = typer.Option(None, "--time-budget", metavar="SECONDS", min=1.0,
                                                help="Total seconds for all verifications "
                                                "(default 300; with --app 270)."),
    launcher: Optional[str] = typer.Option(None, "--launcher", metavar="CMD", help="Command that "
                                           "starts a 2-rank MPI job (default: $ADVISOR_LAUNCHER "
                                           "or mpiexec -n 2)."),
    option: Optional[List[str]] = typer.Option(None, "--option", "-O", metavar="KEY=VALUE",
                                               help="Probe option KEY=VALUE (repeatable)."),
    seed: int = typer.Option(12345, "--seed", metavar="N", help="Seed for fills and bootstrap."),
    app: bool = typer.Option(False, "--app", help="A/B-test your own command (given after "
                             "'--') under the environment advisor emit writes (B) vs the "
                             "baseline (A); docs/verify-app.md.", rich_help_panel="--app"),
    command: Optional[List[str]] = typer.Argument(None, metavar="-- CMD", help="With "
                                                  "--app: the command to run, as given."),
    env_file: Optional[Path] = typer.Option(None, "--env", metavar="FILE", help="--app: B is "
                                            "this env file's settings (any format advisor lint "
                                            "reads) instead of the profile's.",
                                            rich_help_panel="--app"),
    metric: Optional[str] = typer.Option(None, "--metric", metavar="REGEX", help="--app: the "
                                         "figure of merit is the number this regex captures "
                                         "(last match, group 1) in the output; default: the "
                                         "wall time.", rich_help_panel="--app"),
    higher_is_better: Optional[bool] = typer.Option(
        None, "--higher-is-better/--lower-is-better", help="--app: the metric's direction "
        "(required with --metric).", rich_help_panel="--app"),
    metric_file: Optional[str] = typer.Option(None, "--metric-file", metavar="GLOB",
                                              help="--app: also read the metric from files "
                                              "matching GLOB written during the run (HPCG, "
                                              "HPCC).", rich_help_panel="--app"),
    check: Optional[str] = typer.Option(None, "--check", metavar="REGEX", help="--app: a run "
                                        "whose output does not match REGEX failed.",
                                        rich_help_panel="--app"),
    runs: int = typer.Option(20, "--runs", metavar="N", help="--app: at most N runs of each "
                             "arm (rounds).", rich_help_panel="--app"),
    aa_rounds: int = typer.Option(5, "--aa-rounds", metavar="N", help="--app: the first N "
                                  "rounds add an A/A pair (the noise floor).",
                                  rich_help_panel="--app"),
    run_timeout: Optional[float] = typer.Option(None, "--run-timeout", metavar="SECONDS",
                                                help="--app: a run still going after this "
                                                "long failed (default: 10x the baseline's "
                                                "warm-up, at least 10 s).",
                                                rich_help_panel="--app"),
    attribute: bool = typer.Option(False, "--attribute", help="--app: when B differs beyond "
                                   "noise, measure B without each setting (or plugin) and say "
                                   "which carry the gain or loss.", rich_help_panel="--app"),
    attribute_by: str = typer.Option("setting", "--attribute-by", metavar="setting|plugin",
                                     help="--app: leave-one-out groups.",
                                     rich_help_panel="--app"),
    no_bisect: bool = typer.Option(False, "--no-bisect", help="--app: do not bisect the "
                                   "settings when B breaks the command.",
                                   rich_help_panel="--app"),
) -> None:
    """Re-measure each recommendation here, advised vs library defaults, interleaved: alone, and
    in the joint environment advisor emit writes (every plugin's settings together, one verdict
    per plugin recommendation); store the verdicts in the profile.  Tables on stderr; --json on
    stdout; exit 1 on a regression or a verdict that reverses jointly (finding joint-reversal).

    With --app -- CMD ...: run your command under A (baseline) and B (the emitted environment),
    interleaved with an A/A floor, until the ratio's CI decides; exit 1 when B is worse beyond
    the floor or breaks the command (its breaking settings bisected)."""

    from advisor.facts import detect
    from advisor.facts.compare import machine_mismatch, warning_lines
    from advisor.report.tables import Table
    from advisor.save import check_writable, save_or_rescue
    from advisor.report.verify import joint_rows, table_rows, to_json
    from advisor.joint import reversal_findings
    from advisor.verify import has_failure, has_regression, verify_profile

    baseline = Baseline.ENV if against_env else against
    if app:
        from advisor.cli.verify_app_cmd import run_app

        if attribute_by not in ("setting", "plugin"):
            raise BadInputError(f"--attribute-by {attribute_by!r}: setting or plugin")
        micro = [name for name, given in (("--alone", alone), ("--quick", quick),
                                          ("--launcher", launcher is not None),
                                          ("--option", bool(option))) if given]
        run_app(command=list(command or []), profile=profile, plugin=plugin,
                baseline=baseline.value, env_file=env_file, metric=metric,
                higher_is_better=higher_is_better, metric_file=metric_file, check=check,
                runs=runs, aa_rounds=aa_rounds, time_budget=time_budget,
                run_timeout=run_timeout, attribute=attribute, attribute_by=attribute_by,
                bisect=not no_bisect, json_=json_, seed=seed, micro_options=micro)
        return
    app_only = [name for name, given in (
        ("a command", bool(command)), ("--env", env_file is not None),
        ("--metric", metric is not None), ("--check", check is not None),
        ("--metric-file", metric_file is not None), ("--attribute", attribute),
        ("--run-timeout", run_timeout is not None)) if given]
    if app_only:
        raise BadInputError(f"{', '.join(app_only)}: only with --app (verify --app -- CMD ...)")
    path = common.profile_path(profile, write=True)  # the verdicts are stored in it
    prof = common.load(profile)
    check_writable(path)  # the verdicts are stored in the profile: fail now, not after measuring
    launcher_argv = common.launcher_argv(launcher)
    reg = common.load_registry(None, None)
    common.check_profile_plugins(prof, plugin)
    options = common.parse_options(option)
    # the probes this verify runs: the profile's, those of --plugin (probe or plugin names)
    mine = {r.probe for r in prof.results
            if not plugin or r.probe in plugin or r.plugin in plugin}
    common.check_option_keys(options, {n: p for n, p in reg.probes.items() if n in mine})
    facts = detect(reg.fact_detectors, opencl=False)
    for line in warning_lines(machine_mismatch(prof, facts, reg.libraries)):
        warn(line)
    updated, outcomes = verify_profile(
        prof, reg.probes, facts=facts, knobs=reg.knobs, plugins=set(plugin) if plugin else None,
        time_budget_s=time_budget, quick=quick, joint=not alone,
        against=baseline, libraries=reg.libraries,
        launcher=launcher_argv, options=options, seed=seed,
        on_event=lambda key, msg, frac: err(f"{key}: {msg}") if msg != "done" else None)
    save_or_rescue(updated, path, what="the profile with the verdicts")
    con = console(stderr=True, soft_wrap=True)
    base = "the current environment" if baseline is Baseline.ENV else "library defaults"
    con.print(rich_table(Table(
        f"Verification, each recommendation alone vs {base} (ratio = advised / baseline, > 1 is "
        "better)", ("probe", "recommendation", "verdict", "ratio", "95 % CI", "A/A noise floor",
                    "note"), list(table_rows(outcomes)))))
    print_table(con, Table(
        f"Joint verification: the whole emitted environment vs {base} (ratio = advised / "
        "baseline, > 1 is better)", ("probe", "measured", "verdict", "ratio", "95 % CI",
                                     "A/A noise floor", "note"), list(joint_rows(outcomes))))
    err("A/A noise floor: the spread between repeats of the baseline itself; a verdict "
        "needs the whole 95 % CI of the ratio beyond it")
    for o in outcomes:
        if o.redo:
            err(f"{o.probe}: {o.recommendation}: re-probe under the other settings: {o.redo}")
    found = reversal_findings(updated, outcomes)
    for f in found:
        warn(f"{f.id}: {f.message}; {f.remedy}")
    err(f"verifications stored in {path}")
    out(to_json(outcomes, found) if json_ else f"{path}\n")
    if has_regression(outcomes):
        exit_with(ExitCode.FINDINGS)
    if has_failure(outcomes):
        exit_with(ExitCode.PARTIAL)
