"""``advisor verify --app -- CMD ...``: the user's own command, A/B under the emitted environment.

Called by ``verify_cmd.verify`` when ``--app`` is given; parses nothing of its own beyond
turning options into the domain's inputs (``advisor.appverify``), and renders the record.
"""

from __future__ import annotations

import socket
from pathlib import Path
from typing import List, Optional

from advisor.cli import common
from advisor.cli.boundary import err, exit_with, out, warn
from advisor.errors import BadInputError, ExitCode


def run_app(*, command: List[str], profile: Optional[Path], plugin: Optional[List[str]],
            baseline: str, env_file: Optional[Path], metric: Optional[str],
            higher_is_better: Optional[bool], metric_file: Optional[str], check: Optional[str],
            runs: int, aa_rounds: int, time_budget: Optional[float],
            run_timeout: Optional[float], attribute: bool, attribute_by: str, bisect: bool,
            json_: bool, seed: int, micro_options: list[str]) -> None:
    """Validate the inputs (bad input: one line, exit 2, nothing measured or written), run
    ``advisor.appverify.verify_app``, store the record in the profile, print the verdict."""
    from advisor.appverify import (DEFAULT_BUDGET_S, AppCommand, Design, compile_pattern,
                                   failing, from_env_file, from_profile, store, verify_app)

    if micro_options:
        raise BadInputError(f"{', '.join(micro_options)}: not used with --app (they set up "
                            "advisor's own microbenchmarks)")
    if not command or not command[0].strip():
        raise BadInputError("--app: empty command; give it after '--', e.g. advisor verify "
                            "--app -- mpiexec -n 2 ./app")
    if metric is None and higher_is_better is not None:
        raise BadInputError("--higher-is-better/--lower-is-better: only with --metric (the "
                            "wall time is lower-is-better)")
    if metric is not None and higher_is_better is None:
        raise BadInputError(f"--metric {metric!r}: say whether more is better: "
                            "--higher-is-better (a rate, GFLOP/s) or --lower-is-better (a time)")
    if metric_file is not None and metric is None:
        raise BadInputError("--metric-file: only with --metric")
    design = Design(max_rounds=runs, aa_rounds=aa_rounds, seed=seed)
    cmd = AppCommand(argv=tuple(command), metric=compile_pattern("--metric", metric),
                     higher_is_better=bool(higher_is_better),
                     check=compile_pattern("--check", check), metric_file=metric_file,
                     cwd=Path.cwd())
    _check_command(command[0])

    # the profile: needed for its emitted environment, and to store the record in
    prof, path = None, None
    if env_file is None or profile is not None or common.profile_path(None).exists():
        prof = common.load(profile)
        common.check_profile_plugins(prof, plugin)
        if profile is None or not str(profile).startswith("@"):
            path = common.profile_path(profile)  # a shipped @NAME is read-only: not stored
    reg = common.load_registry(None, None)  # one plugin load: arms and the wrapper check
    if env_file is not None:
        if plugin:
            raise BadInputError("--plugin: selects a profile's settings; with --env FILE the "
                                "settings are the file's")
        arms = from_env_file(env_file, against=baseline, emitters=reg.emitters)
    else:
        arms = from_profile(prof, reg, against=baseline,
                            plugins=set(plugin) if plugin else None)
    if path is not None:
        from advisor.save import check_writable

        check_writable(path)  # fail now, not after minutes of runs

    from advisor.facts import detect_fingerprint_facts

    facts = detect_fingerprint_facts()
    if prof is not None and env_file is None and prof.fingerprint != facts.fingerprint():
        warn(f"the profile was measured on another machine ({prof.provenance.hostname or '?'}, "
             f"fingerprint {prof.fingerprint}); this verdict is recorded with this machine's "
             f"fingerprint {facts.fingerprint()}")
    err(f"A ({'library defaults' if baseline == 'defaults' else 'the current environment'}) "
        f"vs B ({'advisor emit' if env_file is None else env_file}): "
        + ", ".join(f"{n}={v}" for n, v in sorted(arms.advised.items())))
    from advisor.lint.wrappers import command_findings

    for f in command_findings(command, arms.advised, knobs=reg.knobs, libraries=reg.libraries):
        warn(f"the command's wrapper: {f.finding.message}")  # B may not be what runs
    record = verify_app(cmd, arms, against=baseline, design=design,
                        time_budget_s=time_budget or DEFAULT_BUDGET_S,
                        run_timeout_s=run_timeout,
                        attribute=attribute_by if attribute else None, bisect=bisect,
                        on_event=err, hostname=socket.gethostname(),
                        fingerprint=facts.fingerprint())
    render(record)
    if prof is not None and path is not None:
        from advisor.save import save_or_rescue

        save_or_rescue(store(prof, record), path, what="the profile with the app verdict")
        err(f"app-verify record stored in {path}")
    elif prof is not None:
        err(f"not stored: {profile} is a shipped profile (read-only); give --profile FILE")
    else:
        err("not stored: no profile (give --profile FILE to keep the record)")
    if json_:
        out(record.model_dump_json(indent=2, exclude_none=True) + "\n")
    elif path is not None:
        out(f"{path}\n")
    if failing(record):
        exit_with(ExitCode.FINDINGS)


def _check_command(word: str) -> None:
    """Refuse a command that cannot be started before anything runs."""
    import os
    import shutil

    if os.sep in word:
        p = Path(word)
        if not p.exists():
            raise BadInputError(f"command {word!r}: no such file")
        if p.is_dir() or not os.access(p, os.X_OK):
            raise BadInputError(f"command {word!r}: not an executable file")
    elif shutil.which(word) is None:
        raise BadInputError(f"command {word!r}: not found on PATH")


def render(rec) -> None:
    """The verdict, bisection and attribution on stderr (the record's own words)."""
    from advisor.report.appverify import lines

    for line in lines(rec):
        err(line)
