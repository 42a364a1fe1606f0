"""EasyBuild hooks file (format ``easybuild-hooks``): the settings per measured library
(software name and version range) as module data, an ``apply(ec)`` that adds them to
``modextravars`` of a matching easyconfig, and a ``parse_hook`` calling it.

Two ways to use the file (docs/deploy.md):

- standalone: ``eb --hooks=advisor_hooks.py``.  EasyBuild runs ``parse_hook(ec)`` on every
  easyconfig it parses (EasyBuild documentation, "Hooks"; ``easybuild.tools.hooks.load_hooks``
  loads the file by path with ``importlib`` and keeps its attributes whose names end in
  ``_hook``, refusing unknown hook names, so ``parse_hook`` is the only such name here);
- from a site's own hooks file (EasyBuild takes one ``--hooks`` file): the site's
  ``parse_hook`` calls ``advisor_hooks.apply(ec)``, the module imported by name (its folder on
  ``sys.path``) or loaded by path with ``importlib.util.spec_from_file_location``.  Our
  ``parse_hook`` stays in our module's namespace, so it does not replace the site's;
  ``__all__`` leaves it out of ``from advisor_hooks import *``.

Matching: by software name (``ec.name``: the library record's easyconfig name,
``Library.package("easybuild")``, e.g. ``MPICH``) and by version: the version the profile
recorded (``advisor.libraries.version_of``), widened by ``EmitOptions.spec_range`` (the CLI's
``--spec-range``; read with ``getattr``, default ``exact``): ``exact`` (only that version),
``minor`` (its major.minor series, ``5.0`` <= v < ``5.1``) or ``major`` (``5`` <= v < ``6``).
The bounds come from :class:`packaging.version.Version` at emit time; the hook compares them
with EasyBuild's own ``easybuild.tools.LooseVersion`` at run time.  A library whose version the
profile did not record matches every version, and the file says so.  An easyconfig of another
version is left untouched, with a line in EasyBuild's log (``ec.log``) saying why.  The
settings merge with ``ec.update('modextravars', {...})`` (a dict parameter is updated key by
key: the easyconfig's own other variables stay).

Settings of a library no easyconfig builds (``glibc``: the system C library) cannot be
attached to a module this way; they are left out with a comment saying so (``-f lmod`` or
``-f env`` writes them).  List variables are written as their full value (``modextravars``
cannot append to an existing value; as in the ``easybuild`` format).

The profile's data enters the file only as Python literals (``repr`` of ``str``) inside one
dict, :data:`SETTINGS`; the hook's code is fixed text.  Values EasyBuild would not carry into
its modules unchanged are refused as in the ``easybuild`` format
(:func:`advisor.formats.easybuild.easybuild_unsafe`).

``parse`` reads the ``SETTINGS`` dict back with ``ast.literal_eval``: nothing in the file runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Optional

from advisor.specs.writing import (EnvItem, env_items, header_lines, left_out_comment, one_line,
                                    refuse_unsafe)
from advisor.formats.easybuild import easybuild_unsafe
from advisor.specs.entry import EnvEntry, literal_dict_entries, python_assignments, unreadable
from advisor.formats import has_line
from advisor.formats.quoting import python_quote
from advisor.libraries import builtin_libraries, version_of

if TYPE_CHECKING:  # pragma: no cover
    from advisor.specs.selection import Selection

NAME = "easybuild-hooks"
DESCRIPTION = ("EasyBuild hooks file: apply(ec) (or its parse_hook) adds modextravars to "
               "easyconfigs of the measured name and version")
EXTENSION = "py"
#: Its shape decides (a ``.py`` file is no format by its suffix).
SUFFIXES: tuple[str, ...] = ()
#: Its shape decides over the suffix it shares with other Python files.
SNIFF_OVER_SUFFIX = True


def sniff(text: str) -> bool:
    """Whether ``text`` is the hooks file this format writes (``parse_hook`` and
    ``SETTINGS``)."""
    return has_line(text, "def parse_hook(") and has_line(text, "SETTINGS = {")



def easybuild_names(libraries: Mapping[str, Any]) -> dict[str, str]:
    """``Setting.library`` -> easyconfig software name, from the library records
    (``Library.package("easybuild")``; ``libraries``: ``Registry.libraries``, as
    ``Selection.libraries``).  A library without one is not written by this format."""
    return {n: lib.package("easybuild") for n, lib in libraries.items()
            if lib.package("easybuild")}


#: The built-in libraries whose settings are written (``advisor.formats.writers_of``); a
#: plugin's record with an EasyBuild name is written too (``Selection.libraries``).
LIBRARIES = tuple(sorted(easybuild_names(builtin_libraries())))

#: The ``--spec-range`` choices: how far from the measured version the settings apply.
SPEC_RANGES = ("exact", "minor", "major")

#: The fixed code of the hook (no profile text in it).
HOOK = '''

__all__ = ["SETTINGS", "apply", "matches"]


def matches(name, version):
    """(entry, why): the SETTINGS entry of software NAME when VERSION is in its range, else
    (None, why not).  Versions compare with EasyBuild's LooseVersion."""
    entry = SETTINGS.get(name)
    if entry is None:
        return None, "no advised settings for %s" % name
    if entry["lowest"] is None:
        return entry, "the profile recorded no %s version: every version" % name
    from easybuild.tools import LooseVersion

    have = LooseVersion(str(version))
    if entry["below"] is None:
        ok = have == LooseVersion(entry["lowest"])
        versions = entry["lowest"]
    else:
        ok = LooseVersion(entry["lowest"]) <= have < LooseVersion(entry["below"])
        versions = ">= %s, < %s" % (entry["lowest"], entry["below"])
    why = "measured with %s %s, written for versions %s (--spec-range %s)" % (
        name, entry["measured"], versions, entry["range"])
    return (entry if ok else None), why


