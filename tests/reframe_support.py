"""Helpers of the ReFrame tests: a minimal site configuration and environment, all in a
temporary directory (ReFrame's prefix, log and HOME), for ``reframe -C CFG -c TEST``."""

from __future__ import annotations

import os
from pathlib import Path

from support import REPO

#: A ReFrame site configuration (ReFrame 4 ``site_configuration``): one system matching this
#: host, its one partition running jobs here with the local scheduler, no modules system.
SITE_CONFIG = '''site_configuration = {{
    "systems": [{{
        "name": "advisor-test", "descr": "this host", "hostnames": [".*"],
        "partitions": [{{"name": "cpu", "descr": "this host", "scheduler": "local",
                         "launcher": "local", "environs": ["plain"], "max_jobs": 1}}],
    }}],
    "environments": [{{"name": "plain"}}],
    "logging": [{{"handlers": [{{"type": "file", "name": {log!r}, "level": "debug",
                               "format": "%(message)s", "append": False}}],
                 "handlers_perflog": []}}],
}}
'''


def site_config(tmp_path: Path) -> Path:
    """Write the site configuration into ``tmp_path`` (its log file there) and return it."""
    cfg = tmp_path / "reframe_settings.py"
    cfg.write_text(SITE_CONFIG.format(log=str(tmp_path / "reframe.log")), encoding="utf-8")
    return cfg


def reframe_env(tmp_path: Path) -> dict:
    """The environment of a ``reframe`` run: this checkout's advisor first on PYTHONPATH (the
    job script's ``advisor`` inherits it through the local scheduler), HOME in ``tmp_path``."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), str(REPO / "plugins"),
                                         env.get("PYTHONPATH", "")])
    env["HOME"] = str(tmp_path)
    env.pop("RFM_CONFIG_FILES", None)
    return env
