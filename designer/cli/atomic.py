"""Atomic file writing: a reader sees either the old file or the complete new one, never a part.

The text goes to a temporary file in the target's folder (``os.replace`` is atomic only within one
file system), is flushed and fsynced, then renamed over the target; the folder is fsynced so the
rename survives a power cut (the POSIX ``rename(2)`` + ``fsync(2)`` recipe). On any failure the
temporary file is removed and the previous file is left as it was.
"""

from __future__ import annotations

__all__ = ["write_atomic", "write_data", "check_writable"]

import os
import stat
import tempfile
from pathlib import Path

from designer.errors import InputError, Location

# Mode of a new file when the process umask cannot be read: rw-r--r--, the usual umask 022 result.
_DEFAULT_MODE = 0o644


def _umask() -> int | None:
    """The process umask, read without changing it (Linux exposes it in /proc since 4.7)."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return None


def _new_file_mode(target: Path) -> int:
    """Keep an existing file's permission bits; give a new one what ``open()`` would."""
    try:
        return stat.S_IMODE(target.stat().st_mode)
    except OSError:
        mask = _umask()
        return _DEFAULT_MODE if mask is None else 0o666 & ~mask


def _why(exc: OSError) -> str:
    return (exc.strerror or str(exc)).lower()


def _target(path: str | Path) -> tuple[Path, Path]:
    """The file a write replaces (a symbolic link followed) and its folder; InputError when the
    name or the folder rules a write out."""
    name = str(path)
    if "\x00" in name:  # the OS would refuse it below with a ValueError, not an OSError
        raise InputError("cannot write: the file name contains a NUL character", Location(name.replace("\x00", "\\0")))
    target = Path(path)
    if target.is_symlink():
        target = target.resolve()
    folder = target.parent
    if target.is_dir():
        raise InputError("is a folder; give a file name to write to", Location(name))
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "does not exist"
        raise InputError(f"cannot write: the folder {str(folder)!r} {what}", Location(name))
    return target, folder


def check_writable(path: str | Path) -> None:
    """Fail now, not after a long computation, when :func:`write_atomic` could not write ``path``:
    the same checks, and a trial temporary file created and removed in the target's folder.

    Raises:
        InputError: as :func:`write_atomic` would; nothing is changed.
    """
    name = str(path)
    target, folder = _target(path)
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as exc:
        raise InputError(f"cannot write into the folder {str(folder)!r}: {_why(exc)}", Location(name)) from None
    os.close(fd)
    os.unlink(tmp)


def write_atomic(path: str | Path, text: str) -> None:
    """Replace the file at ``path`` with ``text`` (UTF-8, newlines as given) atomically.

    A symbolic link is followed: the file it points to is replaced and the link kept. An existing
    file keeps its permission bits; a new one gets the mode ``open()`` would give it.

    Args:
        path: the file to write.
        text: its complete new content.

    Raises:
        InputError: the folder does not exist, ``path`` is a folder, or the file cannot be written
            (permission denied, disk full, ...); the message says which, and nothing was changed.
    """
    name = str(path)
    target, folder = _target(path)
    data = text.encode("utf-8")
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as exc:
        raise InputError(f"cannot write into the folder {str(folder)!r}: {_why(exc)}", Location(name)) from None
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, _new_file_mode(target))
        os.replace(tmp, target)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise InputError(f"cannot write: {_why(exc)}; the previous file is unchanged", Location(name)) from None
        raise
    _fsync_folder(folder)


def _fsync_folder(folder: Path) -> None:
    """Make the rename durable. Best effort: some systems cannot open or fsync a folder."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_data(path: Path, data: bytes | str) -> None:
    """Replace ``path`` with ``data`` atomically: text through :func:`write_atomic`, bytes (PNG)
    by the same recipe (temporary file in the target's folder, then rename).

    Raises:
        InputError: the file cannot be written; nothing was changed.
    """
    if isinstance(data, str):
        write_atomic(path, data)
        return
    target = path.resolve()
    tmp = None
    try:
        # An existing picture keeps its permission bits; a new one gets rw-r--r--.
        mode = target.stat().st_mode & 0o777 if target.exists() else 0o644
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.chmod(tmp, mode)
        os.replace(tmp, target)
        tmp = None
    except OSError as exc:
        raise InputError(f"cannot write {path}: {(exc.strerror or str(exc)).lower()}") from None
    finally:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)
