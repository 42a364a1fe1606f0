"""Which path Open MPI really selected, read from its own verbose output (pure parsing).

The lines parsed are those Open MPI 5.0.11 prints with ``OMPI_MCA_pml_base_verbose=10``,
``OMPI_MCA_btl_base_verbose=10``, ``OMPI_MCA_smsc_base_verbose=10`` and
``OMPI_MCA_pml_ucx_verbose=10`` (recorded in ``tests/data/openmpi/verbose-*.txt``), e.g.::

    [vm:27642] select: component ob1 selected
    [vm:27642] selected ob1 best priority 20
    [vm:27642] select: init returned failure for component ucx
    [vm:27642] mca: bml: Using sm btl for send to [[56760,1],1] on node vm
    [vm:27642] mca_smsc_base_select: selected shared-memory single-copy component: cma
    [vm:27696] mca_smsc_base_select: no shared-memory single-copy component available for selection
    [vm:27642] .../common_ucx.c:348 support level is none

and, for the UCX path, the protocol tables UCX prints with ``UCX_PROTO_INFO=y`` (stdout)::

    | ucp_context_0 intra-node cfg#1 | tagged message by ucp_tag_send* from host memory        |
    |                          0..92 | eager short                               | sysv/memory |
    |                       93..5028 | eager copy-in copy-out                    | sysv/memory |
    |                      5029..inf | (?) rendezvous zero-copy read from remote | cma/memory  |

Sizes in those rows are bytes (UCX writes ``256K`` for 262144 and ``inf`` for no bound).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

_PID = r"\[[^\]:]+:(\d+)\]"
_PML_SELECTED = re.compile(_PID + r" selected (\S+) best priority (-?\d+)")
_PML_FAILED = re.compile(_PID + r" select: init returned failure for component (\S+)")
_BML = re.compile(_PID + r" mca: bml: Using (\S+) btl for send to \[\[\d+,\d+\],(\d+)\]")
_SMSC_OK = re.compile(_PID + r" mca_smsc_base_select: selected shared-memory single-copy "
                      r"component: (\S+)")
_SMSC_NONE = re.compile(_PID + r" mca_smsc_base_select: no shared-memory single-copy component")
_UCX_SUPPORT = re.compile(_PID + r" .*common_ucx\.c:\d+ support level is (\S+)")
_UCX_ANY = re.compile(_PID + r" .*ucx is enabled on any transport or device")
_TABLE_HEAD = re.compile(r"\|\s*ucp_context_\d+ (intra-node|inter-node|self) cfg#\d+\s*\|"
                         r"\s*(.+?)\s*\|\s*$")
_TABLE_ROW = re.compile(r"\|\s*(\d+[KMG]?)\.\.(\d+[KMG]?|inf)\s*\|\s*(.+?)\s*\|\s*(\S+)\s*\|")
#: The UCX table of plain tagged sends (what MPI_Send uses), read for the intra-node config.
TAG_SEND = "tagged message by ucp_tag_send* from host memory"
INF = -1


def ucx_bytes(text: str) -> int:
    """``"92"`` -> 92, ``"256K"`` -> 262144 (UCX's binary units), ``"inf"`` -> ``INF`` (-1).
    Raises ``ValueError`` on anything else."""
    if text == "inf":
        return INF
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
    return int(text[:-1] if mult > 1 else text) * mult


@dataclass(frozen=True)
class ProtoRow:
    """One row of a UCX protocol table: sizes ``lo..hi`` bytes (``hi`` = ``INF``: no bound)
    use ``protocol`` over ``transport`` (e.g. ``cma/memory``)."""

    lo: int
    hi: int
    protocol: str
    transport: str


@dataclass
class Selection:
    """What one 2-rank run selected (merged over its ranks).

    Attributes:
        pml: PML component selected (``ob1``, ``ucx``, ...), None when not printed.
        pml_priority: its priority.
        pml_declined: PML components whose init returned failure.
        btl_peer: BTL that rank 0 and 1 use to send to the other rank (``sm``, ``tcp``...).
        smsc: single-copy component selected (``cma``...), ``"none"`` when Open MPI said none
            is available, None when not printed.
        ucx_support: UCX's support level on this node for the ucx PML (``none`` means it
            declines), None when not printed.
        ucx_any: the ucx PML was told to accept any transport or device.
        proto: intra-node rows of UCX's table for plain tagged sends (first rank's).
        ranks: process ids seen.
    """

    pml: Optional[str] = None
    pml_priority: Optional[int] = None
    pml_declined: list[str] = field(default_factory=list)
    btl_peer: Optional[str] = None
    smsc: Optional[str] = None
    ucx_support: Optional[str] = None
    ucx_any: bool = False
    proto: list[ProtoRow] = field(default_factory=list)
    ranks: list[str] = field(default_factory=list)

    def path(self) -> Optional[str]:
        """The path in the field's terms: ``ob1+sm+smsc/cma`` (single copy),
        ``ob1+sm copy-in/copy-out`` (no single-copy component), ``ucx``, ``<pml>+<btl>`` or
        None when the PML was not seen."""
        if self.pml is None:
            return None
        if self.pml == "ucx":
            return "ucx"
        if self.pml == "ob1" and self.btl_peer == "sm":
            if self.smsc and self.smsc != "none":
                return f"ob1+sm+smsc/{self.smsc}"
            if self.smsc == "none":
                return "ob1+sm copy-in/copy-out"
        return f"{self.pml}+{self.btl_peer or '?'}"

    def values(self) -> dict:
        """Flat evidence values (str -> scalar)."""
        v: dict = {"path": self.path(), "pml": self.pml, "pml_priority": self.pml_priority,
                   "pml_declined": ",".join(self.pml_declined) or None,
                   "btl_peer": self.btl_peer, "smsc": self.smsc,
                   "ucx_support_level": self.ucx_support,
                   "ucx_any_transport": self.ucx_any or None,
                   "ranks_seen": len(self.ranks)}
        for r in self.proto:
            hi = "inf" if r.hi == INF else str(r.hi)
            v[f"ucx_proto:{r.lo}..{hi}"] = f"{r.protocol} via {r.transport}"
        return {k: x for k, x in v.items() if x is not None}


def parse_verbose(text: str) -> Selection:
    """A ``Selection`` from the ranks' verbose output (stdout and stderr concatenated)."""
    s = Selection()
    in_table = False
    for line in text.splitlines():
        for rx in (_PML_SELECTED, _PML_FAILED, _BML, _SMSC_OK, _SMSC_NONE, _UCX_SUPPORT,
                   _UCX_ANY):
            m = rx.search(line)
            if not m:
                continue
            if m.group(1) not in s.ranks:
                s.ranks.append(m.group(1))
            if rx is _PML_SELECTED:
                s.pml, s.pml_priority = m.group(2), int(m.group(3))
            elif rx is _PML_FAILED and m.group(2) not in s.pml_declined:
                s.pml_declined.append(m.group(2))
            elif rx is _BML and m.group(2) != "self":
                s.btl_peer = m.group(2)
            elif rx is _SMSC_OK:
                s.smsc = m.group(2)
            elif rx is _SMSC_NONE and s.smsc is None:
                s.smsc = "none"
            elif rx is _UCX_SUPPORT:
                s.ucx_support = m.group(2)
            elif rx is _UCX_ANY:
                s.ucx_any = True
            break
        head = _TABLE_HEAD.search(line)
        if head:
            in_table = (head.group(1) == "intra-node" and head.group(2) == TAG_SEND
                        and not s.proto)
            continue
        row = _TABLE_ROW.search(line) if in_table else None
        if row:
            s.proto.append(ProtoRow(ucx_bytes(row.group(1)), ucx_bytes(row.group(2)),
                                    row.group(3), row.group(4)))
        elif in_table and s.proto and "+---" not in line:
            in_table = False
    # a pml selected on the bml line's own rank but no bml line: btl_peer stays None
    return s


def transport_at(rows: list[ProtoRow], nbytes: int) -> Optional[ProtoRow]:
    """The row of ``rows`` that carries a message of ``nbytes`` bytes, or None."""
    for r in rows:
        if r.lo <= nbytes and (r.hi == INF or nbytes <= r.hi):
            return r
    return None
