"""One node's task of a fleet probe: ``python -m advisor.cli.fleet_task DIR [probe options]``
(in the CLI package: an entry point that writes stderr and sets the exit status).

Runs ``advisor probe OPTIONS -o DIR/<node>.toml`` in this process, ``<node>`` being
``$SLURMD_NODENAME`` (the node name Slurm knows, set in every task by slurmd) or else the short
host name.  The probe writes the profile atomically (``advisor.save``: a temporary file renamed
over the target), so a task that dies leaves no file and its node reads as "no result".  The
probe's human lines go to ``DIR/logs/<node>.log`` so that a thousand nodes do not interleave on
the launcher's terminal.  Exit status: the probe's, or 2 when the node name or DIR is unusable.
"""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path

from advisor.fleet.submit import NODE_NAME


def node_name() -> str:
    """``$SLURMD_NODENAME``, else the host name up to its first dot."""
    return os.environ.get("SLURMD_NODENAME") or socket.gethostname().split(".")[0]


def main(argv: list[str]) -> int:
    """Run the probe for this node; returns the exit status."""
    if not argv:
        sys.stderr.write("advisor: error: usage: python -m advisor.cli.fleet_task DIR "
                         "[advisor probe options]\n")
        return 2
    out_dir, args = Path(argv[0]), argv[1:]
    node = node_name()
    if not NODE_NAME.fullmatch(node):
        sys.stderr.write(f"advisor: error: node name {node!r} cannot name a file in {out_dir}\n")
        return 2
    try:
        (out_dir / "logs").mkdir(parents=True, exist_ok=True)
        log = open(out_dir / "logs" / f"{node}.log", "w")
    except OSError as exc:
        sys.stderr.write(f"advisor: error: {out_dir}/logs: {exc.strerror or exc}\n")
        return 2
    with log:
        os.dup2(log.fileno(), 1)
        os.dup2(log.fileno(), 2)
        from advisor.cli import app

        target = out_dir / f"{node}.toml"
        sys.argv = ["advisor", "probe", *args, "-o", str(target)]
        try:
            app(args=sys.argv[1:], prog_name="advisor")
        except SystemExit as exc:
            return exc.code if isinstance(exc.code, int) else 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
