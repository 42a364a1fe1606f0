"""Advisories: known bad combinations of a library version, the machine and a setting, as data.

The records live in ``data/advisories.toml`` (read with :mod:`tomllib`); a library record may
carry more (``Library.advisories``, for a plugin's own library).  Each record says:

* ``id``: stable, ``[a-z0-9][a-z0-9-]*``; the finding id is ``advisory:<id>``;
* ``library``: the ``Library`` record it is about (``mpich``, ``openmpi``, ``ucx``, ``cupy``,
  ``glibc``); ``flavour`` optionally narrows it (``cray`` for HPE Cray MPICH);
* ``versions``: PEP 440 specifier sets of the library versions the source reports affected;
  any one may match (``[">=2.0,<2.1.3", "==3.0.0"]``);
* ``setting`` (optional): ``name`` (in the library's naming family, or an item of its list
  variable), ``value`` (a regular expression the value must match in full; absent: any value)
  and ``default`` (true: the library's default behaves like a matching value, so an unset name
  matches where advisor judges the machine, ``probe``; ``lint`` reports only settings written
  in the file);
* ``when`` (optional): facts that must hold; an unknown fact never matches.  Keys:
  ``ptrace_scope_min`` (int, Yama), ``in_container``, ``cap_sys_ptrace``,
  ``nested_user_namespace`` (the process is not in the initial user namespace),
  ``cuda_devices`` (bools), ``arch`` (``uname -m``), ``mpi`` (the MPI implementation) and
  ``kernel`` (a specifier on the kernel release's leading numbers);
* ``severity``, ``symptom``, ``fix``, ``source`` (public URLs: issue, release note, site
  documentation) and ``summary`` (the sources in our own words).

:func:`load` reads and checks the shipped file; :func:`matches` checks records against facts
and an environment; :func:`finding` words one match.  Errors: :class:`AdvisoryError`
(a ``ValueError``) names the file, the record and the key.
"""

from __future__ import annotations

import functools
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from advisor.models import Facts, Finding

#: A ``advisor.libraries.record.Library`` (not imported: the record imports this module).
Library = Any

DATA = Path(__file__).parent / "data" / "advisories.toml"

#: The inode of the initial user namespace, as ``readlink /proc/self/ns/user`` shows it:
#: ``PROC_USER_INIT_INO`` = 0xEFFFFFFD in Linux ``include/linux/proc_ns.h``.
INIT_USER_NS = "user:[4026531837]"

_ID = re.compile(r"^[a-z0-9][a-z0-9-]*$")
_URL = re.compile(r"^https://[A-Za-z0-9.-]+\.[A-Za-z]{2,}/\S*$")
_LEADING_VERSION = re.compile(r"^\s*v?(\d+(?:\.\d+)*)")
SEVERITIES = ("info", "warning", "error")
WHEN_KEYS = {"ptrace_scope_min": int, "in_container": bool, "cap_sys_ptrace": bool,
             "nested_user_namespace": bool, "cuda_devices": bool, "arch": str, "mpi": str,
             "kernel": str}
_REQUIRED = ("id", "library", "versions", "severity", "symptom", "fix", "source", "summary")
_OPTIONAL = ("flavour", "setting", "when")
#: Longest summary kept, in characters: a few sentences in our own words, not a copied text.
SUMMARY_MAX = 600


class AdvisoryError(ValueError):
    """A malformed advisory record; the message names the file, the record and the key."""


@dataclass(frozen=True)
class AdvisorySetting:
    """The setting of an advisory: ``name``, the ``value`` pattern (None: any value) and
    whether the library default behaves like a match."""

    name: str
    value: Optional[str] = None
    default: bool = False

    def value_matches(self, value: str) -> bool:
        return self.value is None or re.fullmatch(self.value, value) is not None


@dataclass(frozen=True)
class Advisory:
    """One known bad combination (the fields of the module docstring)."""

    id: str
    library: str
    versions: tuple[str, ...]
    severity: str
    symptom: str
    fix: str
    source: tuple[str, ...]
    summary: str
    flavour: Optional[str] = None
    setting: Optional[AdvisorySetting] = None
    when: Mapping[str, Any] = field(default_factory=dict)


def leading_version(text: Optional[str]) -> Optional[Version]:
    """The version a text starts with (``6.18.44-fc-v769`` -> 6.18.44, ``5.0.0rc1`` -> 5.0.0);
    None when it starts with no number."""
    m = _LEADING_VERSION.match(text or "")
    return Version(m.group(1)) if m else None


def _in(specs: tuple[str, ...], version: Optional[str]) -> bool:
    v = leading_version(version)
    return v is not None and any(SpecifierSet(s).contains(v, prereleases=True) for s in specs)


