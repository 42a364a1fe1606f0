"""Reading, locating and merging scopes (advisor.config.scopes, advisor.config.locate)."""

from __future__ import annotations

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib


import pytest

from advisor.config.locate import key_lines
from advisor.config.scopes import load_config, read_scope_file, scope_path
from advisor.errors import BadInputError

SITE = """\
# site policy
[settings.pin]
# a comment between
MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD = 16384
GLIBC_TUNABLES = { value = "glibc.malloc.hugetlb=1", reason = "THP" }

[settings.exclude]
"host.QuickPool.alignment" = "no Umpire here"

[recommendations]
accept = [
  "mpich-cma:cma-threshold",
  "host-buffer:glibc-malloc-hugetlb",
]

[plugins]
disable = ["openmpi"]

[fleet]
k = 4.5
"""


def test_every_key_gets_its_line():
    lines = key_lines(SITE, tomllib.loads(SITE))
    assert lines[("settings", "pin", "MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD")] == 4
    assert lines[("settings", "pin", "GLIBC_TUNABLES")] == 5
    assert lines[("settings", "exclude", "host.QuickPool.alignment")] == 8
    assert lines[("recommendations", "accept", 0)] == 12
    assert lines[("recommendations", "accept", 1)] == 13
    assert lines[("fleet", "k")] == 20
    assert lines[("settings", "pin")] == 4  # a table: its first key


def test_dotted_keys_and_out_of_order_tables_are_located():
    text = 'launcher.command = "srun -n {nprocs}"\n[fleet]\nk = 3\n[store]\nprofiles = "/p"\n' \
           '[fleet.x]\n'
    data = {"launcher": {"command": "srun -n {nprocs}"}, "fleet": {"k": 3}}
    lines = key_lines(text, data)
    assert lines[("launcher", "command")] == 1 and lines[("fleet", "k")] == 3


def test_scopes_merge_like_spack(scopes):
    site, user = scopes
    site.parent.mkdir(parents=True)
    site.write_text(SITE)
    user.parent.mkdir(parents=True)
    user.write_text('[settings.pin]\nMPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD = 32768\n'
                    '[settings.exclude]\n"host.QuickPool.alignment" = false\n'
                    '[plugins]\ndisable = ["mpich-cma", "openmpi"]\n')
    cfg = load_config(environ={"ADVISOR_SITE_CONFIG": str(site),
                               "ADVISOR_USER_CONFIG": str(user),
                               "ADVISOR_LAUNCHER": "srun -n {nprocs}"})
    m = cfg.model
    assert m.settings.pin["MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD"] == 32768  # user over site
    assert m.settings.pin["GLIBC_TUNABLES"].reason == "THP"  # kept from site
    assert m.settings.exclude["host.QuickPool.alignment"] is False  # lifted by user
    assert m.plugins.disable == ["mpich-cma", "openmpi"]  # higher first, no duplicates
    assert m.fleet.k == 4.5  # site over the built-in 6.0
    assert m.launcher.command == "srun -n {nprocs}"
    assert cfg.where(("launcher", "command")) == "$ADVISOR_LAUNCHER"
    assert cfg.where(("settings", "pin", "MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD")) == f"{user}:2"
    assert [s.name for s, _, _ in cfg.contributions(("fleet", "k"))] == ["defaults", "site"]


def test_site_config_may_name_a_directory(tmp_path):
    (tmp_path / "config.toml").write_text("[fleet]\nk = 2\n")
    assert scope_path("site", {"ADVISOR_SITE_CONFIG": str(tmp_path)}) == tmp_path / "config.toml"
    assert scope_path("site", {}).as_posix() == "/etc/advisor/config.toml"


@pytest.mark.parametrize("text, expect", [
    ("[settings]\npinn = {}\n", ":2: key 'settings.pinn': unknown key"),
    ("\n[fleet]\nk = \"six\"\n", ":3: key 'fleet.k': Input should be a valid number"),
    ("[fleet]\nk = -1\n", ":2: key 'fleet.k': Input should be greater than 0"),
    ("[recommendations]\naccept = [1]\n", ":2: key 'recommendations.accept.0'"),
    ("[fleet\n", ": malformed TOML: "),
])
def test_bad_scope_file_is_one_line_with_file_key_and_line(tmp_path, text, expect):
    p = tmp_path / "config.toml"
    p.write_text(text)
    with pytest.raises(BadInputError) as exc:
        read_scope_file("site", p)
    msg = str(exc.value)
    assert msg.startswith(str(p)) and expect in msg and "\n" not in msg, msg
