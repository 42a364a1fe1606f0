"""Live CMA usability test: one *sibling* process reads another with ``process_vm_readv``.

MPI ranks started by one launcher are siblings, not parent and child, so a parent reading its
own child can succeed where ranks fail (Yama ``ptrace_scope=1`` allows attaching to descendants
only; openucx/ucx#3545).  This module therefore starts two children of the calling process:

* ``target``: fills a buffer with random bytes, prints its pid, address, length and the
  SHA-256 of the bytes as one JSON line, then waits until its stdin closes;
* ``reader``: calls ``process_vm_readv(2)`` on the target's buffer and prints the errno and
  whether the bytes it got match the digest.

Both children also report their own security state (``Seccomp:`` and ``CapEff:`` of
``/proc/self/status``, the user namespace) so a failure can be attributed to its cause by
``advisor.measure.mpi.causes``.  The parent additionally reads the target itself, which shows
the parent->child result next to the sibling one.  The test is of the kernel, not of an MPI
library: every MPI plugin whose library uses CMA runs it (``advisor.measure.mpi.usability``).

This file imports only the standard library: the children run it as a script
(``python .../sibling.py target|reader``, so neither the ``advisor`` package nor pydantic is
loaded) and start fast.
"""

from __future__ import annotations

import ctypes
import errno as _errno
import hashlib
import json
import os
import subprocess
import sys
from typing import Optional, Sequence

#: Bytes read by the probe: one base page; any size shows the permission outcome.
PROBE_BYTES = 4096


class _IoVec(ctypes.Structure):
    _fields_ = [("iov_base", ctypes.c_void_p), ("iov_len", ctypes.c_size_t)]


def _libc():
    lib = ctypes.CDLL(None, use_errno=True)
    fn = lib.process_vm_readv
    fn.restype = ctypes.c_ssize_t
    fn.argtypes = [ctypes.c_int, ctypes.POINTER(_IoVec), ctypes.c_ulong,
                   ctypes.POINTER(_IoVec), ctypes.c_ulong, ctypes.c_ulong]
    return fn


def vm_readv(pid: int, addr: int, nbytes: int) -> tuple[int, bytes]:
    """Read ``nbytes`` at ``addr`` of process ``pid`` with ``process_vm_readv(2)``.

    :return: ``(errno, data)``; errno 0 on success (data may be short), else the call's errno
        (EPERM: not permitted; EFAULT: bad remote address, e.g. a device pointer; ESRCH: no
        such process; ENOSYS: kernel without CMA).
    """
    buf = ctypes.create_string_buffer(nbytes)
    local = _IoVec(ctypes.cast(buf, ctypes.c_void_p), nbytes)
    remote = _IoVec(ctypes.c_void_p(addr), nbytes)
    got = _libc()(pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)
    if got < 0:
        return ctypes.get_errno(), b""
    return 0, buf.raw[:got]


def self_security() -> dict:
    """The calling process's own security state, for attributing a failure.

    :return: dict with ``pid``, ``seccomp`` (0 off, 1 strict, 2 filter; None unknown),
        ``cap_eff`` (hex string), ``user_ns`` (``readlink /proc/self/ns/user``),
        ``ptrace_scope`` (Yama value, None when Yama is absent).
    """
    out: dict = {"pid": os.getpid(), "ppid": os.getppid(), "seccomp": None, "cap_eff": None, "user_ns": None,
                 "ptrace_scope": None}
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                key, _, val = line.partition(":")
                if key == "Seccomp":
                    out["seccomp"] = int(val.strip())
                elif key == "CapEff":
                    out["cap_eff"] = val.strip()
    except OSError:
        pass
    try:
        out["user_ns"] = os.readlink("/proc/self/ns/user")
    except OSError:
        pass
    try:
        with open("/proc/sys/kernel/yama/ptrace_scope") as fh:
            out["ptrace_scope"] = int(fh.read().strip())
    except (OSError, ValueError):
        pass
    return out


def errno_name(code: Optional[int]) -> str:
    """``0 -> 'ok'``, ``1 -> 'EPERM'``, unknown -> ``'errno N'``."""
    if code is None:
        return "unknown"
    if code == 0:
        return "ok"
    return _errno.errorcode.get(code, f"errno {code}")


