"""MPI_T control variables of the loaded MPI library, through ctypes (mpi4py has no MPI_T binding).

The MPI tool information interface is MPI-4.0 §15.3 ("The MPI Tool Information Interface"):
``MPI_T_init_thread`` / ``MPI_T_finalize`` (§15.3.4), control variables (§15.3.6):
``MPI_T_cvar_get_num``, ``MPI_T_cvar_get_info`` (name, datatype, scope), ``MPI_T_cvar_get_index``
(name lookup, MPI-3.1), ``MPI_T_cvar_handle_alloc``, ``MPI_T_cvar_read``, ``MPI_T_cvar_write``.
A variable of scope ``MPI_T_SCOPE_ALL_EQ`` may be written at run time only with the same value
on every process (the caller's job: every rank writes the same value at the same point).

Types follow MPICH's ``mpi.h`` (MPICH ABI, ``libmpi.so.12``): handles are pointers,
``MPI_Datatype`` is ``int`` (``MPI_INT`` = 0x4c000405, ``MPI_UNSIGNED`` = 0x4c000406, ...), the
scope enum starts at ``MPI_T_SCOPE_CONSTANT`` = 60438 (``MPI_T_SCOPE_ALL_EQ`` = 60444).

What honours a run-time write (measured with MPICH 5.0.2 from the pip wheel, 2 ranks on a loaded
2-core VM, 4 KiB ping-pong, medians of 1000 round trips, six rounds alternating in one launch):

* ``MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD`` (int, scope ALL_EQ): honoured per message.  With CMA
  enabled at init: 2.34-2.54 us one way after writing 1 vs 1.87-1.91 us after writing 2**30
  (background.md §4 saw 2.9 vs 1.0 us on the same VM in a quieter state).  With CMA disabled at
  init the threshold changes nothing (1.85-1.90 vs 1.85-2.03 us).
* ``MPIR_CVAR_CH4_CMA_ENABLE`` (int, scope ALL_EQ): also honoured at run time in 5.0.2, against
  the guess that it is read only at init: writing 1 after an init with 0 made threshold 1 slow
  again (2.34-2.60 vs 1.79-2.27 us), writing 0 after an init with 1 made threshold 1 as fast as
  the copy path (1.78-1.90 us).  A run-time enable skips MPICH's init check (Yama
  ``ptrace_scope``), so the paired mode does not rely on it: it launches with CMA enabled (the
  init check stays in force) and switches only the threshold.

The module only loads a library that the process already has (``RTLD_NOLOAD`` where the C
library supports it): it never picks an MPI by itself.
"""

from __future__ import annotations

import ctypes
import os
from typing import Optional

#: ``MPI_THREAD_SINGLE`` (mpi.h): the tool interface needs no threads here.
MPI_THREAD_SINGLE = 0
#: ``MPI_SUCCESS``.
MPI_SUCCESS = 0
#: MPICH ABI datatype handles (mpi.h) of the integer kinds a CVAR may have.
_INT_TYPES = {0x4c000405: ctypes.c_int, 0x4c000406: ctypes.c_uint,
              0x4c000807: ctypes.c_long, 0x4c000808: ctypes.c_ulong,
              0x4c000809: ctypes.c_longlong, 0x4c00083a: ctypes.c_int64,
              0x4c000845: ctypes.c_longlong}
#: MPICH's scope enum (mpi.h ``MPIR_T_scope_t``), for the names reported.
SCOPES = {60438: "CONSTANT", 60439: "READONLY", 60440: "LOCAL", 60441: "GROUP",
          60442: "GROUP_EQ", 60443: "ALL", 60444: "ALL_EQ"}
#: Longest CVAR name / description read back (MPICH names are < 80 characters).
_NAME_LEN = 256


class MpitError(RuntimeError):
    """An MPI_T call returned an error code (``code``) or the library lacks MPI_T."""

    def __init__(self, what: str, code: int = -1):
        super().__init__(f"{what} failed (MPI_T error {code})" if code >= 0 else what)
        self.code = code


def loaded_libmpi() -> Optional[str]:
    """Path of the ``libmpi`` already mapped into this process (after ``from mpi4py import MPI``),
    read from ``/proc/self/maps``; None when none is mapped."""
    try:
        with open("/proc/self/maps") as fh:
            for line in fh:
                path = line.split()[-1] if line.strip() else ""
                base = os.path.basename(path)
                if base.startswith("libmpi.so") or base.startswith("libmpich.so"):
                    return path
    except OSError:
        return None
    return None


