"""Writing files: atomic replacement under a lock, an early writability check, and saving a
profile or rescuing it when saving fails.

A write goes to a temporary file in the same directory, is fsync'ed, renamed over the target and
the directory fsync'ed, serialised by a lock file beside the target (``filelock``), so a reader
sees either the previous file or the complete new one, never a torn file.

The lock is a hidden sibling, ``.NAME.lock`` (:func:`lock_path`), not ``NAME.lock``:

* it must live in the target's directory: writers on different nodes of a cluster meet only on
  the shared file system itself (``flock``/``fcntl`` locks reach the server on NFSv4, and on
  Lustre mounted with ``-o flock``); a lock kept node-local (``/tmp``, the user's cache) would
  not serialise two nodes writing the same profile or module file;
* it must not be removed after use: unlinking a lock file that another writer has just opened
  and is waiting on lets a third writer lock a fresh inode of the same name, and two writers
  then run at once.  So the file stays;
* so it is hidden: a leading dot keeps it out of ``ls``, of shell globs, and of module trees
  (Lmod and Environment Modules skip dot files when they walk ``MODULEPATH``), so
  ``advisor emit -f lmod -o modules/advisor/1.0.lua`` adds no second "module".
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Optional

from advisor.errors import ProfileError

__all__ = ["atomic_write_text", "check_writable", "lock_path", "rescue_profile", "save_profile",
           "save_or_rescue"]


def lock_path(path: Path | str) -> Path:
    """The lock file that serialises writers of ``path``: ``.NAME.lock`` in the same directory
    (hidden, kept after use; see the module docstring for why)."""
    path = Path(path)
    return path.parent / f".{path.name}.lock"


def _umask() -> int:
    """This process's umask, read from ``/proc/self/status`` (Linux >= 4.7, no side effect);
    elsewhere set and restored with ``os.umask``."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _remove_stale_temporaries(path: Path) -> None:
    """Delete ``.<name>.*.tmp`` files beside ``path`` left by a writer that was killed (SIGKILL,
    OOM, node reboot) between creating and renaming its temporary file.  Called with the lock
    held: every writer creates its temporary only under the lock, so any present now is stale."""
    import glob
    import re

    # exactly what mkstemp below makes: 8 characters of tempfile's alphabet between the dots,
    # so the temporaries of another target (``name.bak``) in the same directory are left alone
    mine = re.compile(re.escape(f".{path.name}.") + r"[a-z0-9_]{8}\.tmp")
    try:
        for stale in path.parent.glob(f".{glob.escape(path.name)}.*.tmp"):
            if not mine.fullmatch(stale.name):
                continue
            try:
                stale.unlink()
            except OSError:
                pass
    except OSError:
        pass


def atomic_write_text(path: Path | str, text: str) -> None:
    """Write ``text`` to ``path`` atomically under a lock; the old file stays on any failure.

    A symbolic link is written through: its target is replaced and the link stays (module trees
    link ``default`` to a version file).

    :raises ProfileError: the directory cannot be created, the disk is full, or the lock cannot
        be taken within 60 s (another advisor writes the same file).
    """
    from filelock import FileLock, Timeout

    path = _through_links(Path(path))
    data = text.encode("utf-8")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ProfileError(f"{path}: cannot create directory: {exc.strerror or exc}") from None
    lock = FileLock(str(lock_path(path)))
    try:
        with lock.acquire(timeout=60):
            _remove_stale_temporaries(path)
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(data)
                    fh.flush()
                    os.fsync(fh.fileno())
                try:  # mkstemp makes 0600: keep the old file's mode, else what open() gives
                    mode = (path.stat().st_mode & 0o7777 if path.exists()
                            else 0o666 & ~_umask())
                    os.chmod(tmp, mode)
                except OSError:
                    pass
                os.replace(tmp, path)
            except BaseException:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
                raise
            try:
                dfd = os.open(path.parent, os.O_RDONLY)
                try:
                    os.fsync(dfd)
                finally:
                    os.close(dfd)
            except OSError:
                pass
    except Timeout:
        raise ProfileError(f"{path}: locked by another advisor (lock {lock.lock_file})") from None
    except OSError as exc:
        raise ProfileError(f"{path}: cannot write, previous file kept: {exc.strerror or exc}") from None


def _through_links(path: Path) -> Path:
    """The file a write to ``path`` should replace: the final target when ``path`` is a symbolic
    link (also a dangling one), else ``path``."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def check_writable(path: Path | str) -> None:
    """Fail early when ``path`` cannot be written: its directory cannot be created, or no file
    can be created in it (read-only, permissions, no inodes).  Called before a long probe so the
    user learns it in a second, not after minutes of measuring.  Leaves nothing behind but the
    directory.

    :raises ProfileError: naming ``path`` and the reason.
    """
    path = _through_links(Path(path))
    if path.is_dir():
        raise ProfileError(f"{path}: is a directory; give a file name")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".check", dir=path.parent)
        os.close(fd)
        os.unlink(tmp)
    except OSError as exc:
        raise ProfileError(f"{path}: cannot write here: {exc.strerror or exc}") from None


def rescue_profile(profile, failed: Path | str) -> Optional[Path]:
    """After saving to ``failed`` went wrong (disk full, quota), try to keep the measurements in
    the temporary directory (``tempfile.gettempdir()``, ``$TMPDIR``) as
    ``advisor-rescued-<name>-<pid>.toml``.  Returns its path, or None when that fails too."""
    from advisor.profile import profile_to_toml

    failed = Path(failed)
    target = Path(tempfile.gettempdir()) / f"advisor-rescued-{failed.stem}-{os.getpid()}.toml"
    try:
        atomic_write_text(target, profile_to_toml(profile))
    except ProfileError:
        return None
    return target


def save_profile(profile, path: Path | str) -> Path:
    """Validate-by-construction and write ``profile`` atomically to ``path``; returns the path."""
    from advisor.profile import profile_to_toml

    path = Path(path)
    atomic_write_text(path, profile_to_toml(profile))
    return path


def save_or_rescue(profile, path: Path | str, *, what: str = "the profile") -> Path:
    """Save ``profile`` to ``path``; when that fails (disk full, quota, lock), keep what was
    measured at such cost in a rescue file (``rescue_profile``) and say where.  Used by
    ``advisor probe`` and ``advisor verify``: the one place that decides save-or-rescue.

    :param what: how the message names the content ("the profile with the verdicts").
    :return: ``path`` once written.
    :raises ProfileError: the save failed; the message ends with the rescue file's path, or is
        the original error when the rescue failed too.
    """
    try:
        return save_profile(profile, path)
    except ProfileError as exc:
        rescued = rescue_profile(profile, path)
        if rescued is None:
            raise
        raise ProfileError(f"{exc}; {what} was saved to {rescued} instead") from None
