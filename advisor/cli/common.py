"""What several commands share: the configuration scopes (``load_config``), loading the plugins
with ``[plugins]`` and ``--plugin`` / ``--skip-plugin``, finding and reading the profile (in
``[store] profiles``), and parsing ``--launcher`` (default ``[launcher] command``) /
``--option``."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from advisor.cli import complete
from advisor.cli.boundary import warn
from advisor.errors import BadInputError, did_you_mean

ProfileOpt = typer.Option(None, "--profile", "-p", metavar="PATH|@NAME", help="Profile to read: "
                          "a file, or @NAME for a shipped profile ('advisor profiles list'); "
                          "default: this host's profile in $ADVISOR_HOME/profiles.",
                          autocompletion=complete.profiles)
JsonOpt = typer.Option(False, "--json", help="Print JSON on stdout instead of a table.")

#: Hooks whose failure cannot hide a probe: a probe named with --plugin that is unknown is not
#: blamed on a plugin whose only issue is one of these.
_NOT_PROBE_HOOKS = ("advisor_register_emitters", "advisor_register_knobs",
                    "advisor_register_facts", "advisor_register_libraries")


_MAY_PROVIDE = "--plugin: no probe or plugin named "


def _not_loaded(reg, name: str) -> Optional[str]:
    """Why ``--plugin name`` selects nothing when a plugin failed: one line naming the plugin
    that failed and its error, or None when no failure explains it."""
    for i in reg.issues:
        if i.plugin == name:
            return f"--plugin: plugin {i.plugin} did not load ({i.stage}): {i.error}"
    for plugin, probes in reg.lost_probes.items():
        if name in probes:
            i = next(i for i in reg.issues if i.plugin == plugin
                     and i.stage == "advisor_register_probes")
            return (f"--plugin: probe {name} of plugin {plugin} did not load ({i.stage}): "
                    f"{i.error}")
    issues = [i for i in reg.issues if i.stage not in _NOT_PROBE_HOOKS]
    if issues:  # a plugin that failed before registering anything may be the one that has it
        failed = "; ".join(f"{i.plugin} ({i.stage}: {i.error})" for i in issues)
        return f"{_MAY_PROVIDE}{name}; plugins that did not load may provide it: {failed}"
    return None


def load_config(cli: Optional[dict] = None, origins: Optional[dict] = None):
    """The configuration scopes merged (``advisor.config.scopes.load_config``), with ``cli``
    the command's own options as the highest scope (``origins``: key path -> option name).

    :raises BadInputError: a scope file that cannot be read or validated (file, key, line).
    """
    from advisor.config.scopes import load_config as _load

    return _load(cli, origins)


#: Disabled names already warned about in this process (a command may load plugins twice).
_WARNED_DISABLED: set[str] = set()


def warn_unknown_disabled(disable: List[str]) -> None:
    """One warning line per name of ``ADVISOR_DISABLE_PLUGINS`` / ``[plugins] disable`` that
    names no installed plugin (a typo would otherwise disable nothing, silently), with the
    nearest name and the known plugins."""
    from advisor.plugins import disabled_from_env, known_plugin_names

    installed, known = known_plugin_names()
    env = disabled_from_env()
    for name in sorted(set(disable) - known - _WARNED_DISABLED):
        _WARNED_DISABLED.add(name)
        near = did_you_mean(name, installed)
        warn(f"{'ADVISOR_DISABLE_PLUGINS' if name in env else '[plugins] disable'}: no plugin "
             f"named {name!r}, nothing disabled by it" + (f"; did you mean {near}?" if near
                                                          else "")
             + f" (known plugins: {', '.join(installed) or 'none'})")


def plugin_manager(cfg=None):
    """A plugin manager honouring ``[plugins] enable/disable`` of the configuration."""
    from advisor.plugins import make_plugin_manager

    cfg = cfg if cfg is not None else load_config()
    warn_unknown_disabled(cfg.model.plugins.disable)
    return make_plugin_manager(disable=cfg.model.plugins.disable,
                               only=cfg.model.plugins.enable or None)


def load_registry(plugin: Optional[List[str]] = None, skip: Optional[List[str]] = None):
    """The plugin registry with ``--plugin`` (only these probes or plugins) and
    ``--skip-plugin`` applied; warns on stderr about each plugin issue.

    :raises BadInputError: a name matches no probe or plugin; when a plugin that did not load
        explains it, the message names that plugin and its error.
    """
    from advisor.plugins import load

    plugins = load_config().model.plugins
    warn_unknown_disabled(plugins.disable)
    reg = load(skip_probes=skip or (), only_probes=plugin or None, disable=plugins.disable,
               only_plugins=plugins.enable or None)
    known = (set(reg.probes) | set(reg.owners("probe").values()) | set(reg.skipped_probes)
             | set(reg.skipped_probes.values()))
    for flag, names in (("--plugin", plugin), ("--skip-plugin", skip)):
        unknown = sorted(set(names or ()) - known)
        for name in unknown:
            # a plugin that failed with this very name; else a near loaded name, beside any
            # plugin that failed (it may provide the name)
            why = _not_loaded(reg, name) if flag == "--plugin" else None
            near = did_you_mean(name, sorted(known))
            if near and why is None:
                raise BadInputError(f"{flag}: no probe or plugin named {name} (did you mean "
                                    f"{near}? see 'advisor plugins')")
            if near and why.startswith(_MAY_PROVIDE + name + ";"):
                why = why.replace(f"{name};", f"{name} (did you mean {near}?);", 1)
            if why:
                raise BadInputError(why)
        broken = {i.plugin for i in reg.issues}
        unknown = [n for n in unknown if n not in broken]
        if unknown:
            raise BadInputError(f"{flag}: no probe or plugin named {', '.join(unknown)} "
                                f"(see 'advisor plugins')")
    for issue in reg.issues:
        if issue.stage == "import":
            warn(f"plugin {issue.plugin} skipped (import): {issue.error}")
        else:  # one hook failed: what the plugin registered elsewhere is still used
            warn(f"plugin {issue.plugin}: {issue.stage} failed, what it registers there is "
                 f"left out: {issue.error}")
    return reg


def profile_path(profile: Optional[Path], *, write: bool = False) -> Path:
    """``--profile``, or this host's profile in the store (``[store] profiles`` of the
    configuration; ``$ADVISOR_HOME/profiles`` by default).  ``@NAME`` is the shipped profile
    ``NAME`` (``advisor.shipped``); a file of that name is reached as ``./@NAME``.

    :param write: the path will be written (``probe -o``, ``verify``): a shipped profile is
        package data, never overwritten.
    :raises BadInputError: no shipped profile has that name, or ``write`` with ``@NAME``.
    """
    from advisor.profile import default_profile_path
    from advisor.shipped import SHIPPED_PREFIX, shipped_path

    if profile is None:
        store = load_config().model.store.profiles
        default = default_profile_path()
        return Path(store).expanduser() / default.name if store else default
    if str(profile).startswith(SHIPPED_PREFIX):
        if write:
            raise BadInputError(f"{profile}: a shipped profile is read-only; give a file path "
                                f"(e.g. ./{profile} for a file of that name)")
        return shipped_path(str(profile))
    if not write and not profile.exists():
        _refuse_missing(profile)
    return profile


def _refuse_missing(profile: Path) -> None:
    """Refuse a ``--profile`` file that does not exist when it reads like a shipped profile's
    name without its ``@`` (exactly, or by ``did_you_mean``); otherwise the reader reports the
    missing file as usual.

    :raises BadInputError: "PATH: no such file; did you mean @NAME?".
    """
    from advisor.shipped import SHIPPED_PREFIX, shipped_names

    if profile.parent != Path("."):  # a path with a directory names a file, not a profile
        return
    bare = profile.name[:-len(".toml")] if profile.name.endswith(".toml") else profile.name
    near = did_you_mean(bare, shipped_names())
    if near is not None:
        raise BadInputError(f"--profile {profile}: no such file; did you mean "
                            f"{SHIPPED_PREFIX}{near}? (a shipped profile is named with "
                            f"{SHIPPED_PREFIX})")


def load(profile: Optional[Path]):
    """The profile named by ``--profile`` (or this host's).

    :raises ProfileError: no profile for this host yet, or it cannot be read (names the file).
    """
    from advisor.errors import ProfileError
    from advisor.profile import load_profile

    path = profile_path(profile)
    if profile is None and not path.exists():
        raise ProfileError(f"{path}: no profile for this host yet (run 'advisor probe', or pass "
                           f"--profile PATH)")
    return load_profile(path)


def check_profile_plugins(prof, plugin: Optional[List[str]]) -> None:
    """Refuse ``--plugin`` names the profile has no result for (a typo would select nothing)."""
    if not plugin:
        return
    known = {r.probe for r in prof.results} | {r.plugin for r in prof.results}
    unknown = sorted(set(plugin) - known)
    if unknown:
        near = did_you_mean(unknown[0], sorted(known)) if len(unknown) == 1 else None
        hint = f"did you mean {near}?; " if near else ""
        raise BadInputError(f"--plugin: the profile has no probe or plugin named "
                            f"{', '.join(unknown)} ({hint}it has: {', '.join(sorted(known))})")


def launcher_argv(launcher: Optional[str]) -> Optional[list[str]]:
    """``--launcher``, else ``[launcher] command`` of the configuration (``ADVISOR_LAUNCHER``
    is its env scope), split like a shell would; None when neither is given."""
    import shlex

    if launcher is None:
        launcher = load_config().model.launcher.command
    if launcher is None:
        return None
    argv = shlex.split(launcher)
    if not argv:
        raise BadInputError("--launcher: empty command")
    return argv


def parse_options(option: Optional[List[str]]) -> dict[str, str]:
    """``--option KEY=VALUE`` items as a dict.

    :raises BadInputError: an item without ``=`` or with an empty key.
    """
    out: dict[str, str] = {}
    for item in option or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise BadInputError(f"--option {item!r}: expected KEY=VALUE")
        out[key.strip()] = value
    return out


def check_option_keys(options: dict[str, str], probes) -> None:
    """Refuse a ``--option`` key that no probe of the run reads (``advisor.probe.option_readers``),
    naming the nearest key they do read; warn instead where a probe of the run does not
    declare its keys (the key may be that probe's).  Then each probe's optional
    ``check_options`` judges the values (``advisor.probe.Probe``).  ``probes``: name -> probe.

    :raises BadInputError: a key no probe reads, every probe declaring its keys; a bad value.
    """
    from advisor.probe import option_readers

    unread, undeclared = option_readers(options, probes)
    keys = sorted({k for p in probes.values() for k in (getattr(p, "option_keys", None) or {})})
    if unread and not undeclared:
        from advisor.plugins import load

        key = unread[0]
        near = did_you_mean(key, keys)
        # the probes outside the run that read it (a hint; on this error path only)
        elsewhere = sorted(n for n, p in load().probes.items()
                           if n not in probes and key in (getattr(p, "option_keys", None) or {}))
        hint = (f"{', '.join(elsewhere)} read(s) it" if elsewhere else
                f"did you mean {near}?" if near else
                f"keys read: {', '.join(keys)}" if keys else "they read no option")
        raise BadInputError(
            f"--option {key}: no probe of this run ({', '.join(sorted(probes)) or 'none'}) "
            f"reads this key; {hint} ('advisor plugins --options' lists every probe's keys)")
    for key in unread:
        warn(f"--option {key}: no probe that declares its keys reads it; not checked for "
             f"{', '.join(undeclared)}, which declare(s) none")
    done = set()  # a check two probes share (memory-pool's reads a trace file) runs once
    for name, probe in probes.items() if options else ():  # the values, before measuring
        check = getattr(probe, "check_options", None)
        if check is None or getattr(check, "__func__", check) in done:
            continue
        done.add(getattr(check, "__func__", check))
        try:
            check(dict(options))
        except BadInputError:
            raise
        except Exception as exc:  # a plugin's bug is its own: the probe meets the values later
            from advisor.steps import why

            warn(f"probe {name}: check_options failed ({why(exc)}); its --option values are "
                 "not checked before it measures")
