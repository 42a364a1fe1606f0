"""Must show (issue 18): a site scope that pins one setting and excludes another changes what
``advisor emit`` writes, and ``advisor explain`` names the file and line of each, then the
evidence and verdict.  The real ``advisor`` runs in a process; a real bash sources the emitted
file."""

from __future__ import annotations

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

import json
import subprocess

from config_support import advisor
from support import SHIPPED_PROFILE, tool

PINNED = "MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD"  # confirms the default 8192 in the profile
EXCLUDED = "DLAF_UMPIRE_HOST_MEMORY_POOL_ALIGNMENT_BYTES"  # advised 2097152 in the profile
SITE = f"""\
# site policy of the test cluster
[settings.pin]
# single-copy from 16 KiB on our nodes
{PINNED} = {{ value = 16384, reason = "site benchmark" }}

[settings.exclude]
{EXCLUDED} = "DLA-Future is not deployed here"
"""


def _bash_env(script: str, names: list[str]) -> dict:
    """Source ``script`` in a real bash and return the named variables (unset: None)."""
    probe = "; ".join(f'printf "%s=%s\\n" {n} "${{{n}-<unset>}}"' for n in names)
    done = subprocess.run([tool("bash"), "--noprofile", "--norc", "-c",
                           f'source /dev/stdin <<"EOF_ADVISOR"\n{script}EOF_ADVISOR\n{probe}'],
                          capture_output=True, text=True, check=True, env={"PATH": "/usr/bin:/bin"})
    out = dict(line.split("=", 1) for line in done.stdout.splitlines())
    return {k: (None if v == "<unset>" else v) for k, v in out.items()}


def test_site_pin_and_exclude_change_emit_and_bash_sees_it(scopes):
    site, _ = scopes
    before = advisor("emit", "-p", str(SHIPPED_PROFILE))
    assert before.returncode == 0, before.stderr
    assert _bash_env(before.stdout, [PINNED, EXCLUDED]) == {PINNED: None, EXCLUDED: "2097152"}
    site.parent.mkdir(parents=True)
    site.write_text(SITE)
    after = advisor("emit", "-p", str(SHIPPED_PROFILE))
    assert after.returncode == 0, after.stderr
    assert _bash_env(after.stdout, [PINNED, EXCLUDED]) == {PINNED: "16384", EXCLUDED: None}
    assert f"pinned by {site}:4 (site benchmark)" in after.stdout
    # the file itself says what the site excluded, and where
    assert f"# left out: {EXCLUDED}=2097152 (excluded by {site}:7)" in after.stdout
    assert "Traceback" not in after.stderr


def test_explain_names_file_and_line_then_evidence_and_verdict(scopes):
    site, _ = scopes
    site.parent.mkdir(parents=True)
    site.write_text(SITE)
    pin = advisor("explain", PINNED, "-p", str(SHIPPED_PROFILE))
    assert pin.returncode == 0, pin.stderr
    text = pin.stdout
    assert text.startswith(f"{PINNED} = 16384\n")
    assert f"site     {site}:4: pin = 16384 (site benchmark)" in text
    assert "user" in text and "no file" in text  # every scope is accounted for
    assert "mpich-cma/cma-threshold: 8192 (confirms the default)" in text
    assert "evidence cma-sweep:" in text and "verify: no-effect" in text
    excl = advisor("explain", EXCLUDED, "-p", str(SHIPPED_PROFILE), "--json")
    assert excl.returncode == 0, excl.stderr
    data = json.loads(excl.stdout)
    assert data["value"] is None and data["status"] == f"not written: excluded by {site}:7"
    assert {"scope": "site", "where": f"{site}:7",
            "says": "exclude (DLA-Future is not deployed here)"} in data["scopes"]
    (adv,) = data["advice"]
    assert adv["recommendation"] == "host-pool-large-page-blocks" and adv["value"] == "2097152"
    assert adv["verdict"] == "not-measurable" and adv["evidence"][0][0] == "workload"