def apply(ec):
    """Add the settings measured for this easyconfig's software name and version to its
    modextravars; return those added as a dict ({} when none).  A variable the easyconfig sets
    itself keeps its value (the easyconfig's author chose it), and EasyBuild's log names it.
    An easyconfig of another version is left untouched and EasyBuild's log says why."""
    entry, why = matches(ec.name, ec.version)
    if entry is None:
        if ec.name in SETTINGS:
            ec.log.info("hpc-advisor: %s %s left untouched: %s", ec.name, ec.version, why)
        return {}
    own = ec["modextravars"] or {}
    added = {k: v for k, v in entry["env"].items() if k not in own}
    kept = sorted(k for k in entry["env"] if k in own and str(own[k]) != str(entry["env"][k]))
    if added:
        ec.update("modextravars", added)
        ec.log.info("hpc-advisor: %s %s: modextravars %s added (%s)", ec.name, ec.version,
                    ", ".join(sorted(added)), why)
    if kept:
        ec.log.info("hpc-advisor: %s %s: the easyconfig's own %s kept (measured: %s)",
                    ec.name, ec.version, ", ".join(kept),
                    ", ".join("%s=%s" % (k, entry["env"][k]) for k in kept))
    return added


def parse_hook(ec, *args, **kwargs):
    """EasyBuild's parse hook when this file is the --hooks file itself: apply(ec)."""
    apply(ec)
