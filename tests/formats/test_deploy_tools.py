"""The spack-modules, easybuild-hooks and reframe formats, accepted by each tool's own loader or
schema, with the loaded environment equal to the profile's settings.

- Spack: the emitted ``modules.yaml`` is validated against Spack's own schema
  (``spack.schema.modules``, dumped to tests/data/spack/modules-schema.json by
  scripts/spack-modules-schema.py) with ``jsonschema``; with ``$ADVISOR_SPACK_ROOT`` (a Spack
  checkout) Spack itself reads it (``spack config blame modules``).
- EasyBuild 5: ``load_hooks`` loads the hooks file and a real ``EasyConfig`` runs its parse
  hook (tests/formats/deploy_tools_run.py, in a subprocess).
- ReFrame: ``load_config`` loads a site configuration importing the snippet; the partition's
  ``env_vars`` and the job-script lines ReFrame emits for them are checked, the latter in bash.

The profile is the shipped one of this repository (profiles/x86_64-icelake-2core-vm.toml),
written with ``--all`` so that every environment setting is in the file.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from advisor.specs.selection import EmitOptions
from advisor.emit import render
from advisor.errors import EmitError
from advisor.specs.writing import value_string
from advisor.plugins import collect, make_plugin_manager
from advisor.profile import load_profile
from support import SHIPPED_PROFILE

pytestmark = pytest.mark.integration

HERE = Path(__file__).resolve().parent
RUN = HERE / "deploy_tools_run.py"
SPACK_SCHEMA = HERE.parent / "data" / "spack" / "modules-schema.json"
ALL = EmitOptions(include_defaults=True)


@pytest.fixture(scope="module")
def registry():
    return collect(make_plugin_manager(entry_points=False))


@pytest.fixture(scope="module")
def profile():
    return load_profile(SHIPPED_PROFILE)


def expected_env(profile, libraries=None) -> dict[str, str]:
    """The profile's environment settings (defaults included) as the environment gets them:
    list items joined with their separator in profile order, written independently of
    ``advisor.specs.writing.env_items``."""
    out: dict[str, list[str]] = {}
    seps: dict[str, str] = {}
    for _res, _rec, s in profile.settings(kinds=("env",), include_defaults=True):
        if libraries is not None and s.library not in libraries:
            continue
        items = out.setdefault(s.name, [])
        if s.separator:
            seps[s.name] = s.separator
            items += [p for p in value_string(s).split(s.separator) if p not in items]
        else:
            items[:] = [value_string(s)]
    return {k: seps.get(k, "").join(v) for k, v in out.items()}


def _library_of(profile) -> dict[str, str]:
    return {s.name: s.library for _r, _c, s in profile.settings(kinds=("env",),
                                                                 include_defaults=True)}


# --------------------------------------------------------------------------- Spack


def test_spack_modules_valid_under_spack_schema_and_per_package(registry, profile):
    import jsonschema
    import yaml

    from advisor.formats.spack_modules import MODULE_KINDS, MODULE_SET, spack_package

    text = render(profile, "spack-modules", registry, ALL)
    doc = yaml.safe_load(text)
    schema = json.loads(SPACK_SCHEMA.read_text(encoding="utf-8"))
    jsonschema.validators.validator_for(schema)(schema).validate(doc)
    lib_of = _library_of(profile)
    want = expected_env(profile)
    for kind in MODULE_KINDS:
        got: dict[str, str] = {}
        for pkg, block in doc["modules"][MODULE_SET][kind].items():
            for action, names in block["environment"].items():
                assert action in ("set", "append_path")
                for name, value in names.items():
                    # the key is the package at the measured version (mpich@5.0.2)
                    assert spack_package(lib_of[name], registry.libraries) == \
                        pkg.partition("@")[0], (name, pkg)
                    got[name] = value
        assert got == want
    assert doc["modules"][MODULE_SET]["lmod"]["all"]["environment"]["append_path"] == {
        "GLIBC_TUNABLES": want["GLIBC_TUNABLES"]}
    assert set(doc["modules"][MODULE_SET]["lmod"]) == {"all", "dla-future", "mpich@5.0.2"}


def test_spack_schema_is_strict_about_the_environment_block():
    """The dumped schema really constrains the block we write: a misspelt action fails."""
    import jsonschema

    schema = json.loads(SPACK_SCHEMA.read_text(encoding="utf-8"))
    bad = {"modules": {"default": {"lmod": {"mpich": {"environment": {"setenv": {"A": "1"}}}}}}}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validators.validator_for(schema)(schema).validate(bad)


def test_spack_modules_parse_round_trip_and_refusal(registry, profile):
    from advisor.formats.spack_modules import parse, spack_unsafe

    text = render(profile, "spack-modules", registry, ALL)
    got = {e.name: e.value for e in parse(text, "modules.yaml")}
    assert got == expected_env(profile)
    for value in ('a"b', "a\\b", "$HOME", "[x]", "{prefix}"):
        assert spack_unsafe(value), value
    assert spack_unsafe("glibc.malloc.hugetlb=1:x=0x10") is None


def test_spack_modules_refuses_what_spack_templates_would_change(registry):
    from emit_fixtures import standard_profile

    with pytest.raises(EmitError, match=r"ADVISOR_T_SUBST.*Spack's module templates"):
        render(standard_profile(hostile={"ADVISOR_T_SUBST": "$HOME"}), "spack-modules",
               registry, EmitOptions())


def test_real_spack_reads_the_modules_yaml(registry, profile, tmp_path):
    root = os.environ.get("ADVISOR_SPACK_ROOT")
    if not root:
        pytest.skip("ADVISOR_SPACK_ROOT (a Spack checkout) not set: validated against the "
                    "dumped spack.schema.modules only")
    scope = tmp_path / "scope"
    scope.mkdir()
    (scope / "modules.yaml").write_text(render(profile, "spack-modules", registry, ALL),
                                        encoding="utf-8")
    env = {**os.environ, "HOME": str(tmp_path), "SPACK_DISABLE_LOCAL_CONFIG": "1",
           "SPACK_USER_CACHE_PATH": str(tmp_path / "cache")}
    proc = subprocess.run([str(Path(root) / "bin" / "spack"), "-C", str(scope), "config",
                           "blame", "modules"], env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    for name, value in expected_env(profile).items():
        assert name in proc.stdout and value in proc.stdout


# --------------------------------------------------------------------------- EasyBuild


def _lmod_cmd() -> str:
    found = sorted(glob.glob("/usr/share/lmod/lmod/libexec/lmod")
                   + glob.glob("/usr/share/lmod/*/libexec/lmod"))
    if not found:
        pytest.skip("Lmod not installed here (EasyBuild needs a modules tool; CI installs lmod)")
    return found[0]


def test_easybuild_parse_hook_adds_modextravars(registry, profile, tmp_path):
    pytest.importorskip("easybuild.framework", reason="easybuild-framework not installed (the "
                        "test extra has it)")
    from advisor.formats.easybuild_hooks import easybuild_names, parse

    text = render(profile, "easybuild-hooks", registry, ALL)
    hooks = tmp_path / "advisor_hooks.py"
    hooks.write_text(text, encoding="utf-8")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path),
           "LMOD_CMD": _lmod_cmd(), "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
    proc = subprocess.run([sys.executable, str(RUN), "easybuild", str(hooks), str(tmp_path),
                           "MPICH=5.0.2", "MPICH=4.3.2", "DLA-Future=0.8.0", "GCC=13.2.0"],
                          env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = json.loads(proc.stdout)
    assert got["hooks"] == ["parse_hook"]
    own = {"SITE_OWN_VARIABLE": "kept"}  # the easyconfig's own modextravars stay
    # the profile measured MPICH 5.0.2: that version only (--spec-range exact, the default)
    assert got["modextravars"]["MPICH-5.0.2"] == {**own, **expected_env(profile, {"mpich"})}
    assert got["modextravars"]["MPICH-4.3.2"] == own
    # no DLA-Future version recorded in the profile: every version, and the file says so
    assert got["modextravars"]["DLA-Future-0.8.0"] == {**own,
                                                       **expected_env(profile, {"dla-future"})}
    assert "the profile recorded no DLA-Future version" in text
    assert got["modextravars"]["GCC-13.2.0"] == own
    # glibc has no easyconfig: left out, and the file says so
    assert "left out: GLIBC_TUNABLES=" in text
    assert {e.name: e.value for e in parse(text, str(hooks))} == expected_env(
        profile, set(easybuild_names(registry.libraries)))


# --------------------------------------------------------------------------- ReFrame


def test_reframe_config_loader_takes_env_vars_and_reference(registry, profile, tmp_path):
    pytest.importorskip("reframe", reason="reframe-hpc not installed (the test extra has it)")
    from advisor.formats.reframe import parse, variable_name

    text = render(profile, "reframe", registry, ALL)
    snippet = tmp_path / "advisor_cpu.py"
    snippet.write_text(text, encoding="utf-8")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path),
           "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
    proc = subprocess.run([sys.executable, str(RUN), "reframe", str(snippet), str(tmp_path)],
                          env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = json.loads(proc.stdout)
    want = expected_env(profile)
    assert dict(got["env_vars"]) == want
    assert got["partition_env_vars"] == want
    # the job script's lines, run by bash, give each variable its value byte for byte
    bash = shutil.which("bash")
    script = "\n".join(got["commands"]) + f'\n"{sys.executable}" -c "import json, os; ' \
        'print(json.dumps(dict(os.environ)))"\n'
    out = subprocess.run([bash, "--norc", "--noprofile", "-c", script], env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    shell_env = json.loads(out.stdout)
    assert {k: shell_env.get(k) for k in want} == want
    # the reference: ReFrame's type of RegressionTest.reference, thresholds it accepts
    assert got["reference_type_ok"] is True
    # confirmed verdicts of advice this file deploys (host-pool-hugepages is set in code)
    deployed = {f"{r.probe}:{rec.id}" for r in profile.results for rec in r.recommendations
                if any(s.kind == "env" for s in rec.settings)}
    confirmed = {variable_name(v.recommendation): v for v in profile.verifications
                 if v.verdict == "confirmed" and v.recommendation in deployed}
    ref = got["reference"]["*"]
    assert set(ref) == set(confirmed) and all(got["reference_accepted"].values())
    for name, (value, lower, upper, unit) in ref.items():
        v = confirmed[name]
        # 3 significant digits; the thresholds whole percent, covering the interval and the
        # A/A noise floor (a re-measurement inside either passes)
        assert value == float(f"{v.ratio:.3g}") and unit == "ratio" and lower <= 0 <= upper
        assert lower * 100 == pytest.approx(round(lower * 100)) and \
            upper * 100 == pytest.approx(round(upper * 100))
        floor = (v.noise_floor or 0.0) * value
        assert value * (1 + lower) <= min(v.ci_low, value - floor) + 1e-12
        assert value * (1 + upper) >= max(v.ci_high, value + floor) - 1e-12
        assert value * (1 + upper) - max(v.ci_high, value + floor) <= 0.01 * value + 1e-12
    assert {e.name: e.value for e in parse(text, str(snippet))} == want


def test_reframe_refuses_values_the_job_script_would_change(registry):
    from emit_fixtures import standard_profile

    with pytest.raises(EmitError, match=r"ADVISOR_T_SPACES.*export NAME=value"):
        render(standard_profile(hostile={"ADVISOR_T_SPACES": "two words"}), "reframe",
               registry, EmitOptions())


def test_reframe_reference_only_for_advice_the_file_deploys(registry, profile):
    """A verification whose recommendation writes nothing here (a scope excluded its settings,
    or they are set in code) gets no reference: ReFrame would expect a gain never deployed."""
    glibc = {"glibc-malloc-hugetlb", "glibc-non-temporal-threshold"}
    before = render(profile, "reframe", registry, ALL)
    assert "'host_buffer_glibc_malloc_hugetlb': (" in before
    results = [r.model_copy(update={"recommendations": [
        rec.model_copy(update={"settings": []}) if rec.id in glibc else rec
        for rec in r.recommendations]}) for r in profile.results]
    after = render(profile.model_copy(update={"results": results}), "reframe", registry, ALL)
    assert "'host_buffer_glibc_malloc_hugetlb': (" not in after
    assert ("# reference left out: host-buffer:glibc-malloc-hugetlb (none of its settings is "
            "in env_vars)") in after


@pytest.mark.parametrize("fmt, filename", [("spack-modules", "modules.yaml"),
                                            ("easybuild-hooks", "advisor_hooks.py"),
                                            ("reframe", "site_reframe.py"),
                                            ("spack-modules", "<stdin>")])
def test_lint_recognises_each_deployment_file_by_its_shape(registry, profile, fmt, filename):
    """The three formats share suffixes with others (.yaml: spack; .py: each other): lint's
    auto detection reads each as what it is, also from standard input."""
    from advisor.lint.read import detect_format

    text = render(profile, fmt, registry, ALL)
    assert detect_format(text, filename, registry.emitters) == fmt
