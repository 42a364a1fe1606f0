"""Where the configuration scopes live, reading them with file and line, and merging them.

Scopes, lowest to highest precedence (docs/config.md):

========  ===============================================================================
defaults  ``advisor/config/defaults.toml`` in the package, plus the store directory
          (``platformdirs.user_data_dir("hpc-advisor")/profiles``)
site      ``$ADVISOR_SITE_CONFIG`` (a file, or a directory holding ``config.toml``), else
          ``/etc/advisor/config.toml``
user      ``$ADVISOR_USER_CONFIG``, else ``platformdirs.user_config_dir("advisor")/config.toml``
env       ``ADVISOR_LAUNCHER`` -> ``launcher.command``; ``ADVISOR_DISABLE_PLUGINS`` (comma
          separated) -> ``plugins.disable``; ``ADVISOR_HOME`` -> ``store.profiles`` =
          ``$ADVISOR_HOME/profiles``
cli       the options of the running command (e.g. ``--launcher``), given by the CLI
========  ===============================================================================

Merging, like Spack's scopes: tables merge key by key (recursively); a scalar of a higher scope
replaces the lower one; lists are concatenated, the higher scope's items first, duplicates
dropped; a pin (``settings.pin.NAME``) is one value: a higher scope's pin replaces it whole.
A missing scope file is an empty scope.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional

from advisor.errors import BadInputError

__all__ = ["SCOPES", "FILE_SCOPES", "Scope", "Config", "scope_path", "read_scope_file",
           "load_config", "MAX_CONFIG_BYTES"]

SCOPES = ("defaults", "site", "user", "env", "cli")
#: Scopes that are files ``advisor config set/edit`` may change.
FILE_SCOPES = ("site", "user")
#: Larger scope files are refused before parsing (a real one is a few hundred bytes).
MAX_CONFIG_BYTES = 1024 * 1024
DEFAULTS_FILE = Path(__file__).with_name("defaults.toml")
SITE_DEFAULT = Path("/etc/advisor/config.toml")


@dataclass(frozen=True)
class Scope:
    """One scope as read.

    :ivar name: one of :data:`SCOPES`.
    :ivar path: its file (None for env and cli).
    :ivar data: the parsed, validated mapping ({} when there is no file).
    :ivar origins: key path -> where it was said: ``FILE:LINE`` for files, the variable or
        option name for env and cli.
    """

    name: str
    path: Optional[Path]
    data: dict
    origins: dict = field(default_factory=dict)

    @property
    def exists(self) -> bool:
        return bool(self.data) or (self.path is not None and self.path.is_file())

    def where(self, key: tuple) -> str:
        """Where ``key`` (or its closest enclosing table) is set in this scope."""
        for n in range(len(key), 0, -1):
            if key[:n] in self.origins:
                return self.origins[key[:n]]
        return str(self.path) if self.path is not None else self.name


def scope_path(name: str, environ: Optional[Mapping[str, str]] = None) -> Optional[Path]:
    """The file of scope ``name`` (None for env, cli).

    :raises BadInputError: ``name`` is not a scope.
    """
    env = os.environ if environ is None else environ
    if name == "defaults":
        return DEFAULTS_FILE
    if name == "site":
        given = env.get("ADVISOR_SITE_CONFIG")
        if not given:
            return SITE_DEFAULT
        p = Path(given).expanduser()
        return p / "config.toml" if p.is_dir() else p
    if name == "user":
        given = env.get("ADVISOR_USER_CONFIG")
        if given:
            return Path(given).expanduser()
        import platformdirs

        return Path(platformdirs.user_config_dir("advisor", appauthor=False)) / "config.toml"
    if name in ("env", "cli"):
        return None
    raise BadInputError(f"--scope {name!r}: not a scope (scopes: {', '.join(SCOPES)})")


def validate(data: Any, label: str, lines: Mapping[tuple, int]) -> None:
    """Validate a scope mapping against ``ScopeFile``.

    :raises BadInputError: one line ``FILE:LINE: key 'a.b': what`` for the first error
        (unknown keys first); every error in ``details``.
    """
    from pydantic import ValidationError

    from advisor.config.schema import ScopeFile
    from advisor.profile import _data_path, _loc, validation_details

    try:
        ScopeFile.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors()
        first = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
        loc = _data_path(data, tuple(first["loc"]))
        if first["type"] == "extra_forbidden":
            loc = tuple(first["loc"])
        line = lines.get(loc)
        where = f"{label}:{line}" if line else label
        what = "unknown key" if first["type"] == "extra_forbidden" else first["msg"]
        got = "" if first["type"] == "extra_forbidden" else f", got {first.get('input')!r}"
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise BadInputError(f"{where}: key '{_loc(loc)}': {what}{got}{more}",
                            details=validation_details(exc)) from None


def read_scope_file(name: str, path: Path) -> Scope:
    """Read and validate scope ``name``'s file ``path`` (missing: an empty scope).

    :raises BadInputError: unreadable, malformed TOML (tomllib's message has the line), or a
        key the schema refuses (``FILE:LINE: key 'a.b': ...``).
    """
    from advisor.textfile import read_text_file

    if not path.exists():
        return Scope(name, path, {})
    text = read_text_file(path, kind="configuration file", max_bytes=MAX_CONFIG_BYTES)
    return scope_from_text(name, path, text)


def scope_from_text(name: str, path: Path, text: str) -> Scope:
    """As :func:`read_scope_file` for ``text`` (the file's content)."""
    from advisor.config.locate import key_lines
    from advisor.nesting import load_toml

    data = load_toml(text, str(path))
    lines = key_lines(text, data)
    validate(data, str(path), lines)
    return Scope(name, path, data, {k: f"{path}:{n}" for k, n in lines.items()})


def env_scope(environ: Optional[Mapping[str, str]] = None) -> Scope:
    """The environment scope: the variables advisor read before scopes existed."""
    env = os.environ if environ is None else environ
    data: dict = {}
    origins: dict = {}
    launcher = env.get("ADVISOR_LAUNCHER", "").strip()
    if launcher:
        data["launcher"] = {"command": launcher}
        origins[("launcher", "command")] = "$ADVISOR_LAUNCHER"
    disable = [p.strip() for p in env.get("ADVISOR_DISABLE_PLUGINS", "").split(",") if p.strip()]
    if disable:
        data["plugins"] = {"disable": disable}
        origins[("plugins", "disable")] = "$ADVISOR_DISABLE_PLUGINS"
    home = env.get("ADVISOR_HOME")
    if home:
        data["store"] = {"profiles": str(Path(home).expanduser() / "profiles")}
        origins[("store", "profiles")] = "$ADVISOR_HOME"
    return Scope("env", None, data, origins)


def _defaults_scope() -> Scope:
    import platformdirs

    base = read_scope_file("defaults", DEFAULTS_FILE)
    store = str(Path(platformdirs.user_data_dir("hpc-advisor", appauthor=False)) / "profiles")
    data = dict(base.data, store={"profiles": store})
    origins = dict(base.origins)
    origins[("store", "profiles")] = "platformdirs.user_data_dir('hpc-advisor')"
    return Scope("defaults", DEFAULTS_FILE, data, origins)


def merge(low: Any, high: Any, path: tuple = ()) -> Any:
    """``high`` over ``low`` by the rules of the module docstring."""
    if len(path) == 3 and path[:2] == ("settings", "pin"):
        return high
    if isinstance(low, dict) and isinstance(high, dict):
        out = dict(low)
        for k, v in high.items():
            out[k] = merge(low[k], v, path + (k,)) if k in low else v
        return out
    if isinstance(low, list) and isinstance(high, list):
        return list(dict.fromkeys([*high, *low]))
    return high


@dataclass(frozen=True)
class Config:
    """The scopes as read (lowest first) and what they add up to.

    :ivar scopes: one :class:`Scope` per name of :data:`SCOPES`.
    :ivar merged: the merged mapping; ``model`` is it validated (``ScopeFile``).
    """

    scopes: tuple
    merged: dict
    model: Any

    def scope(self, name: str) -> Scope:
        return next(s for s in self.scopes if s.name == name)

    def contributions(self, key: tuple) -> list[tuple[Scope, Any, str]]:
        """``(scope, value, where)`` of each scope that sets ``key``, lowest first."""
        out = []
        for s in self.scopes:
            node: Any = s.data
            try:
                for part in key:
                    node = node[part]
            except (KeyError, IndexError, TypeError):
                continue
            out.append((s, node, s.where(key)))
        return out

    def where(self, key: tuple) -> str:
        """Where the effective value of ``key`` comes from (the highest scope setting it)."""
        found = self.contributions(key)
        return found[-1][2] if found else "unset"


def load_config(cli: Optional[dict] = None, cli_origins: Optional[dict] = None, *,
                environ: Optional[Mapping[str, str]] = None) -> Config:
    """Read every scope and merge them.

    :param cli: the running command's options as a scope mapping, e.g.
        ``{"launcher": {"command": "srun -n {nprocs}"}}``; ``cli_origins`` names the option of
        each key path (``{("launcher", "command"): "--launcher"}``).
    :raises BadInputError: a scope file that cannot be read or validated (names the file, the
        key and the line).
    """
    from advisor.config.schema import ScopeFile

    scopes = [_defaults_scope()]
    for name in ("site", "user"):
        scopes.append(read_scope_file(name, scope_path(name, environ)))
    scopes.append(env_scope(environ))
    cli = cli or {}
    validate(cli, "command line", {})
    scopes.append(Scope("cli", None, cli, dict(cli_origins or {})))
    merged: dict = {}
    for s in scopes:
        merged = merge(merged, s.data)
    validate(merged, "merged configuration", {})
    return Config(tuple(scopes), merged, ScopeFile.model_validate(merged))
