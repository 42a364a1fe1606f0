"""The built-in output formats, registered through the same hook a third-party plugin uses.

``advisor.plugins.BUILTIN_HOOK_MODULES`` names this module, so every plugin manager registers it.
"""

from __future__ import annotations

import advisor
from advisor.emit import data, modules, packaging_formats, shells

#: (name, render, description, file extension), in the order ``advisor emit --list`` shows.
FORMATS = (
    ("env", shells.render_sh, "POSIX sh to source (sh, dash, bash, ksh, zsh)", "sh"),
    ("csh", shells.render_csh, "csh / tcsh to source", "csh"),
    ("fish", shells.render_fish, "fish to source", "fish"),
    ("lmod", modules.render_lmod, "Lmod modulefile (Lua)", "lua"),
    ("tcl", modules.render_tcl, "Environment Modules modulefile (Tcl)", ""),
    ("spack", packaging_formats.render_spack,
     "Spack environment env_vars.yaml (include from spack.yaml)", "yaml"),
    ("easybuild", packaging_formats.render_easybuild,
     "EasyBuild easyconfig modextravars", "eb"),
    ("toml", data.render_toml, "the selected settings as TOML", "toml"),
    ("json", data.render_json, "the selected settings as JSON", "json"),
)


@advisor.hookimpl
def advisor_register_emitters(register):
    """Register every built-in format."""
    for name, render, description, extension in FORMATS:
        register(name, render, description=description, extension=extension)