'''


def version_range(version: Optional[str], spec_range: str,
                  name: str = "the") -> tuple[Optional[str], Optional[str]]:
    """``(lowest, below)`` of the versions a setting measured with ``version`` is written for:
    ``exact`` -> ``(version, None)`` (that version only), ``minor`` -> ``("5.0", "5.1")`` for
    ``5.0.2``, ``major`` -> ``("5", "6")``; ``(None, None)`` when ``version`` is None (not
    recorded: every version).  The release numbers are read with
    :class:`packaging.version.Version`.  ``name``: the software, for the error.

    :raises EmitError: ``spec_range`` not one of :data:`SPEC_RANGES`, or a version packaging
        cannot read with ``minor``/``major`` (``exact`` takes any version text).
    """
    from packaging.version import InvalidVersion, Version

    from advisor.errors import EmitError

    if spec_range not in SPEC_RANGES:
        raise EmitError(f"--spec-range {spec_range!r}: choose one of {', '.join(SPEC_RANGES)}")
    if version is None or spec_range == "exact":
        return version, None
    try:
        release = Version(version).release
    except InvalidVersion:
        raise EmitError(f"{name} version {version!r} is not a release number packaging reads, "
                        f"so --spec-range {spec_range} has no range: use --spec-range exact"
                        ) from None
    if spec_range == "major":
        return str(release[0]), str(release[0] + 1)
    minor = release[1] if len(release) > 1 else 0
    return f"{release[0]}.{minor}", f"{release[0]}.{minor + 1}"


def _literal(value: Optional[str]) -> str:
    return "None" if value is None else python_quote(value)


def render(sel: "Selection") -> str:
    """A hooks file (module docstring): ``SETTINGS`` maps each software name to
    ``{"measured": version or None, "range": spec range, "lowest": ..., "below": ...,
    "env": {NAME: value}}`` (:func:`version_range`), then the fixed :data:`HOOK` code.

    :raises EmitError: nothing to write (``Selection.nothing_to_write``: no setting of a
        library an easyconfig builds); a value EasyBuild would not carry unchanged
        (``easybuild_unsafe``); a spec range :func:`version_range` refuses.
    """
    spec_range = getattr(sel.options, "spec_range", "exact")
    lines = [f"# {line}" for line in header_lines(sel.profile)]
    names = easybuild_names(sel.libraries)
    lines += left_out_comment(sel, ("env",), fmt=NAME, libraries=tuple(names))
    items = [i for i in env_items(sel)
             if any(src.setting.library in names for src in i.sources)]
    refuse_unsafe(items, easybuild_unsafe, "use another format (lmod, tcl) for this value")
    if not items:  # a hooks file that adds nothing would be deployed for nothing
        from advisor.errors import EmitError

        raise EmitError(sel.nothing_to_write(("env",), NAME, tuple(names)))
    by_name: dict[str, list[EnvItem]] = {}
    lib_of: dict[str, str] = {}
    for item in items:
        for lib in sorted({s.setting.library for s in item.sources if s.setting.library in names}):
            by_name.setdefault(names[lib], [])
            if item not in by_name[names[lib]]:
                by_name[names[lib]].append(item)
            lib_of.setdefault(names[lib], lib)
    lines.append("SETTINGS = {")
    for sw in sorted(by_name):
        version = version_of(sel.profile.facts, lib_of[sw], sel.libraries)
        lowest, below = version_range(version, spec_range, sw)
        lines.append(f"    {python_quote(sw)}: {{")
        if version is None:
            lines.append(f"        # the profile recorded no {one_line(sw)} version: "
                         "every version gets these settings")
        lines += [f"        'measured': {_literal(version)},",
                  f"        'range': {python_quote(spec_range if version else 'any')},",
                  f"        'lowest': {_literal(lowest)},", f"        'below': {_literal(below)},",
                  "        'env': {"]
        for item in by_name[sw]:
            if item.comment:
                lines.append(f"            # {item.comment}")
            if item.separator is not None:
                sep = one_line(repr(item.separator))
                lines.append(f"            # {item.name} is a list ({sep}-separated); "
                             "modextravars cannot append, this overwrites it")
            lines.append(f"            {python_quote(item.name)}: {python_quote(item.value)},")
        lines += ["        },", "    },"]
    lines.append("}")
    return "\n".join(lines) + HOOK


def parse(text: str, path: str) -> list[EnvEntry]:
    """The settings of a hooks file's ``SETTINGS`` dict (software name -> ``{..., "env":
    {NAME: value}}``; the older form, software name -> ``{NAME: value}``, is read too), read
    with ``ast.literal_eval``.

    :raises BadInputError: not Python syntax (line named).
    """
    import ast

    out: list[EnvEntry] = []
    for node in python_assignments(text, path, "SETTINGS", "EasyBuild hooks"):
        if not isinstance(node.value, ast.Dict):
            out.append(unreadable(path, node.lineno, "SETTINGS is not a dict literal"))
            continue
        for sw in node.value.values:
            if not isinstance(sw, ast.Dict):
                out.append(unreadable(path, sw.lineno, "SETTINGS entry is not a dict literal"))
                continue
            env = [v for k, v in zip(sw.keys, sw.values)
                   if isinstance(k, ast.Constant) and k.value == "env"]
            if env and not isinstance(env[0], ast.Dict):
                out.append(unreadable(path, env[0].lineno, "SETTINGS 'env' is not a dict literal"))
                continue
            out += literal_dict_entries(env[0] if env else sw, path, "SETTINGS")
    return out
