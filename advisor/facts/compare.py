"""How the machine a profile was made on differs from this one (``advisor emit`` warns or, with
``--strict``, refuses; ``advisor verify`` warns).

Public API: :func:`machine_mismatch` (the differences, one line each, most decisive first) and
:func:`warning_lines` (those lines as the CLI prints them).  Pure: both sides are
``advisor.models.Facts`` detected elsewhere (``advisor.facts.detect`` /
``detect_fingerprint_facts``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping

if TYPE_CHECKING:  # pragma: no cover
    from advisor.libraries import Library
    from advisor.models import Facts, Profile

__all__ = ["MEMORY_TOLERANCE", "MAX_LISTED", "machine_mismatch", "warning_lines", "error_line"]

#: MemTotal differences up to this fraction of the larger value are reservations, not another
#: machine: not listed, and alone they make no mismatch.  Identical nodes differ in MemTotal by
#: what the firmware and the kernel reserve before counting.  Measured: the shipped profiles of
#: one 24 GiB VM type record 25276510208 and 25276063744 B, and the VM read 25276059648 B with
#: a third kernel build - 440 KiB (0.002 %) apart.  The largest reservation that differs
#: between nodes of one build is a kdump ``crashkernel`` area on some nodes and not on others:
#: the kernel's kdump.rst examples reserve 64-128 MiB, RHEL 9's default
#: ``1G-4G:192M,4G-64G:256M,64G-:512M`` up to 512 MiB, at most 1.6 % of a node (256 MiB of
#: 16 GiB).  The smallest real hardware difference, one DIMM missing of up to 32 equal ones, is
#: 3.1 % or more.  2 % lies between.
MEMORY_TOLERANCE = 0.02

#: At most this many differing facts are listed one per line; the rest are named on one line.
MAX_LISTED = 8
#: How the lines of :func:`machine_mismatch` that are not one fact begin (read back by
#: :func:`error_line`).
_HEAD = "fingerprint:"
_NOT_OWN = "the profile's recorded fingerprint"
_MORE = "and "

#: Fingerprinted facts that have their own line (compared even when the fingerprint is not).
_OWN_LABEL = {"mpi.implementation": "MPI implementation", "mpi.flavour": "MPI flavour",
              "mpi.version": "MPI version", "kernel.glibc_version": "glibc version"}

#: The order differences are listed in, most decisive first; a fact not named sorts within its
#: group by name.  Group 0, what the advice was measured on: the CPU, the GPUs, MPI and the
#: libraries the profile has settings for.  Group 1, the operating system: kernel, glibc, THP
#: and page sizes, and the security facts that decide CMA.  Group 2, the amount and layout of
#: memory.
_ORDER = ("cpu.vendor", "cpu.model_name", "cpu.arch", "cpu.microarch", "cpu.cores_physical",
          "cpu.cores_logical", "cpu.cache_l3_bytes", "cpu.cache_l2_bytes", "cuda",
          "MPI implementation", "MPI flavour", "MPI version", "mpi.device",
          "mpi.library_version", "mpi.mpi4py_version")
_OS_ORDER = ("kernel.system", "kernel.release", "glibc version", "memory.thp_enabled",
             "memory.thp_defrag", "memory.thp_pmd_size_bytes", "memory.page_size_bytes",
             "memory.huge_page_sizes_bytes", "Yama ptrace_scope", "seccomp mode",
             "CAP_SYS_PTRACE", "container")


def _rank(label: str) -> tuple:
    """Sort key of a difference's label: (group, place in the group's order, label)."""
    for group, order in enumerate((_ORDER, _OS_ORDER)):
        if label in order:
            return (group, order.index(label), label)
    if label.startswith(("cpu.", "mpi.", "cuda")) or label.endswith(" version"):
        return (0, len(_ORDER), label)
    if label.startswith(("kernel.", "memory.thp")):
        return (1, len(_OS_ORDER), label)
    return (2, 0, label)


def _fmt(key: str, v) -> str:
    """A fact's value for a person: sizes in binary units (``advisor.specs.units``), GPUs by
    name, ``unknown`` for None."""
    from advisor.specs.units import format_bytes, readable_bytes

    if v is None:
        return "unknown"
    if key == "memory.total_bytes" and isinstance(v, int):
        return format_bytes(v, digits=4)
    if key.endswith("_bytes") and isinstance(v, int):
        return readable_bytes(v)
    if key.endswith("_bytes") and isinstance(v, list):
        return ", ".join(readable_bytes(x) if isinstance(x, int) else str(x) for x in v) or "none"
    if key == "memory.hugetlb_pages" and isinstance(v, dict):
        return ", ".join(f"{n} x {readable_bytes(int(k)) if str(k).isdigit() else k}"
                         for k, n in sorted(v.items())) or "none"
    if key == "cuda" and isinstance(v, list):
        return ", ".join(str(d.get("name", d)) if isinstance(d, dict) else str(d)
                         for d in v) or "none"
    return str(v)


def _line(key: str, a, b) -> str:
    """``<label>: profile <a>, this machine <b>``; memory totals also say by how much."""
    label = _OWN_LABEL.get(key, key)
    line = f"{label}: profile {_fmt(key, a)}, this machine {_fmt(key, b)}"
    if key == "memory.total_bytes" and isinstance(a, int) and isinstance(b, int):
        from advisor.specs.units import readable_bytes

        line += f" ({readable_bytes(abs(b - a))} {'more' if b > a else 'less'})"
    return line


def _tolerated(key: str, a, b) -> bool:
    """Whether the difference of fact ``key`` is within what identical nodes show."""
    if key == "memory.total_bytes" and isinstance(a, int) and isinstance(b, int) and max(a, b):
        return abs(a - b) <= MEMORY_TOLERANCE * max(a, b)
    return False


def _fingerprint_differences(a: "Facts", b: "Facts") -> list[tuple]:
    """``(dotted name, a's value, b's value)`` of each fingerprinted fact that differs beyond
    its tolerance (``MEMORY_TOLERANCE``)."""
    from advisor.machine_class import flatten

    fa, fb = flatten(a.fingerprint_inputs()), flatten(b.fingerprint_inputs())
    return [(k, fa.get(k), fb.get(k)) for k in sorted(fa.keys() | fb.keys())
            if fa.get(k) != fb.get(k) and not _tolerated(k, fa.get(k), fb.get(k))]


def machine_mismatch(profile: "Profile", current: "Facts",
                     libraries: Mapping[str, "Library"]) -> list[str]:
    """How the machine ``profile`` was made on differs from ``current``; one line per difference,
    most decisive first.

    Compared: the fingerprint (hardware, kernel, MPI): when it differs, the first line names
    both hosts and fingerprints and says whether the machine class (``Facts.class_fingerprint``:
    memory to the GiB, kernel major.minor) still matches, and each fingerprinted fact that
    differs gets a line; the MPI implementation, flavour and version; the glibc version; the
    version of every other library the profile has settings for; and the security facts that
    decide whether single-copy (CMA) transfers work (Yama ``ptrace_scope``, seccomp mode,
    ``CAP_SYS_PTRACE``, container), which the fingerprint leaves out (case
    ``cma-docker-seccomp``: a profile made on the host does not hold inside a container whose
    seccomp filter blocks ``process_vm_readv``).  A fact unknown on either side is not a
    difference, except in the fingerprint.  A MemTotal within ``MEMORY_TOLERANCE`` is not a
    difference: a sibling node whose firmware reserves a few MiB more is the same machine.

    Each fact line reads ``<name>: profile <value>, this machine <value>``, sizes in binary
    units.  Order: CPU, GPUs, MPI and library versions; then kernel, glibc, THP, page sizes and
    security; then memory size and layout.  Beyond ``MAX_LISTED`` fact lines, the rest are
    named on one last line.

    :param libraries: library records (``Registry.libraries``, plugin-registered ones included)
        that say which version of a library the facts record.
    :return: empty when nothing differs.
    """
    from advisor.facts import fast_detection_sees_mpi
    from advisor.libraries import version_of
    from advisor.models import MpiFacts

    facts: dict[str, str] = {}  # label -> line
    head = []
    pf = profile.facts
    # As in ``advisor.facts.same_machine``: when ``current`` comes from the fast detection,
    # which cannot identify the profile's MPI (HPE Cray MPICH, Open MPI: it reads only
    # ``mpichversion``), MPI is left out of the comparison on both sides.
    blind = current.mpi.implementation is None and not fast_detection_sees_mpi(pf)
    a_f, b_f = ((f.model_copy(update={"mpi": MpiFacts()}) for f in (pf, current)) if blind
                else (pf, current))
    own = pf.fingerprint() == profile.fingerprint
    differ = _fingerprint_differences(a_f, b_f)
    if differ or not own:
        host = pf.hostname or profile.provenance.hostname or "unknown host"
        cls_p, cls_here = a_f.class_fingerprint(), b_f.class_fingerprint()
        cls = (f"same machine class ({cls_here})" if cls_p == cls_here else
               f"another machine class (profile {cls_p}, this machine {cls_here})")
        head.append(f"{_HEAD} the profile was made on {host} ({profile.fingerprint}), "
                    f"this machine is {current.hostname or 'unknown host'} "
                    f"({current.fingerprint()}); {cls}")
        if not own:
            head.append(f"{_NOT_OWN} does not match its own facts "
                        "(edited, or made by another advisor version)")
        for k, a, b in differ:
            facts[_OWN_LABEL.get(k, k)] = _line(k, a, b)

    def diff(label: str, a, b) -> None:
        if a is not None and b is not None and str(a) != str(b) and label not in facts:
            facts[label] = f"{label}: profile {a}, this machine {b}"

    diff("MPI implementation", pf.mpi.implementation, current.mpi.implementation)
    diff("MPI flavour", pf.mpi.flavour, current.mpi.flavour)
    diff("MPI version", pf.mpi.version, current.mpi.version)
    diff("glibc version", pf.kernel.glibc_version, current.kernel.glibc_version)
    libs = sorted({s.library for _, _, s in profile.settings(kinds=("env", "config"),
                                                             include_defaults=True)}
                  - {n for n, lib in libraries.items() if lib.version_field})  # said above
    for lib in libs:
        diff(f"{lib} version", version_of(pf, lib, libraries), version_of(current, lib, libraries))
    ps, cs = pf.security, current.security
    diff("Yama ptrace_scope", ps.ptrace_scope, cs.ptrace_scope)
    diff("seccomp mode", ps.seccomp_mode, cs.seccomp_mode)
    diff("CAP_SYS_PTRACE", ps.cap_sys_ptrace, cs.cap_sys_ptrace)
    diff("container", ps.container, cs.container)
    ordered = [facts[label] for label in sorted(facts, key=_rank)]
    if len(ordered) > MAX_LISTED:
        rest = sorted(facts, key=_rank)[MAX_LISTED - 1:]
        ordered = ordered[:MAX_LISTED - 1] + [f"{_MORE}{len(rest)} more: {', '.join(rest)}"]
    return head + ordered


def error_line(differences: list[str]) -> str:
    """``differences`` (:func:`machine_mismatch`, not empty) as one line for an error
    (``advisor emit --strict``): how many facts differ and the first of them, or the head line
    when only the fingerprint record differs."""
    items = [d for d in differences if not d.startswith((_HEAD, _NOT_OWN))]
    listed = [d for d in items if not d.startswith(_MORE)]
    more = sum(int(d[len(_MORE):].split()[0]) for d in items if d.startswith(_MORE))
    if not listed:
        return f"profile is for another machine: {differences[0]}"
    return (f"profile is for another machine ({len(listed) + more} fact(s) differ, first "
            f"{listed[0]})")


def warning_lines(differences: list[str]) -> list[str]:
    """The lines of the "profile from another machine" warning for ``differences``
    (:func:`machine_mismatch`): the first introduces the list, the others are indented items,
    so the warning reads as one short list.  Empty for no differences."""
    if not differences:
        return []
    return ([f"profile from another machine: {differences[0]}"]
            + [f"  {d}" for d in differences[1:]])
