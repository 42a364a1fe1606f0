"""The built-in output formats, registered through the same hook a third-party plugin uses.

``advisor.plugins.BUILTIN_HOOK_MODULES`` names this module, so every plugin manager registers it.
Each format is a module of :mod:`advisor.formats` (``render``; ``parse`` unless write-only;
``notes`` when it has something to say on stderr); an alias
(``sh`` for ``env``) is registered as a second name for the same functions.
"""

from __future__ import annotations

import advisor
from advisor.formats import builtin_modules, kinds_of


@advisor.hookimpl
def advisor_register_emitters(register):
    """Register every built-in format (and its aliases), with its parser."""
    for mod in builtin_modules():
        kinds = kinds_of(mod)
        for name in (mod.NAME, *getattr(mod, "ALIASES", ())):
            desc = mod.DESCRIPTION if name == mod.NAME else f"alias of {mod.NAME}"
            register(name, mod.render, description=desc, extension=mod.EXTENSION, kinds=kinds,
                     parse=getattr(mod, "parse", None), notes=getattr(mod, "notes", None))
