"""``advisor config get|set|edit|list|schema`` on real scope files, in real processes, and the
committed JSON schema kept equal to the pydantic model."""

from __future__ import annotations

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

import json
import shlex
import sys

import jsonschema

from advisor.config.schema import json_schema
from config_support import advisor
from support import REPO, SHIPPED_PROFILE

USER = """\
# my settings: keep this comment
[launcher]
command = "srun -n {nprocs}"   # our launcher

[fleet]
k = 5.0
"""


def test_committed_json_schema_is_fresh():
    committed = json.loads((REPO / "docs" / "config.schema.json").read_text())
    assert committed == json_schema(), ("docs/config.schema.json is stale: run "
                                        "'advisor config schema > docs/config.schema.json'")


def test_json_schema_accepts_the_docs_example_and_refuses_unknown_keys():
    schema = json_schema()
    doc = (REPO / "docs" / "config.md").read_text()
    example = doc.split("```toml\n", 1)[1].split("```", 1)[0]
    jsonschema.validate(tomllib.loads(example), schema)
    try:
        jsonschema.validate({"settings": {"pinn": {}}}, schema)
    except jsonschema.ValidationError:
        pass
    else:
        raise AssertionError("unknown key accepted by the JSON schema")


def test_set_keeps_comments_and_layout(scopes):
    _, user = scopes
    user.parent.mkdir(parents=True)
    user.write_text(USER)
    r = advisor("config", "set", "settings.pin.MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD", "16384")
    assert r.returncode == 0, r.stderr
    r = advisor("config", "set", "fleet.k", "4")
    assert r.returncode == 0, r.stderr
    text = user.read_text()
    assert text.startswith(USER.replace("k = 5.0", "k = 4"))  # every other byte kept
    assert "[settings.pin]\nMPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD = 16384\n" in text
    got = advisor("config", "get", "fleet.k")
    assert got.stdout == "4\n" and f"{user}:6" in got.stderr


def test_set_refuses_a_bad_value_and_leaves_the_file(scopes):
    _, user = scopes
    user.parent.mkdir(parents=True)
    user.write_text(USER)
    for key, value, expect in (("fleet.k", "many", "key 'fleet.k': Input should be a valid "
                                "number"),
                               ("fleet.kk", "1", "key 'fleet.kk': unknown key"),
                               # a pin emit would refuse is refused here, before writing
                               ("settings.pin.MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD", "16k",
                                "is not a number mpich reads"),
                               ("settings.pin.NOT_A_KNOB", "3", "a pin must name a knob")):
        r = advisor("config", "set", key, value)
        assert r.returncode == 2 and f"{user}:" in r.stderr and expect in r.stderr, r.stderr
        assert user.read_text() == USER
    r = advisor("config", "set", "fleet.k", "1", "--scope", "env")
    assert r.returncode == 2 and "only a file scope" in r.stderr


def test_list_shows_each_key_with_its_origin(scopes):
    site, user = scopes
    site.parent.mkdir(parents=True)
    site.write_text('[plugins]\ndisable = ["openmpi"]\n')
    user.parent.mkdir(parents=True)
    user.write_text(USER)
    r = advisor("config", "list", env={"ADVISOR_DISABLE_PLUGINS": "mpich-cma"})
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert f'launcher.command = "srun -n {{nprocs}}"  # {user}:3' in lines
    assert f"fleet.k = 5.0  # {user}:6" in lines
    assert 'plugins.disable = ["mpich-cma", "openmpi"]  # $ADVISOR_DISABLE_PLUGINS' in lines
    only = advisor("config", "list", "--scope", "site").stdout
    assert only == f'plugins.disable = ["openmpi"]  # {site}:2\n'


