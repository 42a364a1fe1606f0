"""How the machine a profile was made on differs from this one (``advisor emit`` warns or, with
``--strict``, refuses; ``advisor verify`` warns).

Public API: :func:`machine_mismatch`.  Pure: both sides are ``advisor.models.Facts`` detected
elsewhere (``advisor.facts.detect`` / ``detect_fingerprint_facts``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping

if TYPE_CHECKING:  # pragma: no cover
    from advisor.libraries import Library
    from advisor.models import Facts, Profile

__all__ = ["machine_mismatch"]


def _fmt(v) -> str:
    return "unknown" if v is None else str(v)


def _fingerprint_differences(a: "Facts", b: "Facts") -> list[tuple]:
    """``(dotted name, a's value, b's value)`` of each fingerprinted fact that differs."""
    from advisor.machine_class import flatten

    fa, fb = flatten(a.fingerprint_inputs()), flatten(b.fingerprint_inputs())
    return [(k, fa.get(k), fb.get(k)) for k in sorted(fa.keys() | fb.keys())
            if fa.get(k) != fb.get(k)]


def machine_mismatch(profile: "Profile", current: "Facts",
                     libraries: Mapping[str, "Library"]) -> list[str]:
    """How the machine ``profile`` was made on differs from ``current``; one line per difference.

    Compared: the fingerprint (hardware, kernel, MPI): its line names every fingerprinted fact
    that differs with both values, and says whether the machine class (``Facts.class_fingerprint``:
    memory to the GiB, kernel major.minor) still matches; the MPI implementation, flavour and
    version; the glibc version; the version of every other library the profile has settings
    for; and the security facts that decide whether single-copy (CMA) transfers work (Yama
    ``ptrace_scope``, seccomp mode, ``CAP_SYS_PTRACE``, container), which the fingerprint leaves
    out (case ``cma-docker-seccomp``: a profile made on the host does not hold inside a
    container whose seccomp filter blocks ``process_vm_readv``).  A fact unknown on either side
    is not a difference, except the fingerprint.

    :param libraries: library records (``Registry.libraries``, plugin-registered ones included)
        that say which version of a library the facts record.
    :return: empty when nothing differs.
    """
    from advisor.libraries import version_of

    libs_known = libraries

    from advisor.facts import fast_detection_sees_mpi
    from advisor.models import MpiFacts

    lines = []
    pf = profile.facts
    here_fp = current.fingerprint()
    # As in ``advisor.facts.same_machine``: when ``current`` comes from the fast detection,
    # which cannot identify the profile's MPI (HPE Cray MPICH, Open MPI: it reads only
    # ``mpichversion``), MPI is left out of the comparison on both sides.
    blind = current.mpi.implementation is None and not fast_detection_sees_mpi(pf)
    a_f, b_f = ((f.model_copy(update={"mpi": MpiFacts()}) for f in (pf, current)) if blind
                else (pf, current))
    own = pf.fingerprint() == profile.fingerprint
    if a_f.fingerprint() != b_f.fingerprint() or not own:
        host = pf.hostname or profile.provenance.hostname or "unknown host"
        differ = [f"{k} (profile {_fmt(a)}, this machine {_fmt(b)})"
                  for k, a, b in _fingerprint_differences(a_f, b_f)]
        if not own:
            differ.append("the profile's recorded fingerprint does not match its own facts "
                          "(edited, or made by another advisor version)")
        cls_p, cls_here = a_f.class_fingerprint(), b_f.class_fingerprint()
        cls = (f"same machine class ({cls_here})" if cls_p == cls_here else
               f"another machine class (profile {cls_p}, this machine {cls_here})")
        lines.append(f"fingerprint: the profile was made on {host} ({profile.fingerprint}), "
                     f"this machine is {current.hostname or 'unknown host'} ({here_fp}); "
                     f"{cls}; differing facts: {', '.join(differ) or 'none recorded'}")

    def diff(label: str, a, b) -> None:
        if a is not None and b is not None and str(a) != str(b):
            lines.append(f"{label}: profile {_fmt(a)}, this machine {_fmt(b)}")

    diff("MPI implementation", pf.mpi.implementation, current.mpi.implementation)
    diff("MPI flavour", pf.mpi.flavour, current.mpi.flavour)
    diff("MPI version", pf.mpi.version, current.mpi.version)
    diff("glibc version", pf.kernel.glibc_version, current.kernel.glibc_version)
    libs = sorted({s.library for _, _, s in profile.settings(kinds=("env", "config"),
                                                             include_defaults=True)}
                  - {n for n, lib in libs_known.items() if lib.version_field})  # said above
    for lib in libs:
        diff(f"{lib} version", version_of(pf, lib, libs_known),
             version_of(current, lib, libs_known))
    ps, cs = pf.security, current.security
    diff("Yama ptrace_scope", ps.ptrace_scope, cs.ptrace_scope)
    diff("seccomp mode", ps.seccomp_mode, cs.seccomp_mode)
    diff("CAP_SYS_PTRACE", ps.cap_sys_ptrace, cs.cap_sys_ptrace)
    diff("container", ps.container, cs.container)
    return lines