def _fact(facts: Facts, key: str) -> Any:
    """The fact ``when[key]`` is compared with; None when unknown."""
    sec = facts.security
    if key == "ptrace_scope_min":
        return sec.ptrace_scope
    if key == "in_container":
        return None if sec.container is None else sec.container not in ("", "none")
    if key == "cap_sys_ptrace":
        return sec.cap_sys_ptrace
    if key == "nested_user_namespace":
        return None if sec.user_namespace is None else sec.user_namespace != INIT_USER_NS
    if key == "cuda_devices":
        return bool(facts.cuda)
    if key == "arch":
        return facts.cpu.arch
    if key == "mpi":
        return facts.mpi.implementation
    return facts.kernel.release  # "kernel"


def facts_hold(adv: Advisory, facts: Facts) -> bool:
    """True when every ``when`` condition of ``adv`` holds in ``facts`` (unknown: False)."""
    for key, want in adv.when.items():
        have = _fact(facts, key)
        if have is None:
            return False
        if key == "ptrace_scope_min":
            ok = have >= want
        elif key == "kernel":
            ok = _in((want,), have)
        else:
            ok = have == want
        if not ok:
            return False
    return True


def setting_value(adv: Advisory, lib: Library, env: Mapping[str, str]) -> Optional[str]:
    """The value ``env`` gives the advisory's setting: the variable itself, or an item of the
    library's list variable (the last one wins, as the library reads them); None: unset."""
    name = adv.setting.name  # type: ignore[union-attr]
    if name in env:
        return env[name]
    if lib.list_variable and lib.list_variable in env:
        found = None
        for item in env[lib.list_variable].split(lib.item_separator):
            key, eq, val = item.partition("=")
            if eq and key.strip() == name:
                found = val
        return found
    return None


def advisories_of(lib: Library) -> tuple[Advisory, ...]:
    """The shipped records about ``lib`` followed by those its record carries itself."""
    return tuple(a for a in load() if a.library == lib.name) + tuple(lib.advisories)


def matches(facts: Optional[Facts], libraries: Mapping[str, Library], env: Mapping[str, str],
            *, written_only: bool) -> list[tuple[Advisory, str, Optional[str]]]:
    """Records whose library version, flavour, facts and setting all match.

    :param env: the settings (name -> value; list variables as the library reads them).
    :param written_only: only records whose setting ``env`` holds (lint: a file's settings);
        False: a record without a setting matches on facts alone, and one whose ``default`` is
        true matches when its name is unset (probe: what this machine runs with).
    :return: ``(advisory, version, setting name or None)`` in library, then file order.
    """
    if facts is None:
        return []
    out = []
    for lib in libraries.values():
        try:
            version = lib.version(facts)
            flavour = lib.flavour(facts)
        except Exception:  # a third-party record's bug: its version is unknown
            continue
        for adv in advisories_of(lib):
            if adv.flavour is not None and adv.flavour != flavour:
                continue
            if not _in(adv.versions, version) or not facts_hold(adv, facts):
                continue
            if adv.setting is None:
                if not written_only:
                    out.append((adv, str(version), None))
                continue
            value = setting_value(adv, lib, env)
            if value is None:
                hit = adv.setting.default and not written_only
            else:
                hit = adv.setting.value_matches(value)
            if hit:
                out.append((adv, str(version), adv.setting.name))
    return out


def finding(adv: Advisory, version: str, name: Optional[str],
            value: Optional[str] = None) -> Finding:
    """The finding of one match: ``advisory:<id>``, the record's severity, the library and
    version, the setting, what goes wrong and the first source; the fix as remedy."""
    what = f"{adv.library}{' (' + adv.flavour + ')' if adv.flavour else ''} {version}"
    if name is not None:
        what += f" with {name}={value}" if value is not None else f" with {name} at its default"
    return Finding(id=f"advisory:{adv.id}", severity=adv.severity,
                   message=f"known issue: {what}: {adv.symptom} (see {adv.source[0]})",
                   remedy=adv.fix)


