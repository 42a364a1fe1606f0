"""Spack site integration, read by Spack itself (issue 29, part 1).

- ``spack-modules`` keys: the package at the measured version, widened by ``spec_range``;
  the settings every program reads placed by ``every_program``.  Every variant is validated
  against Spack's dumped schema (tests/data/spack/modules-schema.json), and with
  ``$ADVISOR_SPACK_ROOT`` (a Spack checkout) Spack's own module code merges the blocks for
  specs of other versions (tests/formats/spack_site_run.py under ``spack python``).
- packaging/spack: ``py-hpc-advisor``'s dependencies are pyproject.toml's (read from the file
  here; as Spack loads them with Spack), ``spack audit packages`` and ``spack info`` accept it.
- ``every_program = "separate"``: with a concretizer (clingo importable by Spack's Python,
  ``$SPACK_PYTHON``), Spack installs the ``hpc-advisor-tunables`` bundle, writes its Lmod
  module from the emitted file, and Lmod loads GLIBC_TUNABLES from it.

Spack's state (user and system configuration scopes, caches, install tree, module roots) lives
in ``tmp_path``; bootstrapping is off, so nothing is downloaded.  Tested against Spack
0.23.0.dev0, commit e8f8cf8543b31ff6ba81a5ab0e515bc9a4856384.
"""

from __future__ import annotations

import ast
import functools
import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from advisor.emit import render
from advisor.errors import EmitError
from advisor.plugins import collect, make_plugin_manager
from advisor.profile import load_profile
from advisor.specs.selection import EmitOptions
from support import SHIPPED_PROFILE

pytestmark = pytest.mark.integration

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
RUN = HERE / "spack_site_run.py"
SPACK_REPO = REPO / "packaging" / "spack"
PACKAGE = SPACK_REPO / "packages" / "py-hpc-advisor" / "package.py"
SPACK_SCHEMA = HERE.parent / "data" / "spack" / "modules-schema.json"
TUNABLES = "glibc.malloc.hugetlb=1:glibc.cpu.x86_non_temporal_threshold=0x4000000"
#: pyproject extras the package's variants stand for; the others: ``openmpi`` is a spec
#: (``^openmpi``), ``cuda`` is not packaged, ``test``/``all`` are not for sites.
VARIANTS = ("mpi", "opencl", "report")
#: PyPI names whose Spack counterpart is not ``py-NAME``: the MPICH wheel stands for an MPI
#: (Spack's virtual ``mpi``), the PoCL wheel for Spack's ``pocl``; both only run.
SPACK_NAMES = {"mpich": "mpi", "pocl-binary-distribution": "pocl"}


@pytest.fixture(scope="module")
def registry():
    """The built-in plugins' registry (formats, knobs, library records)."""
    return collect(make_plugin_manager(entry_points=False))


@functools.lru_cache(maxsize=None)
def shipped():
    """The shipped profile (read once)."""
    return load_profile(SHIPPED_PROFILE)


def emit(registry, profile=None, **opts) -> str:
    """``spack-modules`` of ``profile`` (default: the shipped one), ``--all``, with ``opts``."""
    return render(profile or shipped(), "spack-modules", registry,
                  EmitOptions(include_defaults=True, **opts))


def blocks(text: str) -> dict:
    import yaml

    return yaml.safe_load(text)["modules"]["default"]["lmod"]


# --------------------------------------------------------------------------- keys, placement


@pytest.mark.parametrize("rng, key", [("exact", "mpich@5.0.2"), ("minor", "mpich@5.0"),
                                      ("major", "mpich@5")])
@pytest.mark.parametrize("placement", ["all", "separate", ("openmpi", "hpl@2.3+openmp")])
def test_keys_and_placement_valid_under_spack_schema(registry, rng, key, placement):
    import jsonschema
    import yaml

    text = emit(registry, spec_range=rng, every_program=placement)
    schema = json.loads(SPACK_SCHEMA.read_text(encoding="utf-8"))
    jsonschema.validators.validator_for(schema)(schema).validate(yaml.safe_load(text))
    lmod = blocks(text)
    glibc_keys = {"all": ["all"], "separate": ["hpc-advisor-tunables"]}.get(
        placement, list(placement) if not isinstance(placement, str) else [])
    assert sorted(lmod) == sorted([key, "dla-future", *glibc_keys])
    assert lmod[key]["environment"]["set"]["MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD"] == "8192"
    for k in glibc_keys:
        assert lmod[k]["environment"] == {"append_path": {"GLIBC_TUNABLES": TUNABLES}}
    assert "# the profile records no dla-future version: every installed dla-future" in text


