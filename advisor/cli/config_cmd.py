"""``advisor config get|set|edit|list|schema`` and ``advisor explain NAME``: the configuration
scopes (``advisor.config``) read, changed and explained."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from advisor.cli import common, complete
from advisor.cli.boundary import boundary, err, out, printable, warn
from advisor.errors import BadInputError

config_app = typer.Typer(help="Read and change the configuration scopes (defaults < site < "
                         "user < env < cli; docs/config.md).", no_args_is_help=True,
                         add_completion=False, rich_markup_mode=None)

ScopeOpt = typer.Option(None, "--scope", metavar="SCOPE", help="One scope: defaults, site, "
                        "user, env or cli (default: all of them merged).")
FileScopeOpt = typer.Option("user", "--scope", metavar="SCOPE", help="The scope file to change: "
                            "site or user.")


def _toml_value(value) -> str:
    import tomlkit

    return tomlkit.item(value).as_string()


def _file_scope(scope: str) -> Path:
    from advisor.config.scopes import FILE_SCOPES, scope_path

    if scope not in FILE_SCOPES:
        raise BadInputError(f"--scope {scope!r}: only a file scope can be changed "
                            f"({', '.join(FILE_SCOPES)})")
    return scope_path(scope)


def _pick(scope: Optional[str]):
    """The mapping of ``--scope`` (or the merged one), and the loaded Config."""
    from advisor.config.scopes import SCOPES

    cfg = common.load_config()
    if scope is None:
        return cfg.merged, cfg
    if scope not in SCOPES:
        raise BadInputError(f"--scope {scope!r}: not a scope (scopes: {', '.join(SCOPES)})")
    return cfg.scope(scope).data, cfg


@config_app.command("get")
@boundary
def get(key: str = typer.Argument(..., metavar="KEY", help="e.g. launcher.command or "
                                  "settings.pin", autocompletion=complete.config_keys),
        scope: Optional[str] = ScopeOpt) -> None:
    """Print the value of KEY (a table as TOML); where it comes from goes to stderr."""
    import tomli_w

    from advisor.config.write import key_path

    data, cfg = _pick(scope)
    path = key_path(key)
    node = data
    for part in path:
        if not isinstance(node, dict) or part not in node:
            raise BadInputError(f"{key}: not set" + (f" in the {scope} scope" if scope else ""))
        node = node[part]
    out(tomli_w.dumps(node) if isinstance(node, dict) else _toml_value(node) + "\n")
    if not isinstance(node, dict):
        err(f"{key} from {cfg.where(path) if scope is None else cfg.scope(scope).where(path)}")


@config_app.command("list")
@boundary
def list_(scope: Optional[str] = ScopeOpt) -> None:
    """Print every key set, one 'key = value  # from FILE:LINE' line each (like 'spack config
    blame'); the scope files read go to stderr."""
    from advisor.config.locate import key_paths

    data, cfg = _pick(scope)
    for s in cfg.scopes:
        if s.path is not None and s.name != "defaults":
            err(f"{s.name} scope: {s.path}" + ("" if s.exists else " (no file)"))
    lines = []
    for path in key_paths(data):
        node = data
        for part in path:
            node = node[part]
        if isinstance(node, dict) or isinstance(path[-1], int):
            continue
        src = cfg.where(path) if scope is None else cfg.scope(scope).where(path)
        lines.append(f"{'.'.join(path)} = {_toml_value(node)}  # {src}\n")
    out("".join(lines))


def _pin_check():
    """The check ``config set`` / ``edit`` run before writing: every pin must be one emit
    accepts (a knob declares the name, its library reads the value)."""
    from advisor.config.apply import check_scope_pins, knob_entries
    from advisor.plugins import collect

    reg = collect(common.plugin_manager(common.load_config()))
    return lambda scope: check_scope_pins(scope, knob_entries(reg), reg.libraries)


@config_app.command("set")
@boundary
def set_(key: str = typer.Argument(..., metavar="KEY", help="e.g. settings.pin.NAME",
                                   autocompletion=complete.config_keys),
         value: str = typer.Argument(..., metavar="VALUE", help="A TOML value (16384, true, "
                                     "[\"a:b\"]); other text is taken as a string."),
         scope: str = FileScopeOpt,
         reason: Optional[str] = typer.Option(None, "--reason", metavar="TEXT", help="With "
                                              "settings.pin.NAME: why the site pins it (kept "
                                              "with the pin; shown by list, get and explain).")
         ) -> None:
    """Set KEY to VALUE in a scope file, keeping its comments and layout (tomlkit)."""
    from advisor.config.write import set_key

    path = _file_scope(scope)
    set_key(scope, path, key, value, check=_pin_check(), reason=reason)
    err(f"{key} set in {path}")


@config_app.command("edit")
@boundary
def edit(scope: str = FileScopeOpt) -> None:
    """Edit a scope file with $VISUAL or $EDITOR (default vi); the edit replaces the file only
    when it is a valid scope, else it is kept beside it and the error says where."""
    import os
    import shlex
    import subprocess
    import tempfile

    from advisor.config.scopes import MAX_CONFIG_BYTES, scope_from_text
    from advisor.config.write import EDIT_TEMPLATE
    from advisor.save import atomic_write_text
    from advisor.textfile import read_text_file

    path = _file_scope(scope)
    old = (read_text_file(path, kind="configuration file", max_bytes=MAX_CONFIG_BYTES)
           if path.exists() else EDIT_TEMPLATE.format(scope=scope))
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".edit.toml", dir=path.parent)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(old)
    editor = shlex.split(os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi")
    try:
        rc = subprocess.run([*editor, tmp], check=False).returncode
    except OSError as exc:
        os.unlink(tmp)
        raise BadInputError(f"editor {editor[0]!r} cannot be started: {exc}") from None
    new = Path(tmp).read_text(encoding="utf-8")
    if rc != 0:
        raise BadInputError(f"editor exited with {rc}; {path} unchanged, your edit is in {tmp}")
    try:
        _pin_check()(scope_from_text(scope, path, new))
    except BadInputError as exc:
        raise BadInputError(f"{exc}; {path} unchanged, your edit is in {tmp}") from None
    if new != old:
        atomic_write_text(path, new)
        err(f"{path} written")
    os.unlink(tmp)


@config_app.command("schema")
@boundary
def schema() -> None:
    """Print the JSON schema of a scope file (docs/config.schema.json)."""
    from advisor.config.schema import json_schema

    out(json.dumps(json_schema(), indent=2, sort_keys=True) + "\n")


@boundary
def explain(name: str = typer.Argument(..., metavar="NAME", help="Setting name, e.g. "
                                       "MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD.",
                                       autocompletion=complete.settings),
            profile: Optional[Path] = common.ProfileOpt, json_: bool = common.JsonOpt,
            all_: bool = typer.Option(False, "--all", help="As 'emit --all': default-confirming "
                                      "settings count as written.")) -> None:
    """Why a setting has the value emit writes: each scope's contribution (file and line),
    then the evidence and verify verdict behind the advice."""
    from advisor.config.apply import apply_config, knob_entries
    from advisor.config.explain import explain as build
    from advisor.plugins import collect

    cfg = common.load_config()
    reg = collect(common.plugin_manager(cfg))
    prof = common.load(profile)
    knobs = knob_entries(reg)
    applied = apply_config(prof, cfg, knobs, reg.libraries)
    for note in applied.notes:
        warn(note)
    ex = build(name, prof, applied.profile, cfg, knobs, include_defaults=all_,
               libraries=reg.libraries)
    if json_:
        out(json.dumps(ex.to_json(), indent=2) + "\n")
        return
    lines = [f"{ex.name} = {ex.value}" if ex.value is not None else f"{ex.name}: (not written)",
             f"  {ex.status}", "scopes (lowest first):"]
    lines += [f"  {r.scope:<8} {r.where}: {r.says}" for r in ex.scopes]
    lines.append("advice:" if ex.advice else "advice: none in the profile")
    for a in ex.advice:
        default = f", library default {a.default}" if a.default is not None else ""
        confirms = " (confirms the default)" if a.is_default else ""
        lines.append(f"  {a.probe}/{a.recommendation}: {a.value}{confirms}{default}; "
                     f"confidence {a.confidence}")
        lines.append(f"    {a.title}")
        lines += [f"    rationale: {line}" for line in a.rationale.strip().splitlines()[:6]]
        for ev_id, desc in a.evidence:
            lines.append(f"    evidence {ev_id}: {desc}")
        lines.append(f"    verify: {a.verdict}" + (f" ({a.verdict_detail})"
                                                   if a.verdict_detail else "")
                     if a.verdict else "    verify: not verified")
    out(printable("\n".join(lines), keep_newlines=True) + "\n")
