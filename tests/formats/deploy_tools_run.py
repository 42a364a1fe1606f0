"""Load an emitted file with the real tool, in a fresh process (EasyBuild's configuration and
ReFrame's runtime are process-global), and print what the tool loaded as JSON on stdout.

Usage:
  ``python deploy_tools_run.py easybuild HOOKS.py WORKDIR NAME=VERSION...``
      EasyBuild 5: ``set_up_configuration(--hooks=HOOKS.py)``, ``load_hooks`` (the hook names
      it found), then a real ``EasyConfig`` of a minimal easyconfig file per software name and
      version written in WORKDIR; EasyBuild runs the parse hook while parsing it.  Prints
      ``{"hooks": [...], "modextravars": {"NAME-VERSION": {...}}}``.  ``extra_options={}``: the
      framework alone ships no easyblocks, and the parse hook does not depend on one.  Needs
      ``LMOD_CMD``.
  ``python deploy_tools_run.py reframe SNIPPET.py WORKDIR``
      ReFrame: writes WORKDIR/settings.py, a site configuration importing the snippet, loads
      it with ``reframe.core.config.load_config``, selects ``advisor-test:cpu`` and prints the
      partition's ``env_vars`` as ReFrame resolved them, the job-script lines ReFrame emits
      for them (``reframe.core.runtime.emit_loadenv_commands``), and the snippet's
      ``reference`` with ReFrame's verdicts on it: an instance of the type
      ``RegressionTest.reference`` takes, and ``assert_reference(value, value, lower, upper)``
      (ReFrame's own threshold checks) passing for each entry.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

#: A minimal easyconfig; the framework's own EasyBlock is enough for ``eb --module-only`` and
#: ``eb -x`` (tests/formats/test_easybuild_hooks.py).
EASYCONFIG = """easyblock = 'easybuild.framework.easyblock.EasyBlock'
name = {name!r}
version = {version!r}
homepage = 'https://example.org'
description = 'minimal easyconfig for the hooks test'
toolchain = SYSTEM
modextravars = {{'SITE_OWN_VARIABLE': 'kept'}}
"""

SITE_CONFIG = """import importlib.util

_spec = importlib.util.spec_from_file_location("advisor_partition", {snippet!r})
advisor_partition = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(advisor_partition)

site_configuration = {{
    "systems": [{{
        "name": "advisor-test",
        "descr": "hpc-advisor test system",
        "hostnames": [".*"],
        "partitions": [{{
            "name": "cpu",
            "scheduler": "local",
            "launcher": "local",
            "environs": ["builtin"],
            "env_vars": advisor_partition.env_vars,
        }}],
    }}],
    "environments": [{{"name": "builtin", "cc": "cc", "cxx": "", "ftn": ""}}],
}}
"""


def easybuild(hooks: str, workdir: str, *software: str) -> dict:
    from easybuild.tools.options import set_up_configuration

    work = Path(workdir)
    args = [f"--prefix={work / 'eb-prefix'}", "--modules-tool=Lmod", f"--hooks={hooks}"]
    if os.geteuid() == 0:
        args.append("--allow-use-as-root-and-accept-consequences")
    set_up_configuration(args=args, silent=True)

    from easybuild.framework.easyconfig.easyconfig import EasyConfig
    from easybuild.tools.hooks import load_hooks

    found = sorted(load_hooks(hooks))
    extra = {}
    for spec in software:
        name, version = spec.split("=", 1)
        path = work / f"{name}-{version}.eb"
        path.write_text(EASYCONFIG.format(name=name, version=version), encoding="utf-8")
        extra[f"{name}-{version}"] = dict(EasyConfig(str(path), extra_options={})["modextravars"])
    return {"hooks": found, "modextravars": extra}


def reframe(snippet: str, workdir: str) -> dict:
    import importlib.util

    import reframe.utility.sanity as sn
    import reframe.utility.typecheck as typ
    import reframe.core.config as config
    import reframe.core.runtime as rt

    cfg = Path(workdir) / "settings.py"
    cfg.write_text(SITE_CONFIG.format(snippet=str(Path(snippet).resolve())), encoding="utf-8")
    site = config.load_config(str(cfg))
    site.select_subconfig("advisor-test:cpu")
    site.validate()
    env_vars = site.get("systems/0/partitions/0/env_vars")
    rt.init_runtime(site)
    part = next(p for p in rt.runtime().system.partitions if p.name == "cpu")
    commands = rt.emit_loadenv_commands(part.local_env)
    spec = importlib.util.spec_from_file_location("advisor_snippet", snippet)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    # the type RegressionTest.reference accepts for (value, lower, upper, unit) tuples
    ref_type = typ.Dict[str, typ.Dict[str, typ.Tuple[object, object, object, object]]]
    within = {name: bool(sn.evaluate(sn.assert_reference(val, val, lo, hi)))
              for name, (val, lo, hi, _unit) in mod.reference.get("*", {}).items()}
    return {"env_vars": env_vars, "partition_env_vars": dict(part.local_env.env_vars),
            "commands": commands, "reference": mod.reference,
            "reference_type_ok": isinstance(mod.reference, ref_type),
            "reference_accepted": within}


if __name__ == "__main__":
    what, *rest = sys.argv[1:]
    out = easybuild(*rest) if what == "easybuild" else reframe(*rest)
    sys.stdout.write(json.dumps(out))
