"""The built-in output formats, registered through the same hook a third-party plugin uses.

``advisor.plugins.BUILTIN_HOOK_MODULES`` names this module, so every plugin manager registers it.
"""

from __future__ import annotations

import advisor
from advisor.emit import data, modules, packaging_formats, shells

ENV = ("env",)
ALL = ("env", "config")

#: (name, render, description, file extension, setting kinds written), in the order
#: ``advisor emit --list`` shows.  Config settings (library arguments set in code or a config
#: file, e.g. Umpire's QuickPool alignment) have no environment form: only the data formats
#: carry them.
FORMATS = (
    ("env", shells.render_sh, "POSIX sh to source (sh, dash, bash, ksh, zsh)", "sh", ENV),
    ("csh", shells.render_csh, "csh / tcsh to source", "csh", ENV),
    ("fish", shells.render_fish, "fish to source", "fish", ENV),
    ("lmod", modules.render_lmod, "Lmod modulefile (Lua)", "lua", ENV),
    ("tcl", modules.render_tcl, "Environment Modules modulefile (Tcl)", "", ENV),
    ("spack", packaging_formats.render_spack,
     "Spack environment env_vars.yaml (include from spack.yaml)", "yaml", ENV),
    ("easybuild", packaging_formats.render_easybuild,
     "EasyBuild easyconfig modextravars", "eb", ENV),
    ("toml", data.render_toml, "the selected settings as TOML", "toml", ALL),
    ("json", data.render_json, "the selected settings as JSON", "json", ALL),
)


@advisor.hookimpl
def advisor_register_emitters(register):
    """Register every built-in format."""
    for name, render, description, extension, kinds in FORMATS:
        register(name, render, description=description, extension=extension, kinds=kinds)
