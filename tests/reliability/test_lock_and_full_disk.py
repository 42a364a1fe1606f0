"""Concurrent writers are serialised by the lock; a full disk, a file-size limit or a read-only
file system gives one clear error line (exit 2) and keeps the previous file."""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from advisor.errors import ExitCode
from advisor.profile import load_profile
from advisor.save import save_profile
from reliability_support import (advisor_cmd, fault_plugins_installed, need_fault_plugins,
                                 one_line_error, run_advisor)
from support import DATA, sample_profile


def _env(**extra) -> dict:
    env = dict(os.environ)
    env.pop("ADVISOR_LAUNCHER", None)
    env.update({"ADVISOR_TEST_FAULTS": "ok", "ADVISOR_DISABLE_PLUGINS": "example-broken"})
    env.update(extra)
    return env


def _value(path: Path) -> str:
    (res,) = load_profile(path).results
    return str(res.recommendations[0].settings[0].value)


def test_lock_two_concurrent_probes_same_profile(tmp_path):
    """Two ``advisor probe -o same`` at once: both succeed and the file is one complete profile."""
    need_fault_plugins()
    target = tmp_path / "p.toml"
    procs = [subprocess.Popen(advisor_cmd("probe", "--plugin", "fault-ok", "-o", str(target)),
                              env=_env(ADVISOR_TEST_FAULT_VALUE=v), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for v in ("first", "second")]
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        assert out.strip() == str(target)
    assert _value(target) in ("first", "second")
    assert [p.name for p in tmp_path.iterdir() if p.suffix == ".tmp"] == []


def test_lock_held_makes_writer_wait(tmp_path):
    """While another process holds the profile's lock, ``advisor emit -o`` waits and writes
    only after the lock is released."""
    from filelock import FileLock

    from advisor.save import lock_path

    src = tmp_path / "src.toml"
    save_profile(sample_profile(), src)
    target = tmp_path / "site.sh"
    target.write_text("# old\n")
    lock = FileLock(str(lock_path(target)))  # the hidden sibling .site.sh.lock (issue 18)
    with lock:
        proc = subprocess.Popen(advisor_cmd("emit", "-p", str(src), "-o", str(target)),
                                env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
        # it must still be waiting after a start-up time that is generous on a loaded machine
        deadline = time.monotonic() + 3.0
        while time.monotonic() < deadline:
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.1)
        assert target.read_text() == "# old\n"
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert target.read_text().startswith("#") and target.read_text() != "# old\n"


def _limit_file_size(nbytes: int):
    def preexec() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (nbytes, nbytes))
    return preexec


@pytest.mark.parametrize("command", ["probe", "emit"])
def test_full_disk_file_size_limit_keeps_old_file(tmp_path, command):
    """RLIMIT_FSIZE (as ``ulimit -f`` in a batch script) makes the write fail with EFBIG (CPython
    ignores SIGXFSZ): one line naming the file, exit 2, previous file intact, no temporary."""
    if command == "probe":
        need_fault_plugins()
    target = tmp_path / ("p.toml" if command == "probe" else "site.sh")
    if command == "probe":
        save_profile(sample_profile(), target)
        argv = advisor_cmd("probe", "--plugin", "fault-ok", "-o", str(target))
    else:
        target.write_text("# old\n")
        src = tmp_path / "src.toml"
        save_profile(sample_profile(), src)
        argv = advisor_cmd("emit", "-p", str(src), "-o", str(target))
    before = target.read_bytes()
    limit = 200  # bytes: smaller than any profile or emitted file, larger than nothing
    proc = subprocess.run(argv, env=_env(), capture_output=True, text=True, timeout=120,
                          preexec_fn=_limit_file_size(limit))
    assert proc.returncode == ExitCode.BAD_INPUT, proc.stderr
    lines = one_line_error(proc.stderr)
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert str(target) in lines[0] and "previous file kept" in lines[0], lines[0]
    assert "File too large" in lines[0]
    assert target.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir() if p.suffix == ".tmp"] == []
    assert proc.stdout == ""


SCRIPT = r'''
set -u
mount -t tmpfs -o size=64k,mode=0755 tmpfs "$MNT" || exit 99
"$PY" -m advisor emit -p "$A" -o "$MNT/site.sh" 2>/dev/null || exit 98
cp "$MNT/site.sh" "$OUT/before"
dd if=/dev/zero of="$MNT/fill" bs=4k 2>/dev/null
"$PY" -m advisor emit -p "$B" -o "$MNT/site.sh" 2>"$OUT/err-full"; echo $? >"$OUT/rc-full"
cp "$MNT/site.sh" "$OUT/after-full"; ls -a "$MNT" >"$OUT/ls-full"
"$PY" -m advisor probe --plugin fault-ok -o "$MNT/p.toml" 2>"$OUT/err-probe" >/dev/null
echo $? >"$OUT/rc-probe"; ls -a "$MNT" >"$OUT/ls-probe"
rm -f "$MNT/fill"
mount -o remount,ro "$MNT" || exit 97
"$PY" -m advisor emit -p "$B" -o "$MNT/site.sh" 2>"$OUT/err-ro"; echo $? >"$OUT/rc-ro"
cp "$MNT/site.sh" "$OUT/after-ro"
exit 0
'''


