"""Output paths and the other-machine warning as a user meets them (issue 27), with the real CLI
in a subprocess: ``report`` refuses a terminal, ``-o`` creates no missing directory without
``--mkdir``, a pasted ``$MODULEPATH`` is warned about and never created, and a profile from
another machine is reported as a short list in human units."""

from __future__ import annotations

import os
import pty
import shutil
import subprocess
import sys

from support import REPO, SHIPPED_PROFILE, profile_made_here

ADVISOR = [sys.executable, "-m", "advisor"]
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "plugins"),
                                                    os.environ.get("PYTHONPATH", "")])}


def run(*args, cwd=None):
    return subprocess.run([*ADVISOR, *args], capture_output=True, text=True, timeout=300,
                          env=ENV, cwd=cwd)


def test_report_refuses_a_terminal_but_not_a_pipe(tmp_path):
    """700 KB of HTML on a terminal helps no one: exit 2, one line naming -o, nothing on the
    terminal; a pipe still gets the HTML (scripts), and '-o -' forces stdout."""
    main, tty = pty.openpty()
    try:
        proc = subprocess.run([*ADVISOR, "report", "-p", str(SHIPPED_PROFILE)], stdout=tty,
                              stderr=subprocess.PIPE, text=True, timeout=120, env=ENV)
        os.set_blocking(main, False)
        try:
            shown = os.read(main, 1 << 16)
        except BlockingIOError:
            shown = b""
    finally:
        os.close(main)
        os.close(tty)
    assert proc.returncode == 2 and shown == b""
    assert len(proc.stderr.splitlines()) == 1 and "-o FILE" in proc.stderr
    piped = run("report", "-p", str(SHIPPED_PROFILE))
    assert piped.returncode == 0 and piped.stdout.startswith("<!DOCTYPE")


def test_emit_and_report_create_no_missing_directory_without_mkdir(tmp_path):
    here = profile_made_here(tmp_path / "here.toml")  # no other-machine warning on any host
    for cmd, name in (("emit", "site.sh"), ("report", "r.html")):
        target = tmp_path / "new" / "sub" / name
        proc = run(cmd, "-p", str(here), "-o", str(target))
        assert proc.returncode == 2 and proc.stdout == ""
        assert proc.stderr.splitlines() == [
            f"advisor: error: -o {target}: no directory {tmp_path / 'new'}; --mkdir creates it"]
        assert not (tmp_path / "new").exists()
        proc = run(cmd, "-p", str(here), "-o", str(target), "--mkdir")
        assert proc.returncode == 0 and target.stat().st_size > 0, proc.stderr
        shutil.rmtree(tmp_path / "new")  # the file and its lock (advisor.save.lock_path)
    # png/svg: the named directory itself is created, as before; not its parents
    proc = run("report", "-p", str(here), "-f", "svg", "-o", str(tmp_path / "a" / "figs"))
    assert proc.returncode == 2 and "--mkdir" in proc.stderr and not (tmp_path / "a").exists()


def test_a_pasted_modulepath_is_warned_about_and_never_created(tmp_path):
    """``emit -o $MODULEPATH/advisor/cpu.lua`` with a two-entry MODULEPATH: without --mkdir the
    error names MODULEPATH; with it, no directory named 'mp1:' appears; a directory the user
    made with a ':' on purpose is written into, with the warning."""
    here = profile_made_here(tmp_path / "prof" / "here.toml")
    modulepath = f"{tmp_path / 'mp1'}:{tmp_path / 'mp2'}"
    target = f"{modulepath}/advisor/cpu.lua"
    for extra in ((), ("--mkdir",)):
        proc = run("emit", "-f", "lmod", "-p", str(here), "-o", target, *extra)
        assert proc.returncode == 2 and proc.stdout == "", proc.stderr
        assert len(proc.stderr.splitlines()) == 1 and "MODULEPATH" in proc.stderr
        assert sorted(p.name for p in tmp_path.iterdir()) == ["prof"]
    (tmp_path / "a:b").mkdir()
    proc = run("emit", "-p", str(here), "-o", str(tmp_path / "a:b" / "site.sh"))
    assert proc.returncode == 0 and (tmp_path / "a:b" / "site.sh").exists()
    assert "warning:" in proc.stderr and "MODULEPATH" in proc.stderr
    # a colon only in the file name (a timestamp) is no pasted list
    proc = run("emit", "-p", str(here), "-o", str(tmp_path / "site-12:00.sh"))
    assert proc.returncode == 0 and "MODULEPATH" not in proc.stderr


def _other_machine(tmp_path, memory_less: int):
    """A profile recorded on another machine: this machine's facts with another CPU vendor and
    model, another kernel release, and MemTotal ``memory_less`` bytes below this machine's."""
    from advisor.facts import detect_fingerprint_facts
    from advisor.profile import load_profile
    from advisor.save import save_profile

    here = detect_fingerprint_facts()
    cpu = here.cpu.model_copy(update={"vendor": "OtherVendor", "model_name": "Other CPU 9000"})
    total = here.memory.total_bytes or 64 << 30
    mem = here.memory.model_copy(update={"total_bytes": total - memory_less})
    kernel = here.kernel.model_copy(update={"release": "0.0.1-other"})
    facts = here.model_copy(update={"cpu": cpu, "memory": mem, "kernel": kernel})
    prof = load_profile(SHIPPED_PROFILE)
    dest = tmp_path / "other.toml"
    save_profile(prof.model_copy(update={"facts": facts, "fingerprint": facts.fingerprint()}),
                 dest)
    return dest, here


def test_other_machine_warning_is_a_short_ordered_list_in_human_units(tmp_path):
    """CPU first, then the kernel, memory last and in GiB; a MemTotal 4 KiB apart (what
    firmware reservations differ by) is not listed, one a quarter apart is."""
    from advisor.facts import detect_fingerprint_facts

    here_total = detect_fingerprint_facts().memory.total_bytes or 64 << 30
    for less in (4096, here_total // 4):
        prof, here = _other_machine(tmp_path, less)
        proc = run("emit", "-p", str(prof))
        assert proc.returncode == 0, proc.stderr
        lines = [ln for ln in proc.stderr.splitlines() if "warning:" in ln]
        assert lines[0].startswith("advisor: warning: profile from another machine: fingerprint:")
        items = [ln.split("warning:", 1)[1].strip() for ln in lines[1:]]
        names = [i.split(":", 1)[0] for i in items]
        assert names[:2] == ["cpu.vendor", "cpu.model_name"], items
        assert names.index("kernel.release") > 1
        assert all(len(ln) <= 250 for ln in lines), lines
        if less == 4096:
            assert "memory.total_bytes" not in proc.stderr
        elif here.memory.total_bytes:
            mem = next(i for i in items if i.startswith("memory.total_bytes"))
            assert names[-1] == "memory.total_bytes" and "iB" in mem and "more" in mem, mem
            assert str(here_total) not in mem  # no raw byte counts
