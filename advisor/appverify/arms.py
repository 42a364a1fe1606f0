"""The two environments ``advisor verify --app`` compares, as overlays on this process's
environment (a value of None removes the variable).

* **B** is the environment ``advisor emit`` writes for the profile (``advisor.joint``: the same
  selection, version filter and list merging), or the settings of an env file in any format the
  lint reader reads (``--env FILE``).
* **A** is the baseline: every variable B sets removed (``--against defaults``: the libraries'
  defaults), or left as the current environment has it (``--against env``); in the second case a
  list variable of B is appended to the current value, as sourcing the emitted file would.

Only the variables B sets are in either overlay; everything else is this process's environment
in both arms.  ``Arms.with_only(names)`` builds the arms between A and B that bisection and
attribution run: A with some of B's settings applied.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping, Optional, Sequence

from advisor.errors import BadInputError

Overlay = dict[str, Optional[str]]


@dataclass(frozen=True)
class Arms:
    """Baseline and advised overlays over the same names, and where each setting came from.

    :ivar baseline: name -> A's value (None: unset in A).
    :ivar advised: name -> B's value.
    :ivar sources: name -> labels of what set it (``plugin/recommendation`` or ``file:line``).
    :ivar plugins: name -> the plugin that advised it (absent for an env file's settings).
    :ivar environment: ``profile`` or the env file's path.
    """

    baseline: Overlay
    advised: dict[str, str]
    sources: dict[str, list[str]] = field(default_factory=dict)
    plugins: dict[str, str] = field(default_factory=dict)
    environment: str = "profile"

    @property
    def names(self) -> list[str]:
        """The variables B sets to a value A does not have, sorted."""
        return sorted(n for n, v in self.advised.items() if self.baseline.get(n) != v)

    def with_only(self, names: Iterable[str]) -> Overlay:
        """A, with B's values for ``names``."""
        keep = set(names)
        return {n: (self.advised[n] if n in keep else self.baseline.get(n))
                for n in self.advised}

    def without(self, names: Iterable[str]) -> Overlay:
        """B, with A's values for ``names`` (a leave-one-out arm)."""
        drop = set(names)
        return self.with_only(n for n in self.advised if n not in drop)

    def groups(self, by: str) -> dict[str, list[str]]:
        """Attribution groups: ``by="plugin"`` the settings of each plugin (an env file's
        settings, which have none, each on their own); ``by="setting"`` one per variable."""
        out: dict[str, list[str]] = {}
        for n in self.names:
            key = self.plugins.get(n, n) if by == "plugin" else n
            out.setdefault(key, []).append(n)
        return out


def _baseline(names: Iterable[str], against: str, environ: Mapping[str, str]) -> Overlay:
    return {n: (environ.get(n) if against == "env" else None) for n in names}


def from_profile(profile, registry, *, against: str,
                 environ: Optional[Mapping[str, str]] = None,
                 plugins: Optional[set[str]] = None) -> Arms:
    """The arms for a profile's emitted environment.

    :param registry: the plugin registry (``advisor.plugins.Registry``): its knobs and library
        records decide which settings emit writes (``advisor.joint.joint_environment``).
    :param against: ``defaults`` or ``env``.
    :param plugins: only these probes' or plugins' settings (None: every plugin's).
    :raises BadInputError: the settings cannot be emitted together (the message names them), or
        the profile emits no environment variable.
    """
    from advisor.baseline import Baseline
    from advisor.errors import AdvisorError
    from advisor.joint import joint_environment

    env = os.environ if environ is None else environ
    if plugins:
        profile = profile.model_copy(update={"results": [
            r for r in profile.results if r.probe in plugins or r.plugin in plugins]})
    try:
        joint = joint_environment(profile, registry, against=Baseline(against), environ=env)
    except AdvisorError as exc:
        raise BadInputError(f"the profile's settings cannot be emitted together: {exc}") from None
    advised = {n: v for n, v in joint.advised.items() if v is not None}
    if not advised:
        raise BadInputError("advisor emit writes no environment variable for this profile "
                            "(every setting is a library default or a config setting): there "
                            "is nothing to A/B; give --env FILE to test other settings")
    owner = {}
    for res in profile.results:
        for rec in res.recommendations:
            owner[f"{res.probe}/{rec.id}"] = res.plugin
    by_plugin = {}
    for name, labels in joint.sources.items():
        found = sorted({owner.get(lab, lab.split("/", 1)[0]) for lab in labels})
        by_plugin[name] = "+".join(found)
    return _differ(Arms(baseline={n: joint.baseline.get(n) for n in advised}, advised=advised,
                        sources={n: list(joint.sources.get(n, ())) for n in advised},
                        plugins=by_plugin, environment="profile"))


def from_env_file(path: Path | str, *, against: str, environ: Optional[Mapping[str, str]] = None,
                  emitters=None) -> Arms:
    """The arms for the settings of an env file (any format ``advisor lint`` reads).

    B is what the file produces over the current environment (later lines win, list appends
    join); A is the baseline of ``against``.

    :raises BadInputError: the file cannot be read, a setting's value cannot be known without
        running the file, or the file sets nothing.
    """
    from advisor.lint.read import read_env_file, resolve_env

    env = dict(os.environ if environ is None else environ)
    entries = [e for e in read_env_file(path, emitters=emitters) if e.exported]
    problems = [e for e in entries if e.problem]
    if problems:
        e = problems[0]
        raise BadInputError(f"{e.path}:{e.line}: {e.problem}" if e.line else
                            f"{e.path}: {e.problem}")  # an empty file has no line
    bad = [e for e in entries if e.value is None]
    if bad:
        e = bad[0]
        where = f"{e.path}:{e.line}" if e.line else e.path
        raise BadInputError(f"{where}: {e.name}: its value cannot be known without running the "
                            "file (a command substitution or an unknown variable); --env needs "
                            "plain values")
    names = list(dict.fromkeys(e.name for e in entries))
    if not names:
        raise BadInputError(f"{path}: sets no environment variable: nothing to A/B")
    resolved = resolve_env(entries, base=env if against == "env" else {
        k: v for k, v in env.items() if k not in names})
    sources: dict[str, list[str]] = {}
    for e in entries:
        sources.setdefault(e.name, []).append(f"{e.path}:{e.line}" if e.line else e.path)
    advised = {n: resolved[n] for n in names if n in resolved}
    return _differ(Arms(baseline=_baseline(advised, against, env), advised=advised,
                        sources=sources, plugins={}, environment=str(path)))


def _differ(arms: Arms) -> Arms:
    """``arms``, when B sets something A does not have.

    :raises BadInputError: B equals A (the current environment already holds every value)."""
    if not arms.names:
        raise BadInputError(f"B equals A: the current environment already holds every value "
                            f"of {arms.environment} ({', '.join(sorted(arms.advised))}); there "
                            "is nothing to A/B (--against defaults compares with the libraries' "
                            "defaults)")
    return arms


def same_arms(names: Sequence[str], value: str = "1") -> Arms:
    """A/A arms for benchmarks: B sets ``names`` to ``value``, variables nothing reads, so B
    behaves as A (``bench/bench_app_verify.py``)."""
    return Arms(baseline={n: None for n in names}, advised={n: value for n in names},
                environment="a/a")