def test_user_scope_overrides_the_site_pin_and_the_env_scope_shows(scopes):
    site, user = scopes
    site.parent.mkdir(parents=True)
    site.write_text(SITE)
    user.parent.mkdir(parents=True)
    user.write_text(f"[settings.pin]\n{PINNED} = 32768\n")
    r = advisor("explain", PINNED, "-p", str(SHIPPED_PROFILE), "--json")
    data = json.loads(r.stdout)
    assert data["value"] == "32768" and data["status"].startswith(
        f"written: pinned by {user}:2; not measured; the measured advice was 8192 (evidence: ")
    wheres = [(s["scope"], s["where"]) for s in data["scopes"]]
    assert ("site", f"{site}:4") in wheres and ("user", f"{user}:2") in wheres


def test_accept_writes_only_accepted_recommendations(scopes):
    site, _ = scopes
    site.parent.mkdir(parents=True)
    site.write_text('[recommendations]\naccept = ["host-buffer:glibc-malloc-hugetlb"]\n')
    r = advisor("emit", "-p", str(SHIPPED_PROFILE))
    assert r.returncode == 0, r.stderr
    env = _bash_env(r.stdout, ["GLIBC_TUNABLES", EXCLUDED])
    assert env == {"GLIBC_TUNABLES": "glibc.malloc.hugetlb=1", EXCLUDED: None}


def test_bad_pins_are_one_line_naming_file_key_line_and_nothing_is_written(scopes, tmp_path):
    site, _ = scopes
    site.parent.mkdir(parents=True)
    out = tmp_path / "env.sh"
    cases = [
        ("[settings.pin]\n\nNOT_A_KNOB_ANYWHERE = 1\n",
         f"{site}:3: key 'settings.pin.NOT_A_KNOB_ANYWHERE': no loaded plugin declares"),
        (f"[settings.pin]\n{PINNED} = \"lots\"\n",
         f"{site}:2: key 'settings.pin.{PINNED}': value 'lots' is not a number"),
        (f"[settings.pin]\n{EXCLUDED} = 4096\n[settings.exclude]\n{EXCLUDED} = \"x\"\n",
         f"{site}:2: key 'settings.pin.{EXCLUDED}': {EXCLUDED} is also excluded ({site}:4)"),
        ("[settings]\npins = {}\n", f"{site}:2: key 'settings.pins': unknown key"),
    ]
    for text, expect in cases:
        site.write_text(text)
        r = advisor("emit", "-p", str(SHIPPED_PROFILE), "-o", str(out))
        assert r.returncode == 2, (text, r.stderr)
        assert expect in r.stderr, r.stderr
        assert "Traceback" not in r.stderr and not out.exists()
        assert len([ln for ln in r.stderr.splitlines() if "error:" in ln]) == 1


def test_explain_of_an_unknown_name_suggests_a_close_one(scopes):
    r = advisor("explain", "MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOL", "-p", str(SHIPPED_PROFILE))
    assert r.returncode == 2 and "did you mean MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD" in r.stderr


def test_a_pin_nothing_advised_goes_with_its_knobs_plugin_and_config_kinds_pin_too(scopes):
    site, _ = scopes
    site.parent.mkdir(parents=True)
    site.write_text('[settings.pin]\nMPIR_CVAR_CH4_SHM_POSIX_IQUEUE_CELL_SIZE = 65536\n'
                    '"host.QuickPool.alignment" = 4096\n')
    r = advisor("emit", "-p", str(SHIPPED_PROFILE), "--plugin", "mpich-cma")
    assert r.returncode == 0, r.stderr
    assert _bash_env(r.stdout, ["MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_CELL_SIZE"]) == {
        "MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_CELL_SIZE": "65536"}
    assert f"mpich-cma/pin: pinned by {site}:2" in r.stdout
    r = advisor("emit", "-p", str(SHIPPED_PROFILE), "-f", "toml")
    rows = [s for s in tomllib.loads(r.stdout)["settings"]
            if s["name"] == "host.QuickPool.alignment"]
    assert [(s["value"], s["library"]) for s in rows] == [(4096, "umpire")]
    assert rows[0]["rationale"].startswith(
        f"pinned by {site}:3; not measured; the measured advice was 2097152")
