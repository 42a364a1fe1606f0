"""What a modulefile says about itself: the help text, the whatis lines and the family, shared by
the ``lmod`` and ``tcl`` formats.

- help (Lmod ``help([[...]])``, Environment Modules ``proc ModulesHelp``), what users see:
  the machine, the MPI module to load (:mod:`advisor.formats.moddeps`), one line per variable
  the module sets with its value and the one-line why of each recommendation behind it (its
  title; ``--no-comments`` drops them), and how to check them (``printenv``, ``advisor lint
  --env``, ``advisor show``, ``advisor explain``).  What administrators do (re-probe,
  regenerate, deploy) and what was left out are comments of the file
  (``moddeps.admin_lines``, the left-out comment), never in the help;
- whatis (Lmod ``whatis``, ``module-whatis``; ``module whatis``/``module spider`` show them):
  a description, the machine class (``advisor.machine_class.class_id``: the class a fleet
  report groups nodes by), the date the profile was made, and the names the module sets;
- family :data:`FAMILY`: loading a second hpc-advisor module (another partition's or another
  date's settings) replaces the first instead of stacking two sets of the same variables whose
  unload would remove each other's.  A ``conflict`` would need the other modules' names, which
  the site chooses (one file per partition, per date); a family needs none.  Lmod swaps
  automatically (``LMOD_AUTO_SWAP``, on by default; Lmod documentation "Lua Modulefile
  Functions": ``family``); Environment Modules >= 5.1 has ``family`` too (modulefile(5)).

Every line is :func:`advisor.specs.writing.one_line` text: no control characters, no braces
or backslashes (Tcl counts braces inside the ``ModulesHelp`` body), so profile text is data in
either language, never code.
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING, Sequence

from advisor.specs.writing import EnvItem, first_sentence, one_line

if TYPE_CHECKING:  # pragma: no cover
    from advisor.specs.selection import Selection
    from advisor.models import Profile

#: The module family of every hpc-advisor module.  Environment Modules 5.2 accepts only
#: ``[A-Za-z0-9_]`` in a family name (``proc family`` in modulecmd.tcl), and Lmod exports it as
#: ``LMOD_FAMILY_HPC_ADVISOR``, so no ``-``.
FAMILY = "hpc_advisor"


def machine_line(profile: "Profile") -> str:
    """``machine class CLASS (host H, fingerprint F)``."""
    from advisor.machine_class import class_id

    prov = profile.provenance
    host = prov.hostname or profile.facts.hostname or "unknown host"
    return one_line(f"machine class {class_id(profile.facts)} (host {host}, "
                    f"fingerprint {profile.fingerprint})")


def whatis_lines(profile: "Profile", items: Sequence[EnvItem]) -> list[str]:
    """The whatis texts (see the module docstring), without the language's quoting."""
    return [
        "Description: runtime settings measured by hpc-advisor",
        one_line(f"Machine: {machine_line(profile)}"),
        one_line(f"Date: {profile.provenance.created} (profile made)"),
        one_line(f"Sets: {', '.join(item.name for item in items)}"),
    ]


def _row(command: str, what: str) -> str:
    """One line of "To check them": the command, then what it shows from column 25."""
    command = one_line(command)
    return f"  {command:<23}{what}" if len(command) < 23 else f"  {command}   {what}"


def help_lines(sel: "Selection", items: Sequence[EnvItem],
               mpis: Sequence[tuple[str, str]] = ()) -> list[str]:
    """The help text users see, one line per element (see the module docstring)."""
    from advisor.formats.moddeps import user_line

    profile = sel.profile
    lines = [one_line(f"Runtime settings measured by hpc-advisor on {machine_line(profile)}; "
                      f"profile made {profile.provenance.created}.")]
    need = user_line(sel, mpis)
    lines += [one_line(need)] if need else []
    lines += ["", "This module sets:"]
    for item in items:
        whys: list[str] = []
        for src in item.sources if sel.comments else ():  # --no-comments: no rationale
            why = first_sentence(src.rationale)
            if why not in whys:
                whys.append(why)
        lines.append("  " + one_line(f"{item.name}={item.value}"
                                     + (f" ({'; '.join(whys)})" if whys else "")))
    # the profile the module was made from: a user's own default is this host's profile,
    # which a user rarely has (a new user's finding: 'advisor show' failed from the help)
    from advisor.formats.moddeps import profile_word

    word = profile_word(sel.source) if sel.source else ""
    prof = f" -p {shlex.quote(word)}" if word else ""
    lines += ["", "To check them:",
              "  printenv NAME          the value your shell has",
              "  advisor lint --env     the settings of your environment, checked",
              _row(f"advisor show{prof}", "the measurements behind them"),
              _row(f"advisor explain NAME{prof}", "where a value comes from and its evidence")]
    if word and not word.startswith("@"):
        lines.append("  (the profile this module was made from; your site may keep it elsewhere)")
    return lines
