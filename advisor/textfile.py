"""Read a user-supplied text file (profile, env file) with the checks bad input deserves.

One place for the refusals every reader needs, so that each gives one line naming the file:
missing, not a regular file (directory, FIFO, device), empty, too large, not UTF-8, NUL bytes.
"""

from __future__ import annotations

from pathlib import Path
from typing import BinaryIO, Type

from advisor.errors import BadInputError


def read_text_file(path: Path | str, *, kind: str, max_bytes: int,
                   error: Type[BadInputError] = BadInputError, allow_empty: bool = True) -> str:
    """The UTF-8 text of ``path``.  The file is only read, never changed.

    :param kind: what the file should be, for messages ("profile", "env file").
    :param max_bytes: larger files are refused before they are read.
    :param error: the ``BadInputError`` subclass to raise.
    :raises BadInputError: (``error``) naming ``path`` and the reason.
    """
    p = Path(path)
    try:
        st = p.stat()
    except FileNotFoundError:
        raise error(f"{p}: no such {kind}") from None
    except OSError as exc:
        raise error(f"{p}: cannot read: {exc.strerror or exc}") from None
    if not p.is_file():
        raise error(f"{p}: not a regular file")
    if st.st_size == 0 and not allow_empty:
        raise error(f"{p}: empty file, not a {kind}")
    if st.st_size > max_bytes:
        raise error(f"{p}: {st.st_size} bytes, larger than any {kind} ({max_bytes} bytes at most)")
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise error(f"{p}: cannot read: {exc.strerror or exc}") from None
    return decode_text(raw, str(p), kind=kind, error=error)


def decode_text(raw: bytes, label: str, *, kind: str,
                error: Type[BadInputError] = BadInputError) -> str:
    """``raw`` as UTF-8 text without NUL bytes; ``label`` names the source in messages.

    :raises BadInputError: (``error``) not UTF-8, or NUL bytes (binary data).
    """
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{label}: not UTF-8 text (byte {exc.start}): binary data?") from None
    if "\x00" in text:
        raise error(f"{label}: contains NUL bytes: binary data, not a {kind}")
    return text


def read_text_stream(stream: BinaryIO, label: str, *, kind: str, max_bytes: int,
                     error: Type[BadInputError] = BadInputError) -> str:
    """The UTF-8 text of a binary stream (standard input), at most ``max_bytes`` bytes.

    :raises BadInputError: (``error``) naming ``label``: too large, not UTF-8, NUL bytes.
    """
    raw = stream.read(max_bytes + 1)
    if len(raw) > max_bytes:
        raise error(f"{label}: larger than any {kind} ({max_bytes} bytes at most)")
    return decode_text(raw, label, kind=kind, error=error)
