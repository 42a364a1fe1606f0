"""The error boundary and the CLI's own output: the one place that writes to the terminal and
turns errors into exit codes.

stdout carries the product (``out``); human lines go to stderr (``err``, ``warn``), with control
and bidirectional characters escaped so a hostile profile, file name or plugin message cannot
move the cursor, retitle the terminal, forge lines or reorder what the user reads.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import sys

import typer

from advisor.errors import AdvisorError, ExitCode

#: C0 and C1 control characters, and the Unicode bidirectional marks/overrides (CVE-2021-42574,
#: "Trojan Source"): shown escaped.
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def printable(text: str, *, keep_newlines: bool = False) -> str:
    """``text`` with control and bidi characters written as ``\\xNN`` / ``\\uNNNN`` escapes
    (newlines kept when ``keep_newlines``: multi-line table cells)."""

    def esc(m: "re.Match[str]") -> str:
        c = m.group()
        if keep_newlines and c == "\n":
            return c
        return f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}"

    return _UNPRINTABLE.sub(esc, text)


def err(message: str) -> None:
    """One human line on stderr, prefixed ``advisor:``."""
    sys.stderr.write(f"advisor: {printable(str(message))}\n")


def warn(message: str) -> None:
    """One warning line on stderr."""
    sys.stderr.write(f"advisor: warning: {printable(str(message))}\n")


def out(text: str) -> None:
    """The product on stdout, flushed."""
    sys.stdout.write(text)
    sys.stdout.flush()


def exit_with(code: ExitCode) -> None:
    """End the command with ``code`` (raises ``typer.Exit``)."""
    raise typer.Exit(int(code))


def boundary(fn):
    """The error boundary: AdvisorError -> one line on stderr and its exit code, no traceback."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except (typer.Exit, typer.Abort):
            raise
        except SystemExit as exc:
            if isinstance(exc.__context__, BrokenPipeError):
                # rich's Console turns a closed stdout (`advisor show | head`) into sys.exit(1);
                # the reader went away: end quietly, as for a BrokenPipeError of our own
                raise typer.Exit(ExitCode.OK) from None
            # only the CLI exits; inside a command, SystemExit comes from a plugin or a
            # library calling sys.exit(): never let it end the run silently with its status
            err(f"internal error: a plugin or library called sys.exit({exc.code!r}) "
                "(ADVISOR_DEBUG=1 shows the traceback)")
            if os.environ.get("ADVISOR_DEBUG"):
                raise
            raise typer.Exit(ExitCode.INTERNAL) from None
        except AdvisorError as exc:
            err(f"error: {exc}")
            if os.environ.get("ADVISOR_DEBUG"):
                for line in exc.details:
                    err(f"  {line}")
            raise typer.Exit(int(exc.exit_code)) from None
        except KeyboardInterrupt:
            err("interrupted")
            raise typer.Exit(ExitCode.INTERRUPTED) from None
        except BrokenPipeError:
            try:
                sys.stdout = open(os.devnull, "w")
            except OSError:
                pass
            raise typer.Exit(ExitCode.OK) from None
        except Exception as exc:
            if os.environ.get("ADVISOR_DEBUG"):
                raise
            err(f"internal error: {type(exc).__name__}: {exc} (ADVISOR_DEBUG=1 shows the "
                "traceback)")
            raise typer.Exit(ExitCode.INTERNAL) from None

    return wrapper


@contextlib.contextmanager
def signals_interrupt():
    """While probing, SIGTERM and SIGHUP (a batch system's time limit, a lost session) raise
    ``KeyboardInterrupt`` like SIGINT does, once: the runner then keeps the completed probes,
    kills what the others started, and the profile is still written (exit 3).  Later signals of
    the same kind are ignored while that is done (the batch system's SIGKILL bounds it)."""
    import signal

    def handler(signum, frame):
        signal.signal(signum, signal.SIG_IGN)
        raise KeyboardInterrupt(signal.Signals(signum).name)

    old = {}
    for sig in (signal.SIGTERM, signal.SIGHUP):
        try:
            old[sig] = signal.signal(sig, handler)
        except (ValueError, OSError):  # not the main thread (library use)
            pass
    try:
        yield
    finally:
        for sig, h in old.items():
            signal.signal(sig, h)