def test_full_disk_tiny_tmpfs_and_read_only(tmp_path):
    """A real full file system (64 KiB tmpfs filled up) and a read-only one, in a private mount
    namespace (``unshare -rm``: needs root or unprivileged user namespaces).  ``emit -o`` keeps
    the old file; ``probe -o`` keeps its measurements in ``$TMPDIR`` and says where."""
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("unshare (util-linux) not installed")
    probe = subprocess.run([unshare, "-rm", "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip(f"cannot create a mount namespace here: {probe.stderr.strip()}")
    mnt, out = tmp_path / "mnt", tmp_path / "out"
    mnt.mkdir()
    out.mkdir()
    a, b = tmp_path / "a.toml", tmp_path / "b.toml"
    save_profile(sample_profile(), a)
    save_profile(sample_profile(fingerprint="b" * 16), b)
    proc = subprocess.run([unshare, "-rm", "sh", "-c", SCRIPT], capture_output=True, text=True,
                          timeout=120, env=_env(MNT=str(mnt), OUT=str(out), A=str(a), B=str(b),
                                                PY=sys.executable, TMPDIR=str(out)))
    if proc.returncode in (99, 97):
        pytest.skip(f"mount not permitted in this namespace: {proc.stderr.strip()}")
    assert proc.returncode == 0, proc.stderr
    before = (out / "before").read_bytes()
    for case, word in (("full", "No space left on device"), ("ro", "Read-only file system")):
        assert (out / f"rc-{case}").read_text().strip() == str(ExitCode.BAD_INPUT)
        err = (out / f"err-{case}").read_text()
        lines = one_line_error(err)
        assert len(lines) == 1 and "Traceback" not in err, err
        assert "site.sh" in lines[0] and word in lines[0], lines[0]
        assert (out / f"after-{case}").read_bytes() == before
    assert not [n for n in (out / "ls-full").read_text().split() if n.endswith(".tmp")]
    # a probe that measured and then met the full disk keeps its profile in $TMPDIR
    if fault_plugins_installed():
        assert (out / "rc-probe").read_text().strip() == str(ExitCode.BAD_INPUT)
        (line,) = one_line_error((out / "err-probe").read_text())
        assert "No space left on device" in line and "saved to" in line, line
        rescued = Path(line.rsplit("saved to ", 1)[1].split(" instead")[0])
        assert rescued.parent == out and load_profile(rescued).results[0].probe == "fault-ok"
        assert "p.toml" not in (out / "ls-probe").read_text().split()


def test_lock_new_files_get_the_umask_mode(tmp_path):
    """A new profile or emitted file is created with 0666 & ~umask (not mkstemp's 0600, which
    would hide a site-wide env file from its users); an existing file keeps its mode."""
    target = tmp_path / "site.sh"
    proc, _ = run_advisor(["emit", "-p", str(DATA / "bad" / "base.toml"), "-o", str(target)],
                          preexec_fn=lambda: os.umask(0o022))
    assert proc.returncode == 0, proc.stderr
    assert target.stat().st_mode & 0o777 == 0o644
    target.chmod(0o640)
    proc, _ = run_advisor(["emit", "-p", str(DATA / "bad" / "base.toml"), "-o", str(target)])
    assert proc.returncode == 0, proc.stderr
    assert target.stat().st_mode & 0o777 == 0o640


def test_full_disk_unwritable_target_fails_before_probing(tmp_path):
    """``probe -o`` somewhere that cannot be written fails in a second, before any probe runs
    (here a probe that would hang for its whole budget)."""
    need_fault_plugins()
    ro = tmp_path / "not-a-dir"
    ro.write_text("a file where a directory is needed\n")
    t0 = time.monotonic()
    proc, _ = run_advisor(["probe", "--plugin", "fault-hang", "-o", str(ro / "p.toml")],
                          faults=["hang"], timeout=120)
    assert time.monotonic() - t0 < 10, "it probed before finding out it cannot write"
    assert proc.returncode == ExitCode.BAD_INPUT
    (line,) = one_line_error(proc.stderr)
    assert str(ro / "p.toml") in line and "cannot write" in line
