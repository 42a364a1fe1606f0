"""Profiles: round trip, atomic writes, and bad input refused with file and key named."""

from __future__ import annotations

import hashlib
import subprocess
import sys

import pytest

from advisor.errors import ProfileError
from advisor.profile import default_profile_path, load_profile, profile_to_toml
from advisor.save import save_profile
from support import sample_profile


def test_round_trip(tmp_path):
    prof = sample_profile()
    path = save_profile(prof, tmp_path / "p.toml")
    assert load_profile(path) == prof


def test_default_store_is_keyed_by_host(advisor_home):
    assert default_profile_path("node 7/../x") == advisor_home / "profiles" / "node_7_.._x.toml"


def test_write_failure_keeps_previous_file(tmp_path):
    """A write that fails half-way (file-size limit, as on a full disk) keeps the old profile."""
    target = tmp_path / "p.toml"
    save_profile(sample_profile(), target)
    before = target.read_bytes()
    code = (
        "import resource, signal, sys\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (256, 256))\n"
        "sys.path.insert(0, sys.argv[2])\n"
        "from support import sample_profile\n"
        "from advisor.save import save_profile\n"
        "from advisor.errors import ProfileError\n"
        "try:\n"
        "    save_profile(sample_profile(fingerprint='0' * 16), sys.argv[1])\n"
        "except ProfileError as exc:\n"
        "    print(exc)\n"
        "    sys.exit(7)\n"
    )
    tests_dir = str(__import__("pathlib").Path(__file__).resolve().parents[1])
    proc = subprocess.run([sys.executable, "-c", code, str(target), tests_dir],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 7, proc.stderr
    assert "previous file kept" in proc.stdout
    assert target.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir() if p.suffix == ".tmp"] == []


GOOD = None


def _variants():
    good = profile_to_toml(sample_profile())
    return {
        "bad-toml": ("schema_version = 1\n[provenance\n", "malformed TOML"),
        # a file advisor emit wrote, given as the profile: said so (a new user's -p site.sh)
        "emitted-env": ("# hpc-advisor\nexport GLIBC_TUNABLES='glibc.malloc.hugetlb=1'\n",
                        "looks like a file 'advisor emit' writes, not a profile"),
        "unknown-key": (good.replace("[provenance]", "colour = \"red\"\n[provenance]", 1),
                        "key 'colour': unknown key"),
        "wrong-type": (good.replace('fingerprint = "', 'fingerprint = 42 #"', 1),
                       "key 'fingerprint'"),
        "empty": ("", "empty file"),
        "binary": (b"\x7fELF\x02\x01\x01\x00\x00\xff\xfe", "not UTF-8"),
        "newer-schema": (good.replace("schema_version = 1", "schema_version = 99", 1),
                         "needs schema 99"),
        "nested-unknown": (good.replace("[facts]", "[facts]\nflux_capacitor = true", 1),
                           "key 'facts.flux_capacitor': unknown key"),
    }


@pytest.mark.parametrize("name", sorted(_variants()))
def test_bad_profile_is_one_line_exit_2_untouched(tmp_path, name):
    content, expected = _variants()[name]
    path = tmp_path / f"{name}.toml"
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    mtime = path.stat().st_mtime_ns
    for cmd in (["show"], ["emit", "--format", "env"]):
        proc = subprocess.run([sys.executable, "-m", "advisor", *cmd, "--profile", str(path)],
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 2, (cmd, proc.stderr)
        assert proc.stdout == ""
        lines = [l for l in proc.stderr.splitlines() if l.strip()]
        assert len(lines) == 1, proc.stderr
        assert "Traceback" not in proc.stderr
        assert str(path) in lines[0] and expected in lines[0], lines[0]
    assert hashlib.sha256(path.read_bytes()).hexdigest() == digest
    assert path.stat().st_mtime_ns == mtime


def test_missing_profile_names_the_file(tmp_path):
    with pytest.raises(ProfileError, match="no such profile"):
        load_profile(tmp_path / "nope.toml")


def test_misspelt_key_counts_no_phantom_error_and_debug_lists_all(tmp_path):
    """A misspelt key also makes its correct name 'missing': that is one mistake, not two (a
    new user saw '(and 1 more)' and could not see the rest even with ADVISOR_DEBUG=1)."""
    from advisor.save import save_profile

    path = save_profile(sample_profile(), tmp_path / "p.toml")
    text = path.read_text()
    path.write_text(text.replace("confidence = ", "confidnce = ", 1))
    proc = subprocess.run([sys.executable, "-m", "advisor", "show", "--profile", str(path)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "(did you mean 'confidence'?)" in proc.stderr and "more)" not in proc.stderr
    path.write_text(text.replace("confidence = ", "confidnce = "))  # every occurrence
    n = text.count("confidence = ")
    proc = subprocess.run([sys.executable, "-m", "advisor", "show", "--profile", str(path)],
                          capture_output=True, text=True, timeout=60,
                          env={**__import__("os").environ, "ADVISOR_DEBUG": "1"})
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    details = [ln for ln in proc.stderr.splitlines() if ln.startswith("advisor:   key ")]
    assert len(details) == 2 * n  # each: the unknown key and the missing one


@pytest.mark.parametrize("key, typo", [("arch", "arhc"), ("hostname", "hostnam")])
def test_misspelt_optional_key_gets_a_suggestion(key, typo):
    """Optional keys are never 'missing', so the suggestion comes from the schema's keys."""
    import re
    import tomllib

    from advisor.profile import profile_from_mapping
    from support import REPO

    text = (REPO / "profiles" / "x86_64-icelake-2core-vm.toml").read_text()
    text, n = re.subn(rf"^{key} = ", f"{typo} = ", text, count=1, flags=re.M)
    assert n == 1
    with pytest.raises(ProfileError, match=f"unknown key \\(did you mean '{key}'\\?\\)$"):
        profile_from_mapping(tomllib.loads(text), source="p.toml")


def test_fingerprint_differences_name_the_facts():
    """The other-machine warning names what differs (a kernel patch release, MemTotal, ...)."""
    from advisor.models import Facts

    a = Facts(cpu={"arch": "x86_64", "cache_l3_bytes": 1 << 28}, kernel={"release": "6.1.0-1"},
              memory={"total_bytes": 1 << 34})
    b = a.model_copy(update={"kernel": a.kernel.model_copy(update={"release": "6.1.0-2"})})
    assert a.fingerprint_differences(a) == [] and a.fingerprint() != b.fingerprint()
    assert a.fingerprint_differences(b) == ["kernel.release"]