def parse(raw: Mapping[str, Any], where: str) -> Advisory:
    """One record from its TOML table; :class:`AdvisoryError` names ``where`` and the key."""
    def bad(key: str, why: str) -> AdvisoryError:
        return AdvisoryError(f"{where}: {key}: {why}")

    for key in raw:
        if key not in _REQUIRED + _OPTIONAL:
            raise bad(key, f"unknown key (known: {', '.join(_REQUIRED + _OPTIONAL)})")
    for key in _REQUIRED:
        if key not in raw:
            raise bad(key, "missing")
    for key in ("id", "library", "severity", "symptom", "fix", "summary"):
        if not isinstance(raw[key], str) or not raw[key].strip():
            raise bad(key, "must be a non-empty string")
    if not _ID.match(raw["id"]):
        raise bad("id", f"must match {_ID.pattern}")
    if raw["severity"] not in SEVERITIES:
        raise bad("severity", f"must be one of {', '.join(SEVERITIES)}")
    if len(raw["summary"]) > SUMMARY_MAX:
        raise bad("summary", f"longer than {SUMMARY_MAX} characters: summarise, do not copy")
    versions = raw["versions"]
    if not isinstance(versions, list) or not versions:
        raise bad("versions", "must be a non-empty list of PEP 440 specifier sets")
    for spec in versions:
        try:
            if not isinstance(spec, str) or not str(SpecifierSet(spec)):
                raise InvalidSpecifier(spec)
        except InvalidSpecifier:
            raise bad("versions", f"{spec!r} is not a PEP 440 specifier set") from None
    sources = raw["source"]
    if not isinstance(sources, list) or not sources:
        raise bad("source", "must be a non-empty list of URLs")
    for url in sources:
        if not isinstance(url, str) or not _URL.match(url):
            raise bad("source", f"{url!r} is not an https URL")
    when = raw.get("when", {})
    if not isinstance(when, dict):
        raise bad("when", "must be a table")
    for key, val in when.items():
        typ = WHEN_KEYS.get(key)
        if typ is None:
            raise bad(f"when.{key}", f"unknown fact (known: {', '.join(WHEN_KEYS)})")
        if type(val) is not typ:
            raise bad(f"when.{key}", f"must be {typ.__name__}")
    if "kernel" in when:
        try:
            SpecifierSet(when["kernel"])
        except InvalidSpecifier:
            raise bad("when.kernel", f"{when['kernel']!r} is not a specifier set") from None
    setting = None
    if "setting" in raw:
        s = raw["setting"]
        if not isinstance(s, dict) or not isinstance(s.get("name"), str) or not s["name"]:
            raise bad("setting", "must be a table with a non-empty name")
        if set(s) - {"name", "value", "default"}:
            raise bad("setting", "known keys: name, value, default")
        if "value" in s:
            try:
                re.compile(s["value"])
            except (re.error, TypeError) as exc:
                raise bad("setting.value", f"not a regular expression: {exc}") from None
        if not isinstance(s.get("default", False), bool):
            raise bad("setting.default", "must be a boolean")
        setting = AdvisorySetting(s["name"], s.get("value"), s.get("default", False))
    flavour = raw.get("flavour")
    if flavour is not None and not isinstance(flavour, str):
        raise bad("flavour", "must be a string")
    return Advisory(id=raw["id"], library=raw["library"], versions=tuple(versions),
                    severity=raw["severity"], symptom=raw["symptom"], fix=raw["fix"],
                    source=tuple(sources), summary=raw["summary"], flavour=flavour,
                    setting=setting, when=dict(when))


def read(path: Path) -> tuple[Advisory, ...]:
    """All records of an advisories file (``[[advisory]]`` tables), ids unique.

    :raises AdvisoryError: unreadable TOML, a malformed record or a repeated id.
    """
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise AdvisoryError(f"{path}: cannot read: {exc}") from None
    tables = data.get("advisory", [])
    if set(data) - {"advisory"} or not isinstance(tables, list):
        raise AdvisoryError(f"{path}: only [[advisory]] tables are allowed")
    out: list[Advisory] = []
    for i, raw in enumerate(tables):
        rid = raw.get("id", f"#{i + 1}") if isinstance(raw, dict) else f"#{i + 1}"
        adv = parse(raw, f"{path}: advisory {rid}")
        if any(a.id == adv.id for a in out):
            raise AdvisoryError(f"{path}: advisory {adv.id}: id: given twice")
        out.append(adv)
    return tuple(out)


@functools.lru_cache(maxsize=1)
def load() -> tuple[Advisory, ...]:
    """The shipped records (``DATA``), read once."""
    return read(DATA)


def check_against(advisories: tuple[Advisory, ...],
                  libraries: Mapping[str, Library]) -> list[str]:
    """What the library records say is wrong with ``advisories``: an unknown library, a
    setting outside its library's family (or list variable items), a flavour of a library
    without flavours.  One line per problem; empty when all is well."""
    problems = []
    for a in advisories:
        lib = libraries.get(a.library)
        if lib is None:
            problems.append(f"advisory {a.id}: library: {a.library!r} is not a known library "
                            f"({', '.join(sorted(libraries))})")
            continue
        if a.setting is not None:
            n = a.setting.name
            item = bool(lib.list_variable) and n.startswith(lib.item_prefix or "\0")
            if not (lib.owns(n) or item or n in lib.weak_prefixes or
                    n.startswith(lib.weak_prefixes or ("\0",))):
                problems.append(f"advisory {a.id}: setting.name: {n} is not in the "
                                f"{a.library} family ({', '.join(lib.prefixes)})")
    return problems


__all__ = ["Advisory", "AdvisorySetting", "AdvisoryError", "DATA", "INIT_USER_NS", "load",
           "read", "parse", "matches", "finding", "facts_hold", "advisories_of",
           "check_against", "leading_version", "setting_value"]