class Cvar:
    """One allocated control variable handle (integer kinds only)."""

    def __init__(self, lib, name: str, index: int, ctype, scope: int):
        self._lib, self.name, self.index, self._ctype, self.scope = lib, name, index, ctype, scope
        self._handle = ctypes.c_void_p()
        count = ctypes.c_int()
        rc = lib.MPI_T_cvar_handle_alloc(index, None, ctypes.byref(self._handle),
                                         ctypes.byref(count))
        if rc != MPI_SUCCESS:
            raise MpitError(f"MPI_T_cvar_handle_alloc({name})", rc)
        if count.value != 1:
            raise MpitError(f"{name}: {count.value} elements, expected 1")

    @property
    def scope_name(self) -> str:
        return SCOPES.get(self.scope, str(self.scope))

    def read(self) -> int:
        buf = self._ctype()
        rc = self._lib.MPI_T_cvar_read(self._handle, ctypes.byref(buf))
        if rc != MPI_SUCCESS:
            raise MpitError(f"MPI_T_cvar_read({self.name})", rc)
        return int(buf.value)

    def write(self, value: int) -> None:
        buf = self._ctype(int(value))
        rc = self._lib.MPI_T_cvar_write(self._handle, ctypes.byref(buf))
        if rc != MPI_SUCCESS:
            raise MpitError(f"MPI_T_cvar_write({self.name}={value})", rc)


class Mpit:
    """An MPI_T session on the loaded libmpi: ``with Mpit() as t: t.cvar(NAME).write(v)``.

    :raises MpitError: no libmpi mapped, no MPI_T symbols, or ``MPI_T_init_thread`` failed.
    """

    def __init__(self, path: Optional[str] = None):
        path = path or loaded_libmpi()
        if not path:
            raise MpitError("no libmpi loaded in this process")
        mode = ctypes.RTLD_GLOBAL | getattr(os, "RTLD_NOLOAD", 0)
        try:
            self._lib = ctypes.CDLL(path, mode=mode)
            self._lib.MPI_T_init_thread  # noqa: B018 (symbol check)
        except (OSError, AttributeError) as exc:
            raise MpitError(f"{path}: no MPI_T interface ({exc})") from exc
        provided = ctypes.c_int()
        rc = self._lib.MPI_T_init_thread(MPI_THREAD_SINGLE, ctypes.byref(provided))
        if rc != MPI_SUCCESS:
            raise MpitError("MPI_T_init_thread", rc)
        self.path = path
        self._open = True
        self._cvars: dict[str, Cvar] = {}

    def __enter__(self) -> "Mpit":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        if self._open:
            for c in self._cvars.values():
                self._lib.MPI_T_cvar_handle_free(ctypes.byref(c._handle))
            self._lib.MPI_T_finalize()
            self._open = False

    def num_cvars(self) -> int:
        n = ctypes.c_int()
        rc = self._lib.MPI_T_cvar_get_num(ctypes.byref(n))
        if rc != MPI_SUCCESS:
            raise MpitError("MPI_T_cvar_get_num", rc)
        return n.value

    def info(self, index: int) -> tuple[str, int, int]:
        """``(name, datatype handle, scope)`` of CVAR ``index`` (``MPI_T_cvar_get_info``)."""
        name = ctypes.create_string_buffer(_NAME_LEN)
        name_len = ctypes.c_int(_NAME_LEN)
        verbosity, dtype, bind, scope = ctypes.c_int(), ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
        enum = ctypes.c_void_p()
        desc_len = ctypes.c_int(0)
        rc = self._lib.MPI_T_cvar_get_info(index, name, ctypes.byref(name_len),
                                           ctypes.byref(verbosity), ctypes.byref(dtype),
                                           ctypes.byref(enum), None, ctypes.byref(desc_len),
                                           ctypes.byref(bind), ctypes.byref(scope))
        if rc != MPI_SUCCESS:
            raise MpitError(f"MPI_T_cvar_get_info({index})", rc)
        return name.value.decode(errors="replace"), dtype.value, scope.value

    def index_of(self, name: str) -> int:
        """Index of the CVAR called ``name`` (a linear ``MPI_T_cvar_get_info`` scan: the name
        lookup every MPI-3.0 library has).  :raises MpitError: no such variable."""
        for i in range(self.num_cvars()):
            if self.info(i)[0] == name:
                return i
        raise MpitError(f"no control variable {name}")

    def cvar(self, name: str) -> Cvar:
        """A handle of the integer CVAR ``name`` (cached).  :raises MpitError: unknown name,
        non-integer type, or handle allocation failed."""
        if name not in self._cvars:
            idx = self.index_of(name)
            _, dtype, scope = self.info(idx)
            ctype = _INT_TYPES.get(dtype & 0xffffffff)
            if ctype is None:
                raise MpitError(f"{name}: datatype 0x{dtype & 0xffffffff:x} is not an integer")
            self._cvars[name] = Cvar(self._lib, name, idx, ctype, scope)
        return self._cvars[name]
