"""Reading input files with bounded resources: at most ``MAX_BYTES`` are ever read, binary and
non-UTF-8 files are refused, and a catalog is read only as a regular file, without blocking.

:mod:`designer.spec.yamlio` parses what these functions read (and re-exports them).
"""

from __future__ import annotations

__all__ = ["MAX_BYTES", "read_text", "read_regular_file"]

import os
import stat
from pathlib import Path

from designer.errors import InputError, Location

MAX_BYTES = 10 * 1024 * 1024  # specs and catalogs are kilobytes; 10 MB is far beyond any real one


def read_text(path: str | Path, *, max_bytes: int = MAX_BYTES) -> str:
    """Read a YAML file's text, refusing missing, unreadable, binary or oversized files.

    At most ``max_bytes + 1`` bytes are ever read, so a device or pipe that never ends
    (``/dev/zero``) is refused as too large instead of filling memory.

    Raises:
        InputError: located ``FILE:`` (the whole file is the problem).
    """
    p = Path(path)
    name = str(path)
    try:
        size = p.stat().st_size
        if p.is_dir():
            raise InputError("is a directory, not a YAML file", Location(name))
        if size > max_bytes:
            raise InputError(f"file is {size:,} bytes; the limit is {max_bytes:,}", Location(name))
        with p.open("rb") as stream:
            raw = stream.read(max_bytes + 1)
    except FileNotFoundError:
        raise InputError("no such file", Location(name)) from None
    except OSError as exc:
        raise InputError(f"cannot read file: {(exc.strerror or str(exc)).lower()}", Location(name)) from None
    except ValueError as exc:  # a NUL byte in the path
        raise InputError(f"cannot read file: {exc}", Location(name)) from None
    if len(raw) > max_bytes:
        raise InputError(f"file is larger than the limit of {max_bytes:,} bytes", Location(name))
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text (byte {exc.start})", Location(name)) from None
    if "\x00" in text:
        raise InputError("binary file (contains NUL bytes), not YAML", Location(name))
    return text


def read_regular_file(path: str | Path, *, max_bytes: int = MAX_BYTES) -> bytes:
    """The bytes of a regular file of at most ``max_bytes``; ``OSError`` or ``ValueError`` otherwise.

    The file is opened without blocking (a FIFO cannot hang the reader) and checked with ``fstat``
    on the open descriptor, so it cannot be swapped for a device between the check and the read.

    Raises:
        OSError: the file cannot be opened, or is not a regular file (``EINVAL``), or is too large
            (``EFBIG``).
        ValueError: a NUL byte in the path.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
    fd = os.open(path, flags)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(22, "not a regular file")
        if st.st_size > max_bytes:
            raise OSError(27, "file too large")
        chunks, size = [], 0
        while size <= max_bytes:
            chunk = os.read(fd, max_bytes + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > max_bytes:
            raise OSError(27, "file too large")
        return b"".join(chunks)
    finally:
        os.close(fd)
