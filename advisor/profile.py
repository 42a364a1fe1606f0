"""Read, validate and serialise profiles (``profile_to_toml``); writing them is ``advisor.save``.

A profile is one TOML file (schema in ``advisor.models.Profile``).  Reading never changes the
file; writing (``advisor.save``, which imports this module) is atomic and serialised by a lock file, so a
reader sees either the previous profile or the complete new one, never a torn file; a save that
fails is rescued to a temporary file (``save_or_rescue``).

The default store is ``$ADVISOR_HOME/profiles/<host>.toml`` (``ADVISOR_HOME`` defaults to the
platformdirs user data directory of ``hpc-advisor``): one profile per machine, named by host.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any, Callable, Optional

from advisor.errors import ProfileError

#: Larger files are refused before parsing: a real profile is tens of KiB; this bound keeps a
#: hostile or wrong file (a core dump, a log) from being read into memory.  Chosen as 100x the
#: largest profile the full probe writes here (about 160 KiB).
MAX_PROFILE_BYTES = 16 * 1024 * 1024


def advisor_home() -> Path:
    """``$ADVISOR_HOME`` or the platformdirs user data directory for hpc-advisor."""
    env = os.environ.get("ADVISOR_HOME")
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_data_dir("hpc-advisor", appauthor=False))


def default_profile_path(host: Optional[str] = None) -> Path:
    """Where ``advisor probe`` writes and other commands read when no ``--profile`` is given."""
    host = host or socket.gethostname() or "localhost"
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in host).lstrip(".") or "localhost"
    return advisor_home() / "profiles" / f"{safe}.toml"


def _loc(loc: tuple) -> str:
    """A key path for a one-line message: control characters in a key (a hostile profile's
    ``"\\n"``) are written as escapes, so the message stays one line."""
    def part(p: Any) -> str:
        text = str(p)
        return text if text.isprintable() else text.encode("unicode_escape").decode("ascii")

    return ".".join(part(p) for p in loc) if loc else "(top level)"


def _read_mapping(path: Path) -> dict[str, Any]:
    from advisor.textfile import read_text_file

    text = read_text_file(path, kind="profile", max_bytes=MAX_PROFILE_BYTES, error=ProfileError,
                          allow_empty=False)
    return _parse_mapping(text, str(path))


#: Line starts of the files ``advisor emit`` writes for shells and module systems: a profile
#: given one of them is told what it was given (a new user passed ``site.sh`` as ``-p``).
EMITTED_LINE_STARTS = ("export ", "setenv ", "set -gx ", "#!", "setenv(", "prepend_path(",
                       "module-whatis", "#%Module")


def _parse_mapping(text: str, source: str) -> dict[str, Any]:
    from advisor.nesting import load_toml

    try:
        return load_toml(text, source, error=ProfileError)
    except ProfileError as exc:
        if "malformed TOML" in str(exc) and any(
                ln.lstrip().startswith(EMITTED_LINE_STARTS) for ln in text.splitlines()[:50]):
            raise ProfileError(f"{exc}; it looks like a file 'advisor emit' writes, not a "
                               "profile (give the TOML file 'advisor probe -o' wrote)") from None
        raise


def profile_from_text(text: str, *, source: str = "<profile>"):
    """Parse and validate profile TOML ``text`` (as read by ``load_profile``); ``source`` names
    it in messages.

    :raises ProfileError: malformed TOML, or as ``profile_from_mapping``.
    """
    return profile_from_mapping(_parse_mapping(text, source), source=source)


def profile_from_mapping(data: dict[str, Any], *, source: str = "<profile>"):
    """Validate a parsed mapping as a Profile (migrating older schema versions).

    :raises ProfileError: naming ``source`` and the first offending key.
    """
    from pydantic import ValidationError

    from advisor.models import SCHEMA_VERSION, Profile

    if not isinstance(data, dict):
        raise ProfileError(f"{source}: not a table")
    version = data.get("schema_version")
    if version is None:
        raise ProfileError(f"{source}: key 'schema_version': missing (not an hpc-advisor profile?)")
    if not isinstance(version, int) or isinstance(version, bool):
        raise ProfileError(f"{source}: key 'schema_version': must be an integer, got {version!r}")
    if version > SCHEMA_VERSION:
        raise ProfileError(f"{source}: key 'schema_version': profile needs schema {version}, this "
                           f"advisor reads up to {SCHEMA_VERSION}; upgrade hpc-advisor")
    if version < 1:
        raise ProfileError(f"{source}: key 'schema_version': {version} is not a valid version "
                           f"(versions start at 1; this advisor reads 1 to {SCHEMA_VERSION})")
    data = migrate(data, version, source=source)
    try:
        return Profile.model_validate(data)
    except ValidationError as exc:
        raise ProfileError(f"{source}: {describe_validation_error(exc, data)}",
                           details=validation_details(exc)) from None


def _data_path(data: Any, loc: tuple) -> tuple:
    """The longest prefix of ``loc`` that addresses a value in ``data``: pydantic appends the
    member type of a union (``value.bool``, ``value.int``) after the real key."""
    node, out = data, []
    for part in loc:
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            node = node[part]
        else:
            break
        out.append(part)
    return tuple(out)


def _fields_at(loc: tuple) -> list[str]:
    """The keys the schema allows in the table at ``loc`` of a profile (field names of the
    model found by following ``loc`` from ``Profile``); [] where ``loc`` leaves the models."""
    import typing

    from pydantic import BaseModel

    from advisor.models import Profile

    def model_in(ann):
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            return ann
        for arg in typing.get_args(ann):
            m = model_in(arg)
            if m is not None:
                return m
        return None

    model = Profile
    for part in loc:
        if isinstance(part, int):
            continue  # an index into a list of the same model
        field = model.model_fields.get(part)
        model = model_in(field.annotation) if field is not None else None
        if model is None:
            return []
    return list(model.model_fields)


def _keys_at(data: Any, loc: tuple) -> set:
    node = data
    for part in loc:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return set()
    return set(node) if isinstance(node, dict) else set()


def validation_details(exc) -> tuple[str, ...]:
    """Every error of a pydantic ``ValidationError``, one ``key 'a.b': message`` line each."""
    return tuple(f"key '{_loc(tuple(e['loc']))}': {e['msg']}" for e in exc.errors())


def describe_validation_error(exc, data: Any) -> str:
    """One line for a pydantic ``ValidationError`` of ``data``: ``key 'a.b.0.c': what, got X``.

    An unknown key is reported before the missing keys it usually explains (a misspelling), with
    the closest missing name as a suggestion; a value that matches no member of a union (a
    setting's scalar ``value``) is reported at its own key with the member types listed.
    """
    import difflib

    errors = exc.errors()
    unknown = [e for e in errors if e["type"] == "extra_forbidden"]
    err = unknown[0] if unknown else errors[0]
    loc = tuple(err["loc"])
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    if err["type"] == "extra_forbidden":
        missing = [e["loc"][-1] for e in errors if e["type"] == "missing"
                   and tuple(e["loc"][:-1]) == loc[:-1] and isinstance(e["loc"][-1], str)]
        close = difflib.get_close_matches(str(loc[-1]), missing, n=1)
        if not close:  # an optional key misspelt: compare with every key the table takes
            known = [k for k in _fields_at(loc[:-1]) if k not in _keys_at(data, loc[:-1])]
            close = difflib.get_close_matches(str(loc[-1]), known, n=1)
            missing = []
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        # the missing key the misspelling explains is not another error
        others = len(errors) - 1 - (1 if close and close[0] in missing else 0)
        more = f" (and {others} more)" if others > 0 else ""
        return f"key '{_loc(loc)}': unknown key{hint}{more}"
    if err["type"] == "missing":
        return f"key '{_loc(loc)}': {err['msg']}{more}"
    path = _data_path(data, loc)
    shown = repr(err.get("input"))
    if len(shown) > 60:
        shown = shown[:57] + "..."
    if len(path) < len(loc):  # a union: list what each member wanted
        members = []
        for e in errors:
            el = tuple(e["loc"])
            if el[:len(path)] == path and len(el) > len(path) and str(el[len(path)]) not in members:
                members.append(str(el[len(path)]))
        same = sum(1 for e in errors if tuple(e["loc"])[:len(path)] == path)
        more = f" (and {len(errors) - same} more)" if len(errors) > same else ""
        return f"key '{_loc(path)}': must be one of {', '.join(members)}, got {shown}{more}"
    return f"key '{_loc(loc)}': {err['msg']}, got {shown}{more}"


#: Migration steps: ``MIGRATIONS[v](mapping) -> mapping`` brings a profile of schema ``v`` to
#: ``v + 1``.  Empty while version 1 is the only schema; a schema bump that renames or moves keys
#: adds its step here so older profiles keep loading.
MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {}


def migrate(data: dict[str, Any], version: int, *, source: str = "<profile>") -> dict[str, Any]:
    """Bring a mapping of schema ``version`` to the current schema, one ``MIGRATIONS`` step at a
    time (the input mapping is not modified).

    :raises ProfileError: no step leads from ``version`` onwards: the profile is too old for this
        advisor; the message names the version and says to re-run ``advisor probe``.
    """
    from advisor.models import SCHEMA_VERSION

    while version < SCHEMA_VERSION:
        step = MIGRATIONS.get(version)
        if step is None:
            raise ProfileError(f"{source}: key 'schema_version': profile has schema {version}, "
                               f"which this advisor (schema {SCHEMA_VERSION}) cannot migrate; "
                               f"re-run 'advisor probe' to make a new profile")
        data = dict(step(dict(data)))
        version += 1
        data["schema_version"] = version
    return data


def load_profile(path: Path | str):
    """Read and validate the profile at ``path``; the file is never modified.

    :raises ProfileError: missing, empty, too large, binary, malformed TOML, unknown key, wrong
        type, or a schema version newer than this advisor — the message names the file and key.
    """
    path = Path(path)
    return profile_from_mapping(_read_mapping(path), source=str(path))


def profile_to_toml(profile) -> str:
    """Serialise a Profile as TOML text (unknown values, i.e. None, are omitted)."""
    import tomli_w

    data = profile.model_dump(mode="json", exclude_none=True)
    return tomli_w.dumps(data)
