"""The record of ``advisor verify --app`` (``Profile.app_verifications``): the user's own
command A/B-tested under two environments, every run, the verdict, the bisection and the
attribution.

Kept apart from ``advisor.models`` (which stays under 400 lines); the base configuration is
the same (frozen, unknown keys rejected).  Measured by ``advisor.appverify``.
"""

from __future__ import annotations

from typing import Literal, Optional

from pydantic import BaseModel, ConfigDict, Field


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


#: Verdicts of ``advisor verify --app`` (``advisor.appverify``): B better / no different /
#: worse than A beyond the A/A floor, B breaks the command, or the budget ran out first.
AppVerdict = Literal["better", "no-difference", "regression", "breaks", "inconclusive"]


class AppRun(_Model):
    """One run of the user's command under one arm."""

    arm: str = Field(description="A (baseline), B (the environment verified), A2 (the baseline "
                     "again: an A/A pair), 'B-NAME' (B without NAME: attribution) or 'bisect'")
    phase: Literal["warmup", "compare", "attribute", "bisect"] = "compare"
    round: int = Field(-1, ge=-1, description="round of the phase; -1 for a warm-up run")
    value: Optional[float] = Field(None, description="the figure of merit in the record's unit; "
                                   "absent: the run failed")
    wall_s: float = Field(ge=0, description="wall time of the run, seconds")
    returncode: Optional[int] = Field(None, description="exit status; negative: killed by that "
                                      "signal; absent: timed out")
    failure: Optional[str] = Field(None, description="why the run counts as failed")
    settings: list[str] = Field(default_factory=list, description="bisect runs: the settings "
                                "of B applied over A")


class AppBisection(_Model):
    """The smallest set of B's settings that still breaks the command (delta debugging)."""

    settings: list[str] = Field(description="variable names, each needed for the failure")
    sources: dict[str, list[str]] = Field(default_factory=dict, description="name -> the "
                                          "plugin/recommendation (or file:line) that set it")
    failure: str = Field(description="how the command failed with exactly these settings")
    tests: int = Field(ge=0, description="runs the bisection took")
    reproduced: bool = Field(description="the minimal set failed again when run once more")


class AppShare(_Model):
    """Attribution: what leaving one group of settings out of B does (leave-one-out arm)."""

    group: str = Field(description="a plugin name or one variable name")
    settings: list[str]
    ratio: Optional[float] = Field(None, description="B / (B without the group), > 1: the group "
                                   "carries gain")
    ci_low: Optional[float] = None
    ci_high: Optional[float] = None
    share: Literal["gain", "loss", "none", "unknown"] = "unknown"
    rounds: int = Field(0, ge=0)


class AppVerification(_Model):
    """``advisor verify --app``: the user's own command A/B-tested under two environments.

    The ratio is oriented like every verdict of this project: > 1 means B is better (for a wall
    time ``A/B``, for a higher-is-better metric ``B/A``), the median of the per-round pair
    ratios with its bootstrap CI; ``noise_floor`` is the A/A floor measured from the A/A pairs
    of the first rounds.
    """

    kind: Literal["app-verify"] = "app-verify"
    time: str = Field(description="ISO 8601 UTC time the runs started")
    hostname: Optional[str] = None
    fingerprint: Optional[str] = Field(None, description="fingerprint of the machine it ran on")
    command: list[str] = Field(min_length=1)
    cwd: Optional[str] = None
    metric: str = Field(description="'wall time' or the --metric regular expression")
    metric_file: Optional[str] = Field(None, description="glob of files the metric is read from")
    check: Optional[str] = Field(None, description="--check: a regex the output must match")
    unit: str = Field(description="unit of AppRun.value: s for the wall time, else 'metric'")
    higher_is_better: bool
    against: Literal["defaults", "env"]
    environment: str = Field(description="where B came from: 'profile' or the env file's path")
    baseline: dict[str, str] = Field(default_factory=dict, description="A's values of the "
                                     "variables B sets (names A leaves unset are in unset)")
    unset: list[str] = Field(default_factory=list, description="variables A leaves unset")
    advised: dict[str, str] = Field(default_factory=dict, description="B's values")
    sources: dict[str, list[str]] = Field(default_factory=dict)
    verdict: AppVerdict
    ratio: Optional[float] = None
    ci_low: Optional[float] = None
    ci_high: Optional[float] = None
    ci_level: float = Field(0.95, gt=0, lt=1)
    noise_floor: Optional[float] = Field(None, description="A/A floor, relative (0.05 = 5 %)")
    rounds: int = Field(0, ge=0, description="compare rounds completed")
    stop: str = Field("", description="why measuring stopped")
    runs: list[AppRun] = Field(default_factory=list)
    bisection: Optional[AppBisection] = None
    attribution: list[AppShare] = Field(default_factory=list)
    reason: Optional[str] = Field(None, description="the verdict in one sentence")