def _target() -> int:
    data = os.urandom(PROBE_BYTES)
    buf = ctypes.create_string_buffer(data, PROBE_BYTES)
    info = self_security()
    info.update(addr=ctypes.addressof(buf), nbytes=PROBE_BYTES,
                sha256=hashlib.sha256(data).hexdigest())
    sys.stdout.write(json.dumps(info) + "\n")
    sys.stdout.flush()
    sys.stdin.read()  # wait until the parent closes our stdin
    return 0


def _reader(pid: int, addr: int, nbytes: int, sha: str) -> int:
    err, data = vm_readv(pid, addr, nbytes)
    info = self_security()
    info.update(errno=err, result=errno_name(err), nbytes_read=len(data),
                verified=bool(err == 0 and hashlib.sha256(data).hexdigest() == sha))
    sys.stdout.write(json.dumps(info) + "\n")
    return 0


def sibling_probe(*, wrap_reader: Sequence[str] = (), wrap_target: Sequence[str] = (),
                  timeout_s: float = 20.0, python: Optional[str] = None) -> dict:
    """Run the live sibling test (two children of this process, one reads the other).

    :param wrap_reader: argv prefix for the reader (e.g. ``["unshare", "--user"]`` to put it
        in its own user namespace, or a seccomp wrapper).
    :param wrap_target: argv prefix for the target.
    :param timeout_s: seconds allowed for each child.
    :return: ``{"result": "ok"|"EPERM"|..., "errno": int, "verified": bool,
        "parent_reads_child": "ok"|"EPERM"|..., "reader": {...}, "target": {...},
        "parent": {...}}``; ``result`` is ``"error"`` with ``"error"`` text when a child could
        not run at all (never raises for a failed read).
    """
    py = python or sys.executable
    mod = [py, os.path.abspath(__file__)]  # as a script: only the standard library loads
    env = dict(os.environ)
    out: dict = {"kind": "siblings", "parent": self_security(),
                 "wrap_reader": list(wrap_reader), "wrap_target": list(wrap_target)}
    try:
        target = subprocess.Popen([*wrap_target, *mod, "target"], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  env=env)
    except OSError as exc:
        out.update(result="error", errno=None, error=f"cannot start target: {exc}")
        return out
    try:
        line = target.stdout.readline()
        if not line:
            target.stdin.close()
            err = target.stderr.read()
            target.wait(timeout=timeout_s)
            out.update(result="error", errno=None, error=f"target failed: {err.strip()[-500:]}")
            return out
        tinfo = json.loads(line)
        out["target"] = tinfo
        perr, pdata = vm_readv(tinfo["pid"], tinfo["addr"], tinfo["nbytes"])
        out["parent_reads_child"] = errno_name(perr)
        try:
            proc = subprocess.run(
                [*wrap_reader, *mod, "reader", str(tinfo["pid"]), str(tinfo["addr"]),
                 str(tinfo["nbytes"]), tinfo["sha256"]],
                capture_output=True, text=True, timeout=timeout_s, env=env)
        except (OSError, subprocess.TimeoutExpired) as exc:
            out.update(result="error", errno=None, error=f"reader failed: {exc}")
            return out
        lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
        if proc.returncode != 0 or not lines:
            out.update(result="error", errno=None,
                       error=f"reader exited {proc.returncode}: {proc.stderr.strip()[-500:]}")
            return out
        rinfo = json.loads(lines[-1])
        out["reader"] = rinfo
        out.update(result=rinfo["result"], errno=rinfo["errno"], verified=rinfo["verified"])
        return out
    finally:
        if target.stdin and not target.stdin.closed:
            target.stdin.close()
        try:
            target.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            target.kill()
            target.wait()


def main(argv: Sequence[str]) -> int:
    if argv[:1] == ["target"]:
        return _target()
    if argv[:1] == ["reader"] and len(argv) == 5:
        return _reader(int(argv[1]), int(argv[2]), int(argv[3]), argv[4])
    sys.stderr.write("usage: python sibling.py target | reader PID ADDR N SHA\n")
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
