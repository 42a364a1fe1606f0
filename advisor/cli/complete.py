"""Shell completion of option values: format names, ``@`` shipped profiles, setting names, the
configuration's keys and plugin names.

Each function is a typer ``autocompletion`` callback: typer hands it the word being completed
(``incomplete``) when the shell runs ``advisor`` in completion mode (``_ADVISOR_COMPLETE``:
``advisor.cli.completion_cmd``), and it returns ``(value, help)`` pairs whose value starts with
that word (zsh and fish show the help; bash only the value).  A completion never writes to
stderr and never fails: the shell would print either over the command line, so a configuration
or plugin that cannot be read yields no candidates, and the shell falls back to its own (files,
for bash's ``complete -o default``).
"""

from __future__ import annotations

from typing import Callable

Candidates = list[tuple[str, str]]


def _quiet(fn: Callable[[str], Candidates]) -> Callable[[str], Candidates]:
    """``fn`` filtered to the candidates starting with ``incomplete``, and [] on any error."""
    def complete(incomplete: str) -> Candidates:
        try:
            return [(v, h) for v, h in fn(incomplete or "") if v.startswith(incomplete or "")]
        except Exception:  # noqa: BLE001 - a completion must never print a traceback
            return []

    complete.__name__ = fn.__name__
    complete.__doc__ = fn.__doc__
    return complete


def _registry():
    """The plugin registry as the command would load it (``[plugins]`` of the configuration,
    ``ADVISOR_DISABLE_PLUGINS``), without the warnings ``common.load_registry`` prints."""
    from advisor.config.scopes import load_config
    from advisor.plugins import collect, make_plugin_manager

    plugins = load_config().model.plugins
    return collect(make_plugin_manager(disable=plugins.disable, only=plugins.enable or None))


def _gist(text: str) -> str:
    """The first sentence of ``text`` on one line: the help a shell shows beside a candidate
    (zsh and fish print one line per candidate)."""
    import re

    flat = " ".join((text or "").split())
    return re.split(r"\.\s+(?=[A-Z])|;\s", flat, maxsplit=1)[0]  # not at "e.g. x"


@_quiet
def emit_formats(incomplete: str) -> Candidates:
    """``emit --format``: every registered format, with its description."""
    return [(n, e.description) for n, e in sorted(_registry().emitters.items())]


@_quiet
def lint_formats(incomplete: str) -> Candidates:
    """``lint --format``: ``auto`` and each format that has a parser (lint can read it)."""
    formats = [(n, e.description) for n, e in sorted(_registry().emitters.items())
               if e.parse is not None]
    return [("auto", "detect the format from the file"), *formats]


def choices(values) -> Callable[[str], Candidates]:
    """A completion of a fixed set of ``values`` (e.g. ``report --format``)."""
    return _quiet(lambda incomplete: [(v, "") for v in values])


@_quiet
def profiles(incomplete: str) -> Candidates:
    """``--profile``: ``@NAME`` of each shipped profile, with its machine, once the word starts
    with ``@``; any other word is a file, left to the shell (no candidates)."""
    from advisor.shipped import SHIPPED_PREFIX, list_shipped

    if not incomplete.startswith(SHIPPED_PREFIX):
        return []
    return [(SHIPPED_PREFIX + p.name, _gist(p.machine)) for p in list_shipped()]


@_quiet
def plugins(incomplete: str) -> Candidates:
    """``--plugin`` / ``--skip-plugin``: each installed plugin (entry-point name) and each probe
    a loaded plugin registers."""
    from advisor.plugins import known_plugin_names

    reg = _registry()
    installed, _ = known_plugin_names()
    found = {name: "plugin" for name in installed}
    for probe, owner in reg.owners("probe").items():
        found.setdefault(probe, f"probe of {owner}")
    return sorted(found.items())


def _knobs():
    from advisor.config.apply import knob_entries

    return sorted(((k.name, f"{k.library}: {_gist(k.description)}")
                   for _, k in knob_entries(_registry())), key=lambda c: c[0])


@_quiet
def settings(incomplete: str) -> Candidates:
    """``explain NAME``: every setting name a loaded plugin's knob declares."""
    return list(dict(_knobs()).items())


@_quiet
def config_keys(incomplete: str) -> Candidates:
    """``config get|set KEY``: each key of a scope file (``advisor.config.schema``), and
    ``settings.pin.NAME`` / ``settings.exclude.NAME`` for each declared setting name."""
    from advisor.config.schema import ScopeFile

    keys = []
    for section, field in ScopeFile.model_fields.items():
        for key, sub in type(field.default).model_fields.items():
            if (section, key) in (("settings", "pin"), ("settings", "exclude")):
                continue
            keys.append((f"{section}.{key}", _gist(sub.description or "")))
    knobs = dict(_knobs())
    for table in ("pin", "exclude"):
        keys += [(f"settings.{table}.{name}", text) for name, text in knobs.items()]
    return keys
