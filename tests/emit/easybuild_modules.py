"""Turn an ``advisor emit --format easybuild`` fragment into the modules EasyBuild itself writes.

Usage: ``python easybuild_modules.py FRAGMENT OUTDIR``

The fragment is read inside a minimal easyconfig by EasyBuild's own ``EasyConfigParser``; the
``modextravars`` dict it yields goes through ``ModuleGeneratorLua.set_environment`` and
``ModuleGeneratorTcl.set_environment``, as ``EasyBlock.make_module_extra`` does for
``modextravars``.  Writes ``OUTDIR/lua/advisor.lua`` and ``OUTDIR/tcl/advisor``, and prints
the parsed dict as JSON on stdout.  Run in a subprocess: EasyBuild's configuration is global.
Needs ``LMOD_CMD`` (EasyBuild checks for a modules tool) and a writable ``HOME``.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

EASYCONFIG_HEAD = """easyblock = 'Bundle'
name = 'advisor-site'
version = '1'
homepage = 'https://example.org'
description = 'runtime settings from hpc-advisor'
toolchain = SYSTEM
"""


def main(fragment: str, outdir: str) -> None:
    from easybuild.tools.options import set_up_configuration

    out = Path(outdir)
    args = [f"--prefix={out / 'eb-prefix'}", "--modules-tool=Lmod"]
    if os.geteuid() == 0:
        args.append("--allow-use-as-root-and-accept-consequences")
    set_up_configuration(args=args, silent=True)

    from easybuild.framework.easyconfig.parser import EasyConfigParser
    from easybuild.tools.module_generator import ModuleGeneratorLua, ModuleGeneratorTcl

    text = EASYCONFIG_HEAD + Path(fragment).read_text(encoding="utf-8")
    extra = EasyConfigParser(rawcontent=text).get_config_dict()["modextravars"]
    for gen, rel, head in ((ModuleGeneratorLua, "lua/advisor.lua", ""),
                           (ModuleGeneratorTcl, "tcl/advisor", "#%Module\n")):
        g = gen(None)
        body = "".join(g.set_environment(k, v) for k, v in sorted(extra.items()))
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(head + body, encoding="utf-8")
    sys.stdout.write(json.dumps(extra))


if __name__ == "__main__":
    main(*sys.argv[1:3])
