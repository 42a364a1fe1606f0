"""Whether a library reads a setting: the one version decision (:func:`drop_reason`) and the
value check (:func:`value_problem`), both judged by the library records and knob records the
caller passes (``Registry.libraries``, ``Registry.knobs``: plugin-registered ones included).

``advisor.emit.decide`` asks :func:`drop_reason` once per selected setting of an emit;
``advisor explain`` and ``advisor config`` ask it for the settings they show.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping, Optional, Sequence

from packaging.utils import canonicalize_name

from advisor.libraries import version_of
from advisor.libraries.record import ValueGrammar
from advisor.specs.entry import scalar_text

if TYPE_CHECKING:  # pragma: no cover
    from advisor.knobs import Knob
    from advisor.libraries.record import Library
    from advisor.models import Facts, Setting

__all__ = ["drop_reason", "value_problem"]


def drop_reason(setting: "Setting", facts: "Facts", knobs: Sequence["Knob"],
                libraries: Mapping[str, "Library"]) -> Optional[str]:
    """Why ``setting`` must not be emitted for a machine with ``facts``; None when it may.

    A setting is dropped when

    * its own ``versions`` PEP 440 specifier excludes the recorded library version
      (``advisor.libraries.version_of``);
    * a knob record of the same library and name (``knobs``) has a ``versions`` range that
      excludes it (knob version ranges filter emit, as docs/plugins.md says);
    * the library's name history (``Library.history``) says the recorded release does not read
      the name (renamed, removed, or added later), for the flavours the history covers;
    * its ``flavour`` differs from the library's recorded flavour (an HPE Cray MPICH name means
      nothing to upstream MPICH).

    An unparsable version or specifier counts as excluded (``advisor.knobs.version_in``).
    Unknown versions or flavours keep the setting.

    :return: one line starting with the setting's name (``NAME: valid for mpich >=4.2, ...``).
    """
    from advisor.knobs import version_in

    lib = libraries.get(canonicalize_name(setting.library))
    version = version_of(facts, setting.library, libraries)
    if version is not None:
        if setting.versions and not version_in(version, setting.versions):
            return (f"{setting.name}: valid for {setting.library} {setting.versions}, "
                    f"the profile records {setting.library} {version}")
        for k in knobs:
            if (k.name == setting.name and canonicalize_name(k.library) ==
                    canonicalize_name(setting.library) and k.versions
                    and not version_in(version, k.versions)):
                return (f"{setting.name}: its knob record says {setting.library} "
                        f"{k.versions}, the profile records {setting.library} {version}")
    flavour = lib.flavour(facts) if lib is not None else None
    if setting.flavour and flavour and setting.flavour.lower() != flavour.lower():
        return (f"{setting.name}: for the {setting.flavour} flavour of {setting.library}, "
                f"the profile records {flavour}")
    hist = lib.history if lib is not None else None
    rel = hist.release_of(version) if hist is not None else None
    if (hist is not None and rel is not None and setting.kind == "env"
            and (flavour is None or flavour in lib.catalogue_flavours)  # type: ignore[union-attr]
            and lib.owns(setting.name)):  # type: ignore[union-attr]
        fate = hist.fate(lib.canonical(setting.name), rel)  # type: ignore[union-attr]
        if fate is not None:
            what = {"renamed": f"renamed in {fate.release} to {fate.new}",
                    "removed": f"removed in {fate.release}",
                    "added": f"added only in {fate.release}"}[fate.kind]
            return (f"{setting.name}: not read by {setting.library} {version} ({what}; "
                    f"{setting.library} name history)")
    return None


def value_problem(setting: "Setting", knobs: Sequence["Knob"],
                  libraries: Mapping[str, "Library"]) -> Optional[str]:
    """Why the library cannot read ``setting``'s value, judged by the knob record that declares
    the name (type ``int``/``bytes``/``float`` through the library's value grammar,
    ``advisor.libraries.record.ValueGrammar``; ``bool``; ``enum`` against ``allowed``), or None.
    A list variable's items are left to lint.  Catches a hand-edited profile before a job does
    (MPICH aborts ``MPI_Init`` on a CVAR value it cannot parse: ``advisor.libraries.mpich``)."""
    if setting.separator:
        return None
    lib = canonicalize_name(setting.library)
    knob = next((k for k in knobs if canonicalize_name(k.library) == lib
                 and setting.name in (k.name, *k.aliases)), None)
    if knob is None:
        return None
    grammar = getattr(libraries.get(lib), "values", None) or ValueGrammar()
    text = scalar_text(setting.value)
    if knob.type in ("int", "bytes", "float") and grammar.number(text, knob.type) is None:
        return f"value {text!r} is not a number {setting.library} reads ({knob.type})"
    if knob.type == "bool" and not grammar.is_bool(text):
        return f"value {text!r} is not a boolean {setting.library} reads ({grammar.bool_text})"
    if knob.type == "enum" and knob.allowed and text not in {scalar_text(a) for a in knob.allowed}:
        return (f"value {text!r} is not one of {', '.join(scalar_text(a) for a in knob.allowed)}"
                f" ({setting.library})")
    return None
