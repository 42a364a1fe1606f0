"""``advisor verify --app -- CMD ...``: does the emitted environment make *this* command faster,
and does it break it?

The user's command runs under two environments (``advisor.appverify.arms``): A, the baseline
(library defaults or the current environment), and B, the environment ``advisor emit`` writes
for the profile (or an env file's settings).  ``advisor.appverify.session`` interleaves the runs
with an A/A floor measured in the same run and stops adaptively; a B that breaks the command is
bisected to the smallest set of settings that still breaks it; ``attribute`` measures
leave-one-out arms.  :func:`verify_app` returns the record (``models.AppVerification``) and
:func:`store` puts it in a profile; nothing here prints or writes files.
"""

from __future__ import annotations

import time
from datetime import datetime, timezone
from typing import Optional

from advisor.appverify.arms import Arms, from_env_file, from_profile, same_arms
from advisor.appverify.command import AppCommand, compile_pattern, read_metric, run_once
from advisor.appverify.session import CompareResult, Design, Event, Session
from advisor.models import Profile
from advisor.models_app import AppVerification

#: Default time budget of ``verify --app``, seconds: the whole verification (warm-up, rounds,
#: bisection, attribution) fits in five minutes, the bound a site engineer waits at a terminal
#: (issue 24 asks for a verdict in under 5 minutes on the 2-core VM).
DEFAULT_BUDGET_S = 270.0

#: Exit-relevant verdicts: B is worse than A beyond the floor, or breaks the command.
FAILING = ("regression", "breaks")


def _now() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat()


def verify_app(cmd: AppCommand, arms: Arms, *, against: str, design: Design = Design(),
               time_budget_s: float = DEFAULT_BUDGET_S, run_timeout_s: Optional[float] = None,
               attribute: Optional[str] = None, bisect: bool = True,
               on_event: Optional[Event] = None, hostname: Optional[str] = None,
               fingerprint: Optional[str] = None) -> AppVerification:
    """A/B-test ``cmd`` under ``arms``; return the record.

    :param against: ``defaults`` or ``env`` (recorded; the arms already hold the baseline).
    :param design: rounds, A/A rounds, CI level, seed.
    :param time_budget_s: seconds for everything; a round starts only when it fits.
    :param run_timeout_s: a run still going after this long is killed and failed (None: ten
        times the baseline warm-up, ``session.RUN_TIMEOUT_FACTOR``).
    :param attribute: ``plugin`` or ``setting``: leave-one-out arms when B differs from A beyond
        the floor (None: not measured).
    :param bisect: bisect the settings when B breaks the command.
    :raises BadInputError: the command cannot start, or fails (or lacks the metric) in A.
    """
    started = _now()
    session = Session(cmd=cmd, arms=arms, design=design,
                      end=time.monotonic() + time_budget_s, run_timeout_s=run_timeout_s,
                      on_event=on_event)
    broke = session.warm_up()
    if broke is not None:
        res = CompareResult("breaks", failure=broke.failure,
                            stop="B failed in its warm-up, twice, where A succeeded")
    else:
        res = session.compare()
    bisection = None
    if res.verdict == "breaks" and bisect:
        bisection = session.bisect(res.failure or "failed")
    shares = []
    if attribute and res.verdict in ("better", "regression") and res.noise_floor is not None:
        shares = session.attribute(attribute, res.noise_floor)
    record = AppVerification(
        time=started, hostname=hostname, fingerprint=fingerprint, command=list(cmd.argv),
        cwd=str(cmd.cwd) if cmd.cwd else None, metric=cmd.metric_name,
        metric_file=cmd.metric_file, check=cmd.check.pattern if cmd.check else None,
        unit=cmd.unit, higher_is_better=cmd.higher_is_better, against=against,
        environment=arms.environment,
        baseline={n: v for n, v in arms.baseline.items() if v is not None},
        unset=sorted(n for n, v in arms.baseline.items() if v is None),
        advised=dict(arms.advised), sources=arms.sources, verdict=res.verdict,
        ratio=res.ratio, ci_low=res.ci_low, ci_high=res.ci_high, ci_level=design.level,
        noise_floor=res.noise_floor, rounds=res.rounds, stop=res.stop, runs=session.runs,
        bisection=bisection, attribution=shares)
    return record.model_copy(update={"reason": summary(record, failure=res.failure)})


def summary(rec: AppVerification, *, failure: Optional[str] = None) -> str:
    """The verdict in one sentence (stored as ``reason``; the CLI prints it)."""
    if rec.verdict == "breaks":
        why = failure or (rec.bisection.failure if rec.bisection else "it failed")
        if rec.bisection and rec.bisection.settings:
            names = ", ".join(f"{n} ({'; '.join(rec.bisection.sources.get(n, [])) or '?'})"
                              for n in rec.bisection.settings)
            return f"B breaks the command ({why}); the smallest breaking set: {names}"
        return f"B breaks the command ({why})"
    if rec.ratio is None:
        return f"no comparison: {rec.stop}"
    ci = f"95 % CI [{rec.ci_low:.3f}, {rec.ci_high:.3f}]"
    floor = f"A/A floor ±{100 * (rec.noise_floor or 0):.1f} %"
    what = {"better": "B is better than A beyond the A/A floor",
            "regression": "B is worse than A beyond the A/A floor",
            "no-difference": (f"no difference beyond ±{100 * (rec.noise_floor or 0):.1f} % (the "
                              "A/A floor: how far two runs of A disagree here); the CI holds 1 "
                              "and lies inside that band"),
            "inconclusive": "the CI overlaps an edge of the A/A band"}[rec.verdict]
    if rec.verdict == "inconclusive" and not rec.ci_low <= 1.0 <= rec.ci_high:
        side = "better" if rec.ci_low > 1.0 else "worse"
        what = (f"B is {side} than A (the CI excludes 1) by less than the run-to-run noise "
                "(the A/A floor)")
    return f"{what}: ratio ×{rec.ratio:.3f}, {ci}, {floor}, {rec.rounds} rounds"


def store(profile: Profile, record: AppVerification) -> Profile:
    """``profile`` with ``record`` added; an earlier record of the same command, metric and
    environment source is replaced (the newest answer to one question is kept)."""
    key = (tuple(record.command), record.metric, record.environment, record.against)
    kept = [r for r in profile.app_verifications
            if (tuple(r.command), r.metric, r.environment, r.against) != key]
    return profile.model_copy(update={"app_verifications": kept + [record]})


def failing(record: AppVerification) -> bool:
    """True when ``advisor verify --app`` exits 1: a regression, or B breaks the command."""
    return record.verdict in FAILING


__all__ = ["AppCommand", "Arms", "DEFAULT_BUDGET_S", "Design", "FAILING", "compile_pattern",
           "failing", "from_env_file", "from_profile", "read_metric", "run_once", "same_arms",
           "store", "summary", "verify_app"]