def test_unknown_version_is_a_warning_naming_the_key(registry):
    from advisor.emit.decide import select
    from advisor.formats.spack_modules import notes, spec_key

    sel = select(shipped(), registry, EmitOptions(include_defaults=True), "spack-modules")
    assert spec_key("mpich", sel) == ("mpich@5.0.2", None)
    assert spec_key("glibc", sel) == ("all", None)
    assert notes(sel) == [("warning", "the profile records no dla-future version: its settings "
                                      "go under the key 'dla-future', every installed "
                                      "dla-future's module")]
    assert registry.emitters["spack-modules"].notes is notes  # advisor emit prints them


def test_open_mpi_profile_keys_its_version(registry):
    path = REPO / "advisor" / "shipped" / "x86_64-icelake-2core-vm-openmpi.toml"
    lmod = blocks(emit(registry, load_profile(path), spec_range="minor"))
    assert "openmpi@5.0" in lmod and "openmpi" not in lmod


def test_every_program_refusals(registry):
    from advisor.config.schema import SPACK_MODULE_KEYWORDS, SpackSection

    schema = json.loads(SPACK_SCHEMA.read_text(encoding="utf-8"))
    lmod = schema["properties"]["modules"]["additionalProperties"]["properties"]["lmod"]
    assert set(SPACK_MODULE_KEYWORDS) == set(lmod["properties"]) - {"all"}
    for bad in (["hierarchy"], ["a b"], [], "everywhere"):
        with pytest.raises(ValueError):
            SpackSection(every_program=bad)
    assert SpackSection(every_program=["^mpi", "hpl@2.3+openmp"]).every_program
    with pytest.raises(EmitError, match="every_program"):
        emit(registry, every_program=("a b",))
    with pytest.raises(EmitError, match="spec range 'patch'"):
        emit(registry, spec_range="patch")


# --------------------------------------------------------------------------- package.py


def _spack_range(spec: str) -> str:
    """A pyproject specifier (``>=5.2,<6``) as a Spack range (``5.2:5``); only the forms
    pyproject.toml uses."""
    low, high = "", ""
    for part in filter(None, (p.strip() for p in spec.split(","))):
        if part.startswith(">="):
            low = part[2:]
        elif part.startswith("<") and part[1:].isdigit():
            high = str(int(part[1:]) - 1)
        else:
            raise AssertionError(f"no Spack range written for {part!r}: extend _spack_range")
    return f"{low}:{high}"