def test_edit_uses_the_editor_and_keeps_a_bad_edit_aside(scopes):
    _, user = scopes
    user.parent.mkdir(parents=True)
    user.write_text(USER)
    sed = "sed -i -e s/k\\ =\\ 5.0/k\\ =\\ 7.5/"
    r = advisor("config", "edit", env={"EDITOR": sed, "VISUAL": ""})
    assert r.returncode == 0, r.stderr
    assert user.read_text() == USER.replace("k = 5.0", "k = 7.5")
    bad = "sed -i -e s/k\\ =\\ 7.5/k\\ =\\ \\'x\\'/"
    r = advisor("config", "edit", env={"EDITOR": bad, "VISUAL": ""})
    assert r.returncode == 2 and f"{user}:6: key 'fleet.k'" in r.stderr, r.stderr
    assert user.read_text() == USER.replace("k = 5.0", "k = 7.5")  # unchanged
    kept = r.stderr.rsplit("your edit is in ", 1)[1].strip()
    assert "k = 'x'" in open(kept).read()


def test_store_and_launcher_come_from_the_scopes(scopes, tmp_path, monkeypatch):
    from advisor.cli import common
    from advisor.profile import default_profile_path

    site, _ = scopes
    store = tmp_path / "store"
    store.mkdir()
    (store / default_profile_path().name).write_bytes(SHIPPED_PROFILE.read_bytes())
    site.parent.mkdir(parents=True)
    site.write_text(f'[store]\nprofiles = "{store}"\n[launcher]\n'
                    f'command = "{sys.executable} -c pass -n {{nprocs}}"\n')
    r = advisor("emit")  # ADVISOR_HOME (env scope) wins over the site's store
    assert r.returncode == 2 and f"{tmp_path / 'home' / 'profiles'}" in r.stderr, r.stderr
    monkeypatch.delenv("ADVISOR_HOME")
    r = advisor("emit")  # no --profile: this host's profile in [store] profiles
    assert r.returncode == 0 and "GLIBC_TUNABLES" in r.stdout, r.stderr
    assert common.launcher_argv(None) == shlex.split(f"{sys.executable} -c pass -n {{nprocs}}")
    monkeypatch.setenv("ADVISOR_LAUNCHER", "srun -n {nprocs}")  # env over site
    assert common.launcher_argv(None) == ["srun", "-n", "{nprocs}"]
    assert common.launcher_argv("mpiexec -n 2") == ["mpiexec", "-n", "2"]  # cli over all


def test_set_pin_with_a_reason_keeps_it_where_pins_are_shown(scopes):
    _, user = scopes
    user.parent.mkdir(parents=True)
    user.write_text(USER)
    name = "MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD"
    r = advisor("config", "set", f"settings.pin.{name}", "16384", "--reason", "ticket 42: CMA off")
    assert r.returncode == 0, r.stderr
    text = user.read_text()
    assert text.startswith(USER)  # the rest of the file kept
    assert tomllib.loads(text)["settings"]["pin"][name] == {"value": 16384,
                                                            "reason": "ticket 42: CMA off"}
    lines = advisor("config", "list").stdout.splitlines()
    assert any(ln.startswith(f'settings.pin.{name}.reason = "ticket 42: CMA off"  # {user}:')
               for ln in lines), lines
    shown = advisor("explain", name, "-p", f"@{SHIPPED_PROFILE.stem}")
    assert shown.returncode == 0 and "ticket 42: CMA off" in shown.stdout, shown.stderr
    emitted = advisor("emit", "-p", f"@{SHIPPED_PROFILE.stem}").stdout
    assert f"{name}='16384'" in emitted and "ticket 42: CMA off" in emitted
    # a new reason replaces the old, and the pin's library (set by hand) is kept
    user.write_text(text.replace('reason = "ticket 42: CMA off"',
                                 'library = "mpich", reason = "old"'))
    r = advisor("config", "set", f"settings.pin.{name}", "8192", "--reason", "new")
    assert r.returncode == 0, r.stderr
    assert tomllib.loads(user.read_text())["settings"]["pin"][name] == {
        "value": 8192, "library": "mpich", "reason": "new"}


def test_reason_goes_with_a_pin_only(scopes):
    _, user = scopes
    user.parent.mkdir(parents=True)
    user.write_text(USER)
    r = advisor("config", "set", "launcher.command", "srun", "--reason", "why")
    assert r.returncode == 2 and "--reason: launcher.command is not a pin" in r.stderr, r.stderr
    assert user.read_text() == USER
