"""``advisor verify --app`` on real applications through the real launcher: HPCC 1.5.0 (built
from Debian's source against the mpich wheel) and our mpi4py halo exchange, each under
``mpiexec -n 2``.

- a profile's emitted environment on HPCC gives a verdict with its ratio, CI and A/A floor,
  the metric read from the result file HPCC appends to (``--metric-file``);
- a planted harmful setting, CMA off (``MPIR_CVAR_CH4_CMA_ENABLE=0``), is caught as a
  regression on 4 MiB halo messages, where CMA wins here (tests/apps/README.md: 2.9-3.5x);
- a profile whose emitted environment holds four settings, one of which makes ``MPI_Init``
  abort (``MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_CELL_SIZE`` above the pack buffer, MPICH 5.0.2:
  tests/apps/README.md), is bisected to that one setting and its plugin.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from apps.hpcc import mpich_version, need_hpcc, write_hpccinf
from support import SHIPPED_PROFILE, need_cma_usable, tool

pytestmark = [pytest.mark.integration, pytest.mark.slow]

HALO = Path(__file__).with_name("halo.py")
BREAKER = "MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_CELL_SIZE"


def advisor(*args: str, cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return subprocess.run([sys.executable, "-m", "advisor", *args], capture_output=True,
                          text=True, timeout=timeout, cwd=cwd, env=env)


def _copy_profile(tmp_path: Path) -> Path:
    dest = tmp_path / "profile.toml"
    dest.write_bytes(SHIPPED_PROFILE.read_bytes())
    return dest


def test_hpcc_under_the_profile_env_gives_a_verdict_with_ci_and_floor(tmp_path):
    exe = need_hpcc()
    write_hpccinf(tmp_path)
    prof = _copy_profile(tmp_path)
    done = advisor("verify", "--app", "--profile", str(prof), "--json", "--runs", "10",
                   "--metric", r"^AvgPingPongBandwidth_GBytes=([0-9.eE+-]+)$",
                   "--metric-file", "hpccoutf.txt", "--higher-is-better", "--",
                   tool("mpiexec"), "-n", "2", str(exe), cwd=tmp_path)
    assert done.returncode in (0, 1), done.stderr[-3000:]
    rec = json.loads(done.stdout)
    assert rec["verdict"] in ("better", "no-difference", "regression", "inconclusive")
    assert rec["ratio"] > 0 and rec["ci_low"] <= rec["ratio"] <= rec["ci_high"]
    assert rec["noise_floor"] >= 0 and rec["rounds"] >= 5
    assert "GLIBC_TUNABLES" in rec["advised"]  # B is what advisor emit writes for the profile
    assert (done.returncode == 1) == (rec["verdict"] == "regression")
    assert "A/A floor" in done.stderr
    from advisor.profile import load_profile

    stored = load_profile(prof).app_verifications
    assert [r.metric_file for r in stored] == ["hpccoutf.txt"]


def test_cma_off_is_caught_as_a_regression(tmp_path):
    need_cma_usable()
    env = tmp_path / "harmful.sh"
    env.write_text("export MPIR_CVAR_CH4_CMA_ENABLE=0\n")
    argv = ("verify", "--app", "--env", str(env), "--json", "--runs", "20",
            "--metric", r"bandwidth_GBps=([0-9.]+)", "--higher-is-better", "--",
            tool("mpiexec"), "-n", "2", sys.executable, str(HALO), "--bytes", "4194304",
            "--iters", "60", "--buffers", "reused")
    done = advisor(*argv, cwd=tmp_path)
    if done.returncode == 0:
        # the copy state of a VM can switch during the A/A rounds (background.md: x1.7 between
        # states), widening the floor past a x2 effect; seen in clean-clone runs on a loaded
        # machine (floor ±109 % and ±114 %, CI [0.49, 0.57] and [0.48, 0.59]): once more
        done = advisor(*argv, cwd=tmp_path)
    rec = json.loads(done.stdout)
    assert "not stored: no profile" in done.stderr
    if done.returncode == 0:
        # twice a floor wider than the effect: the tool must still not pass CMA off as fine.
        # It says B is worse (the CI below 1) and that the A/A noise covers it, and exit 0
        # is its documented "not worse beyond noise" (docs/verify-app.md)
        assert rec["verdict"] == "inconclusive" and rec["ci_high"] < 1, rec["reason"]
        assert rec["ci_high"] >= 1 / (1 + rec["noise_floor"]), rec
        assert "A/A floor" in done.stderr and "worse" in rec["reason"]
        return
    assert done.returncode == 1, done.stderr[-3000:]
    assert rec["verdict"] == "regression", rec["reason"]
    assert rec["ci_high"] < 1 / (1 + rec["noise_floor"])


def test_a_breaking_setting_among_four_is_bisected_to_itself(tmp_path):
    if not mpich_version(Path(sys.executable).parent).startswith("5."):
        pytest.skip("the aborting cell size is an MPICH 5.x assertion (tests/apps/README.md)")
    from advisor.models import Setting
    from advisor.profile import load_profile
    from advisor.save import save_profile

    prof = load_profile(SHIPPED_PROFILE)
    results = []
    for res in prof.results:
        if res.probe == "mpich-cma":
            rec = res.recommendations[0]
            settings = [s.model_copy(update={"value": 16384, "is_default": False})
                        if s.name == "MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD" else s
                        for s in rec.settings]
            settings.append(Setting(library="mpich", name=BREAKER, value=32768, type="bytes",
                                    unit="bytes", default=8192))
            res = res.model_copy(update={"recommendations": [
                rec.model_copy(update={"settings": settings})]})
        results.append(res)
    path = save_profile(prof.model_copy(update={"results": results}), tmp_path / "broken.toml")
    emitted = advisor("emit", "--profile", str(path), "--no-comments", cwd=tmp_path)
    assert emitted.returncode == 0, emitted.stderr
    names = sorted({ln.split("=")[0].split()[-1] for ln in emitted.stdout.splitlines()
                    if "export" in ln})
    assert len(names) == 4 and BREAKER in names, names
    done = advisor("verify", "--app", "--profile", str(path), "--json", "--", tool("mpiexec"),
                   "-n", "2", sys.executable, str(HALO), "--bytes", "65536", "--iters", "20",
                   cwd=tmp_path)
    assert done.returncode == 1, done.stderr[-3000:]
    rec = json.loads(done.stdout)
    assert rec["verdict"] == "breaks"
    bis = rec["bisection"]
    assert bis["settings"] == [BREAKER] and bis["reproduced"]
    assert bis["sources"][BREAKER] == ["mpich-cma/cma-threshold"]
    assert "exit status" in bis["failure"]
    assert f"{BREAKER}=32768  advised by mpich-cma/cma-threshold" in done.stderr
    from advisor.profile import load_profile as reload

    assert reload(path).app_verifications[0].bisection.settings == [BREAKER]