def _expected() -> set[tuple]:
    """``(name, versions, when, types)`` per pyproject.toml requirement, by Spack's names."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    meta = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    out = {("python", _spack_range(meta["project"]["requires-python"]), "", ("build", "run"))}
    for req in meta["build-system"]["requires"]:
        r = Requirement(req)
        out.add((f"py-{canonicalize_name(r.name)}", _spack_range(str(r.specifier)), "",
                 ("build",)))
    groups = [("", meta["project"]["dependencies"])] + [
        (f"+{v}", meta["project"]["optional-dependencies"][v]) for v in VARIANTS]
    for when, reqs in groups:
        for req in reqs:
            r, cond = Requirement(req), when
            name = canonicalize_name(r.name)
            if r.marker is not None:
                m = re.fullmatch(r'python_version < "(\d+)\.(\d+)"', str(r.marker))
                assert m, f"no Spack condition written for marker {r.marker}"
                cond = f"^python@:{m.group(1)}.{int(m.group(2)) - 1}"
            if name in SPACK_NAMES:
                out.add((SPACK_NAMES[name], _spack_range(str(r.specifier)), cond, ("run",)))
            else:
                out.add((f"py-{name}", _spack_range(str(r.specifier)), cond, ("build", "run")))
    return out


def _declared_in_file() -> set[tuple]:
    """The ``depends_on`` calls of package.py, read with ``ast`` (no Spack needed)."""
    out = set()
    for node in ast.walk(ast.parse(PACKAGE.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "depends_on":
            name, _, versions = node.args[0].value.partition("@")
            kw = {k.arg: ast.literal_eval(k.value) for k in node.keywords}
            types = kw.get("type", ("build", "link"))
            out.add((name, versions or ":", kw.get("when", ""),
                     (types,) if isinstance(types, str) else tuple(types)))
    return out


def test_package_dependencies_are_pyprojects():
    assert _declared_in_file() == _expected()


# --------------------------------------------------------------------------- Spack itself


class Spack:
    """``bin/spack`` of ``$ADVISOR_SPACK_ROOT`` with its state in ``base``: user and system
    scopes (``SPACK_USER_CONFIG_PATH``, ``SPACK_SYSTEM_CONFIG_PATH``: not
    ``SPACK_DISABLE_LOCAL_CONFIG``, which drops the user scope too, so that writes such as
    ``compiler find`` would land in the checkout), caches, install tree and module roots; this
    package repository added, bootstrapping off."""

    def __init__(self, root: Path, base: Path):
        self.root, self.base = root, base
        user = base / "user"
        user.mkdir(parents=True)
        (base / "system").mkdir()
        dump = {"repos": [str(SPACK_REPO)], "bootstrap": {"enable": False},
                "config": {"install_tree": {"root": str(base / "opt")},
                           "source_cache": str(base / "sources"),
                           "misc_cache": str(base / "misc")},
                "modules": {"default": {"enable": ["lmod"],
                                        "roots": {"lmod": str(base / "lmod")}}}}
        for section, value in dump.items():  # JSON is YAML
            (user / f"{section}.yaml").write_text(json.dumps({section: value}), "utf-8")
        self.env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(base),
                    "LANG": "C.UTF-8", "SPACK_USER_CONFIG_PATH": str(user),
                    "SPACK_SYSTEM_CONFIG_PATH": str(base / "system"),
                    "SPACK_USER_CACHE_PATH": str(base / "cache")}
        if os.environ.get("SPACK_PYTHON"):  # the Python Spack runs on (one with clingo)
            self.env["SPACK_PYTHON"] = os.environ["SPACK_PYTHON"]

    def __call__(self, *args: str, scope=None, check: bool = True, timeout: int = 300):
        cmd = [str(self.root / "bin" / "spack"), *(["-C", str(scope)] if scope else []), *args]
        proc = subprocess.run(cmd, env=self.env, cwd=self.base, capture_output=True, text=True,
                              timeout=timeout)
        if check:
            assert proc.returncode == 0, (cmd, proc.stdout[-2000:], proc.stderr[-2000:])
        return proc

    def scope(self, name: str, text: str) -> Path:
        """A configuration scope directory holding ``text`` as its ``modules.yaml``."""
        d = self.base / name
        d.mkdir()
        (d / "modules.yaml").write_text(text, encoding="utf-8")
        return d


@pytest.fixture(scope="module")
def spack(tmp_path_factory):
    root = os.environ.get("ADVISOR_SPACK_ROOT")
    if not root:
        pytest.skip("ADVISOR_SPACK_ROOT (a Spack checkout, from Spack's public source) not set: "
                    "the file-level checks above still ran")
    return Spack(Path(root), tmp_path_factory.mktemp("spack"))


@pytest.mark.parametrize("rng, matched, other", [
    ("exact", ["mpich@5.0.2"], ["mpich@5.0.3", "mpich@5.1.0", "mpich@4.3.2"]),
    ("minor", ["mpich@5.0.2", "mpich@5.0.3"], ["mpich@5.1.0", "mpich@4.3.2"]),
    ("major", ["mpich@5.0.2", "mpich@5.1.0"], ["mpich@4.3.2", "mpich@6.0"])])
def test_spack_merges_the_measured_versions_only(spack, registry, rng, matched, other):
    """Spack's own module code (the function ``spack module lmod refresh`` runs per spec)
    gives the CVARs to the modules of the versions the range covers, and to no other."""
    scope = spack.scope(f"range-{rng}", emit(registry, spec_range=rng))
    got = json.loads(spack("python", str(RUN), "rules", *matched, *other, "hpl@2.3",
                           scope=scope).stdout)
    for s in matched:
        assert got[s]["set"]["MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD"] == "8192", (s, got[s])
    for s in other:
        assert "set" not in got[s], (s, got[s])
    for s in (*matched, *other, "hpl@2.3"):  # every_program "all": every module
        assert got[s]["append_path"] == {"GLIBC_TUNABLES": TUNABLES}


@pytest.mark.parametrize("placement, gets, not_gets", [
    (("openmpi", "hpl"), ["hpl@2.3", "openmpi@5.0.11"], ["mpich@5.0.2", "dla-future@0.7"]),
    ("separate", ["hpc-advisor-tunables@1.0"], ["hpl@2.3", "mpich@5.0.2"])])
def test_spack_places_glibc_tunables_as_configured(spack, registry, placement, gets,
                                                   not_gets):
    text = emit(registry, every_program=placement)
    scope = spack.scope(f"place-{len(str(placement))}", text)
    blame = spack("config", "blame", "modules", scope=scope).stdout
    assert TUNABLES in blame and str(scope / "modules.yaml") in blame
    got = json.loads(spack("python", str(RUN), "rules", *gets, *not_gets, scope=scope).stdout)
    for s in gets:
        assert got[s].get("append_path") == {"GLIBC_TUNABLES": TUNABLES}, (s, got[s])
    for s in not_gets:
        assert "append_path" not in got[s], (s, got[s])


def test_spack_audit_and_info_accept_the_packages(spack):
    """``spack audit packages``: no finding but the snapshot's lag (a dependency whose
    pyproject lower bound is newer than every version the checkout's builtin repository
    knows, checked here from the versions the finding lists); ``spack info`` shows the
    variants."""
    bundle = spack("audit", "packages", "hpc-advisor-tunables").stdout
    assert len(re.findall(r"^PKG-[A-Z]+: 0 issues found\.$", bundle, re.M)) >= 3, bundle
    proc = spack("audit", "packages", "py-hpc-advisor", check=False)
    out = proc.stdout + proc.stderr
    findings = re.findall(r"^\d+\. (.+)\n((?:    .*\n)*)", out, re.M)
    assert proc.returncode == (1 if findings else 0), out
    for summary, details in findings:
        m = re.fullmatch(r"py-hpc-advisor: dependency on (\S+)@(\S+): cannot be satisfied by "
                         r"known versions of \1", summary)
        assert m, out
        known = re.search(r"known versions of \S+ are (.*)", details).group(1).split(", ")
        numeric = []
        for v in known:
            try:
                numeric.append(Version(v))
            except InvalidVersion:  # branch names (master, main)
                pass
        assert max(numeric) < Version(m.group(2)), (summary, known)
    info = spack("info", "py-hpc-advisor").stdout
    assert "https://hpc-advisor.invalid/hpc-advisor.git on branch main" in info
    for variant in VARIANTS:
        assert re.search(rf"^\s+{variant} \[false\]\s+false, true$", info, re.M), info
    assert "BundlePackage:   hpc-advisor-tunables" in spack("info", "hpc-advisor-tunables").stdout


def test_spack_loads_the_package_as_the_file_declares(spack):
    got = json.loads(spack("python", str(RUN), "package", "py-hpc-advisor").stdout)
    own = {(n, v, w, tuple(t)) for n, v, w, t in got["dependencies"]
           if w != "build_system=python_pip"}  # PythonPackage's own build dependencies
    assert own == _expected()
    assert set(got["variants"]) - {"build_system"} == set(VARIANTS)


@pytest.mark.slow
def test_separate_module_written_by_spack_and_loaded_by_lmod(spack, registry):
    """Spack installs the bundle (nothing to fetch), writes its Lmod module from the emitted
    file (``spack module lmod refresh``), and Lmod loads GLIBC_TUNABLES from it."""
    from consumers import lmod_init  # tests/emit, on the path (tests/formats/conftest.py)

    init = lmod_init()
    if spack("python", "-c", "import clingo", check=False).returncode != 0:
        pytest.skip("Spack's concretizer needs clingo importable by Spack's Python (set "
                    "SPACK_PYTHON to a Python with `pip install clingo`); bootstrapping is "
                    "off (no network)")
    scope = spack.scope("separate-install", emit(registry, every_program="separate"))
    spack("compiler", "find", "--scope", "user")
    spack("install", "hpc-advisor-tunables", scope=scope, timeout=900)
    spack("module", "lmod", "refresh", "-y", scope=scope)
    files = list((spack.base / "lmod").glob("*/Core/hpc-advisor-tunables/*.lua"))
    assert len(files) == 1, list((spack.base / "lmod").rglob("*.lua"))
    assert f'append_path("GLIBC_TUNABLES", "{TUNABLES}", ":")' in files[0].read_text()
    script = (f'{init}; module use "{files[0].parent.parent}" && '
              'module load hpc-advisor-tunables && printf %s "$GLIBC_TUNABLES"')
    env = {"PATH": "/usr/bin:/bin", "HOME": str(spack.base), "LANG": "C.UTF-8"}
    out = subprocess.run(["bash", "--norc", "--noprofile", "-c", script], env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout == TUNABLES, (out.stdout, out.stderr)
