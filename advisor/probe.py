"""The probe contract: what a plugin registers through ``advisor_register_probes``.

A probe answers one question about the machine in three steps that ``advisor probe`` calls in
order:

1. ``check(facts) -> Applicability``: cheap; can the feature work here at all, and if not why.
   It may run short live tests (e.g. a process_vm_readv between two siblings).
2. ``measure(ctx) -> list[Evidence]``: timed work, only through ``advisor.measure``; it must
   watch ``ctx.remaining_s()`` and return what it has when the budget runs out.
3. ``recommend(evidence, facts) -> Advice``: a *pure* function (no I/O, no clock, no environment)
   so it can be re-run on recorded evidence and tested without the machine.  It is called in every
   case, also when ``check`` said the feature is unusable (then ``evidence`` is only what ``check``
   recorded in ``Applicability.evidence``): advice such as "disable CMA explicitly, it fails here"
   comes from that path.  ``evidence`` is ``Applicability.evidence + measure(ctx)``.

The profile records ``Applicability.findings + Advice.findings`` and the probe's status: ``ok``
(usable and measured), ``not-applicable`` (``check`` said no; ``reason`` is its reason) or
``failed`` (an exception, the budget ran out, or ``check`` set ``Applicability.failed``: it could
not decide; ``reason`` says which).

Errors: any exception from ``check`` or ``measure`` makes the probe's result ``failed`` with the
exception as reason; the other probes still run.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional, Protocol, Sequence, runtime_checkable

from advisor.baseline import Baseline
from advisor.models import Advice, Evidence, Facts, Finding, Model

#: ``progress(message, fraction)``: fraction in [0, 1] of this probe's work, or None if unknown.
ProgressCallback = Callable[[str, Optional[float]], None]


def _no_progress(message: str, fraction: Optional[float]) -> None:  # library use: silent
    return None


class Applicability(Model):
    """Result of ``Probe.check``: ``usable`` False is a normal outcome, recorded with its reason."""

    usable: bool
    #: with ``usable`` False: ``check`` could not decide (e.g. the MPI launcher could not start
    #: the ranks), so the result is ``failed``, never read as "the feature is not applicable"
    failed: bool = False
    reason: Optional[str] = None
    findings: list[Finding] = []
    evidence: list[Evidence] = []


#: The values of :class:`Baseline` (what ``MeasureContext.against`` accepts as a string).
AGAINST_VALUES: tuple[str, ...] = tuple(b.value for b in Baseline)


@dataclass(frozen=True)
class JointEnv:
    """The whole emitted environment, as ``advisor verify`` hands it to a probe's ``verify``.

    Both mappings are overlays on the current environment (name -> value string; ``None``
    removes the variable), applied as ``advisor.measure.child_env`` does:

    Attributes:
        advised: every ``kind="env"`` setting of every plugin, merged as ``advisor emit`` writes
            them (``advisor.specs.writing.env_items``: list variables such as ``GLIBC_TUNABLES``
            hold the items of all plugins joined by their separator).  Against the current
            environment a list value is appended to the current one (``MERGE_POLICY``).
        baseline: the same names removed (library defaults), or their current values.
        sources: ``NAME -> ("probe/recommendation", ...)``: whose settings each variable holds.
    """

    advised: Mapping[str, Optional[str]]
    baseline: Mapping[str, Optional[str]]
    sources: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


#: Seconds a whole ``advisor probe`` aims to take on the 2-core reference machine, full and with
#: ``--quick`` (issue 13 item 8; issue 25: full <= 30 s median, ``bench/bench_probe_time.py``).
#: ``MeasureContext.aim`` carries it to the probes; ``--time-budget`` replaces it.
FULL_AIM_S, QUICK_AIM_S = 30.0, 10.0
#: Seconds of ``advisor probe`` outside the probes' steps, taken off the aim: Python start,
#: imports and fact detection before (0.8 s on the 2-core AMD VM), recommend of the last probe
#: and writing the profile after (0.3-0.5 s there).
AIM_OUTSIDE_S = 1.5


@dataclass
class MeasureContext:
    """Everything ``Probe.measure`` may use.

    Attributes:
        facts: the machine facts detected for this run.
        deadline: ``time.monotonic()`` value (seconds) by which this probe must return.
        quick: smaller sweeps (fewer sizes, fewer repeats) were asked for.
        launcher: argv prefix that starts a 2-rank MPI job, e.g. ``["mpiexec", "-n", "2"]``.
        options: probe-specific options from the CLI (``--option key=value``), strings.
        progress: callback for progress events; silent unless the CLI installs one.
        seed: seed for every pseudo-random choice (bootstrap, fill patterns).
        applicability: what ``check`` returned (its evidence may be reused).
        against: ``advisor verify`` only: the :class:`Baseline`.  A string ``"defaults"`` or
            ``"env"`` is converted (``ValueError`` for any other); the legacy string option
            ``options["against"] == "env"`` is honoured and kept in step (third-party verifiers
            may still read it).
        joint: ``advisor verify`` only: the whole emitted environment (``JointEnv``) when the
            verification is joint; ``None``: verify the recommendation's own settings alone.
        aim: ``time.monotonic()`` value by which the whole run aims to have measured
            (``advisor.runner.run_probes``: ``FULL_AIM_S`` or ``QUICK_AIM_S`` from its start,
            or the ``--time-budget``, less ``AIM_OUTSIDE_S``).  A probe that measures
            sequentially (rounds or launches added while its decision is unstable) may stop
            adding those that would end past it, beyond its minimum, and should then record
            that the aim stopped it (evidence value ``stopped = "budget"``); ``deadline`` is
            the hard bound.  None: no aim (verify, a probe run on its own by a caller).
    """

    facts: Facts
    deadline: float
    quick: bool = False
    launcher: Optional[list[str]] = None
    options: dict[str, str] = field(default_factory=dict)
    progress: ProgressCallback = _no_progress
    seed: int = 12345
    applicability: Optional[Applicability] = None
    against: Baseline = Baseline.DEFAULTS
    joint: Optional[JointEnv] = None
    aim: Optional[float] = None

    def __post_init__(self) -> None:
        if self.against not in AGAINST_VALUES:
            raise ValueError(f"against must be one of {AGAINST_VALUES}, not {self.against!r}")
        self.against = Baseline(self.against)
        if self.options.get("against") == Baseline.ENV:
            self.against = Baseline.ENV
        if self.against is Baseline.ENV:
            self.options["against"] = Baseline.ENV.value

    def remaining_s(self) -> float:
        """Seconds left before ``deadline`` (never negative)."""
        return max(0.0, self.deadline - time.monotonic())


@runtime_checkable
class Probe(Protocol):
    """A registered probe.  ``name`` is unique across plugins (``[a-z0-9-]+``).

    Optional attribute ``option_keys``: a mapping of the ``--option`` keys ``measure`` (and
    ``verify``) read to one line of help each.  ``advisor probe``, ``fleet probe`` and
    ``verify`` refuse a key that no probe of the run declares when every probe declares its
    keys (:func:`option_readers`), and warn when some do not.  Optional method
    ``check_options(options)``: raise ``advisor.errors.BadInputError`` for a bad value of one of
    its keys (:func:`option_number`, :func:`option_numbers`, :func:`option_choice`); called
    before anything is measured, so bad input stops the run at once (exit 2) rather than
    failing the probe later.
    """

    name: str
    description: str

    def check(self, facts: Facts) -> Applicability: ...

    def measure(self, ctx: MeasureContext) -> list[Evidence]: ...

    def recommend(self, evidence: Sequence[Evidence], facts: Facts) -> Advice: ...


#: ``--option`` keys the core itself reads (``MeasureContext.against``'s legacy string form).
CORE_OPTION_KEYS = {"against": "verify only: 'env' compares against the current environment"}


def option_readers(options: Mapping[str, str], probes: Mapping[str, Any]
                   ) -> tuple[list[str], list[str]]:
    """The ``--option`` keys no probe of a run reads, as far as the probes declare their keys.

    A probe declares the keys it reads in the optional attribute ``option_keys`` (key -> one
    line of help); ``probes`` are the probes of the run (name -> probe).

    :return: ``(unread, undeclared)``: the keys of ``options`` that no probe of ``probes``
        declares and the core does not read (``CORE_OPTION_KEYS``), in the given order, and
        the names of the probes without ``option_keys``, sorted (a key may be theirs: it
        cannot be known).  Pure.
    """
    undeclared = sorted(n for n, p in probes.items() if getattr(p, "option_keys", None) is None)
    known = set(CORE_OPTION_KEYS)
    known.update(k for p in probes.values() for k in (getattr(p, "option_keys", None) or {}))
    return [k for k in options if k not in known], undeclared


def _number(key: str, whole: str, item: str, kind: Callable[[str], Any],
            minimum: Optional[float], above: Optional[float]) -> Any:
    """One number of ``--option key=whole`` (``item``: the value, or one item of a list)."""
    import math

    from advisor.errors import BadInputError

    where = f"--option {key}={whole!r}" + (f": {item.strip()!r}" if item != whole else "")
    try:
        value = kind(item.strip())
    except ValueError:
        raise BadInputError(f"{where}: not {'an integer' if kind is int else 'a number'}"
                            ) from None
    if not math.isfinite(value):  # nan compares false to every bound; inf is no setting
        raise BadInputError(f"{where}: not a finite number")
    if minimum is not None and value < minimum:
        raise BadInputError(f"{where}: must be >= {minimum:g}")
    if above is not None and value <= above:
        raise BadInputError(f"{where}: must be > {above:g}")
    return value


def option_number(options: Mapping[str, str], key: str, kind: Callable[[str], Any] = int, *,
                  minimum: Optional[float] = None, above: Optional[float] = None) -> Any:
    """``options[key]`` converted by ``kind`` (``int`` or ``float``), None when absent; for a
    probe's ``check_options``.

    :param minimum: the least value allowed; ``above``: a bound the value must exceed.
    :raises BadInputError: the value is not a finite number of that kind, or out of bounds;
        the message names ``--option KEY=VALUE``.
    """
    if key not in options:
        return None
    return _number(key, options[key], options[key], kind, minimum, above)


def option_numbers(options: Mapping[str, str], key: str, kind: Callable[[str], Any] = int, *,
                   minimum: Optional[float] = None, above: Optional[float] = None
                   ) -> Optional[list]:
    """``options[key]`` as a comma-separated list of numbers (``option_number`` for each
    item), None when absent.

    :raises BadInputError: an item that is not a finite number in bounds, or no item at all;
        the message names the whole value and the item.
    """
    from advisor.errors import BadInputError

    if key not in options:
        return None
    whole = options[key]
    items = [x for x in whole.split(",") if x.strip()]
    if not items:
        raise BadInputError(f"--option {key}={whole!r}: no value given")
    return [_number(key, whole, x, kind, minimum, above) for x in items]


def option_choice(options: Mapping[str, str], key: str, choices: Sequence[str]) -> Optional[str]:
    """``options[key]`` when it is one of ``choices``, None when absent; for ``check_options``.

    :raises BadInputError: another value; the message names the key and the choices.
    """
    from advisor.errors import BadInputError

    if key in options and options[key] not in choices:
        raise BadInputError(f"--option {key}={options[key]!r}: expected one of "
                            f"{', '.join(choices)}")
    return options.get(key)


class Verifier(Protocol):
    """Optional probe method, used by ``advisor verify``.

    ``verify(recommendation, ctx) -> Verification`` re-runs the measurement behind
    ``recommendation`` (only those with ``verifiable=True``) in fresh processes, with the
    recommended settings vs the library defaults (``ctx.against == "env"``: vs the current
    environment), interleaved through ``advisor.measure.interleave``, and returns the
    verdict with the ratio's confidence interval and the evidence.

    Joint verification: a probe that sets the class attribute ``joint_verify = True`` promises
    that when ``ctx.joint`` is a ``JointEnv`` it measures ``ctx.joint.advised`` (every plugin's
    env settings, its own included) against ``ctx.joint.baseline`` instead of its own settings
    alone, with the same measurement.  ``advisor verify`` never hands a joint environment to a
    probe without that attribute (its joint verdict is then ``not-measurable``).
    """

    def verify(self, recommendation: Any, ctx: MeasureContext) -> Any: ...


class Linter(Protocol):
    """Optional probe method, used by ``advisor lint``.

    ``lint(env, facts) -> list[Finding]`` checks an environment mapping (name -> value, from an
    env file or the live environment) for combinations only the plugin understands: settings that
    are inert (XPMEM with GPU support), blocked here (CMA where Yama or seccomp forbid it) or
    overridden by the library's own init.  Names, types and renames are checked by the core from
    the knob records; this method adds the rest.  It is pure apart from reading ``facts``.
    """

    def lint(self, env: dict[str, str], facts: Facts) -> list[Finding]: ...


class FigureMaker(Protocol):
    """Optional probe method, used by ``advisor report`` and ``advisor show --plot``.

    ``figures(evidence, facts) -> list[advisor.specs.figures.FigureSpec]``: the figures of the
    probe's recorded evidence, as data (series with CI bands, markers, bands, units); pure like
    ``recommend`` (no I/O, no clock, no environment) and without importing matplotlib: the core
    draws.  Series come from the evidence (``series_from_points``), so plotted medians equal the
    stored ones; each caption says what was measured and how.  An exception, a return that is
    not a list of ``FigureSpec``, a duplicate id or a figure without points leaves that figure
    out with a warning (``advisor.report.collect``), never stops the report.
    """

    def figures(self, evidence: Sequence[Evidence], facts: Facts) -> list: ...


def is_probe(obj: Any) -> bool:
    """True when ``obj`` has the attributes and methods of the probe contract."""
    return (
        isinstance(getattr(obj, "name", None), str)
        and all(callable(getattr(obj, m, None)) for m in ("check", "measure", "recommend"))
    )
