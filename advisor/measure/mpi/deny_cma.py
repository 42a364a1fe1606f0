"""Run a command under a seccomp filter that makes ``process_vm_readv``/``process_vm_writev``
fail with EPERM, the way a container runtime's default profile did (moby/moby#42083).

Usage (as a launcher prefix, so that every MPI rank runs under the filter)::

    mpiexec -n 2 python -m advisor.measure.mpi.deny_cma -- python -m advisor.measure.mpi.rank ...

The filter is built with libseccomp: its Python bindings (``import seccomp``, Debian's
``python3-seccomp``) when importable, else the same C library (``libseccomp.so.2``) through
ctypes.  Every other system call is allowed; the two CMA calls return EPERM (they are not
killed), so the library sees exactly the error a blocked container produces.  The filter is
inherited by every child and survives ``exec``.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import sys
from typing import Sequence

#: The system calls CMA uses (process_vm_readv(2), process_vm_writev(2)).
CMA_SYSCALLS = ("process_vm_readv", "process_vm_writev")

# libseccomp's action encodings (seccomp.h): SCMP_ACT_ALLOW and SCMP_ACT_ERRNO(x).
_SCMP_ACT_ALLOW = 0x7FFF0000


def _scmp_act_errno(code: int) -> int:
    return 0x00050000 | (code & 0x0000FFFF)


def _install_with_bindings() -> bool:
    try:
        import seccomp  # type: ignore[import-not-found]
    except ImportError:
        return False
    flt = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
    for name in CMA_SYSCALLS:
        flt.add_rule(seccomp.ERRNO(errno.EPERM), name)
    flt.load()
    return True


def _install_with_ctypes() -> None:
    path = ctypes.util.find_library("seccomp") or "libseccomp.so.2"
    lib = ctypes.CDLL(path, use_errno=True)
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_rule_add.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int,
                                     ctypes.c_uint]
    lib.seccomp_load.argtypes = [ctypes.c_void_p]
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    ctx = lib.seccomp_init(_SCMP_ACT_ALLOW)
    if not ctx:
        raise OSError("seccomp_init failed")
    try:
        for name in CMA_SYSCALLS:
            nr = lib.seccomp_syscall_resolve_name(name.encode())
            if nr < 0:
                raise OSError(f"libseccomp does not know {name}")
            rc = lib.seccomp_rule_add(ctx, _scmp_act_errno(errno.EPERM), nr, 0)
            if rc != 0:
                raise OSError(-rc, f"seccomp_rule_add({name}) failed")
        rc = lib.seccomp_load(ctx)
        if rc != 0:
            raise OSError(-rc, "seccomp_load failed")
    finally:
        lib.seccomp_release(ctx)


def install_filter() -> str:
    """Install the deny-CMA filter on the calling process (irreversible).

    :return: ``"python-bindings"`` or ``"ctypes"``: which libseccomp front end was used.
    :raises OSError: libseccomp is missing or refused the filter.
    """
    if _install_with_bindings():
        return "python-bindings"
    _install_with_ctypes()
    return "ctypes"


def main(argv: Sequence[str]) -> int:
    args = list(argv)
    if args[:1] == ["--"]:
        args = args[1:]
    if not args:
        sys.stderr.write("usage: python -m advisor.measure.mpi.deny_cma [--] COMMAND [ARGS...]\n")
        return 2
    install_filter()
    os.execvp(args[0], args)
    return 127  # not reached


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
