"""The libraries read what emit writes: MPICH (through its own ``mpivars``, which prints the
control variables as the library parsed them) and glibc (``ld.so --list-tunables`` prints the
tunables as the dynamic loader parsed GLIBC_TUNABLES)."""

from __future__ import annotations

import glob
import re
import subprocess

import pytest

from advisor.specs.selection import EmitOptions
from advisor.emit import render
from advisor.models import PluginResult, Recommendation, Setting
from advisor.plugins import collect, make_plugin_manager
from emit_fixtures import make_profile
from support import case, tool

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def registry():
    return collect(make_plugin_manager(entry_points=False))


def source_and_run(tmp_path, registry, profile, command: str, env: dict[str, str]) -> str:
    path = tmp_path / "advisor.sh"
    path.write_text(render(profile, "env", registry, EmitOptions()), encoding="utf-8")
    proc = subprocess.run([tool("bash"), "--norc", "--noprofile", "-c", f'. "$1"; {command}',
                           "sh", str(path)], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_cvar_typos_mpich_reads_emitted_values(tmp_path, registry):
    """Case cvar-typos: values MPICH would ignore (``yes``, ``16k``) never come out of emit;
    what does come out is what MPICH's own parser reads."""
    mpivars = tool("mpivars")
    c = case("cvar-typos")
    names = re.findall(r"^(?:export\s+)?([A-Z0-9_]+)=", c["env_file"]["text"], re.M)
    bool_name, bytes_name = names[1], names[2]  # the case's lines 2 and 3
    res = PluginResult(plugin="mpich-cma", probe="mpich-cma", status="ok", recommendations=[
        Recommendation(id="r", title="t", rationale="why", confidence="high", settings=[
            Setting(library="mpich", name=bool_name, value=False, type="bool"),
            Setting(library="mpich", name=bytes_name, value=3 * 8192, type="bytes")])])
    out = source_and_run(tmp_path, registry, make_profile([res]), f'"{mpivars}"',
                         {"PATH": "/usr/bin:/bin"})
    read = dict(re.findall(r"^\s*(MPIR_CVAR_\w+)\s*=(\S*)", out, re.M))
    assert read[bool_name] == "0"
    assert read[bytes_name] == str(3 * 8192)


def _ld_so() -> str:
    found = sorted(glob.glob("/lib64/ld-linux-*.so.*") + glob.glob("/lib/ld-linux-*.so.*"))
    if not found:
        pytest.skip("no glibc dynamic loader found")
    proc = subprocess.run([found[0], "--list-tunables"], capture_output=True, text=True)
    if proc.returncode != 0 or "glibc.malloc.hugetlb" not in proc.stdout:
        pytest.skip("this glibc cannot list tunables or has no glibc.malloc.hugetlb (< 2.35)")
    return found[0]


def _tunable(out: str, name: str) -> int:
    m = re.search(rf"^{re.escape(name)}: (0x[0-9a-f]+|\d+)", out, re.M)
    assert m, out
    return int(m.group(1), 0)


@pytest.mark.parametrize("existing", [None, "glibc.malloc.check=3",
                                      "glibc.malloc.hugetlb=0:glibc.malloc.check=3"])
def test_glibc_reads_merged_tunables(existing, tmp_path, registry):
    """The appended item wins over an earlier value of the same tunable, and the site's other
    tunables stay in force (advisor.specs.writing.MERGE_POLICY)."""
    ld_so = _ld_so()
    res = PluginResult(plugin="host-buffer", probe="host-buffer", status="ok", recommendations=[
        Recommendation(id="thp", title="t", rationale="why", confidence="high", settings=[
            Setting(library="glibc", name="GLIBC_TUNABLES", value="glibc.malloc.hugetlb=1",
                    type="list", separator=":")])])
    env = {"PATH": "/usr/bin:/bin"}
    if existing is not None:
        env["GLIBC_TUNABLES"] = existing
    out = source_and_run(tmp_path, registry, make_profile([res]), f'"{ld_so}" --list-tunables',
                         env)
    assert _tunable(out, "glibc.malloc.hugetlb") == 1
    if existing and "check=3" in existing:
        assert _tunable(out, "glibc.malloc.check") == 3
