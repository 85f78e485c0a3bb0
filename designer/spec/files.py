"""Reading input files with bounded resources: at most ``MAX_BYTES`` are ever read, binary and
non-UTF-8 files are refused, and a catalog is read only as a regular file, without blocking; a
file as committed in git is read through ``git`` itself (:func:`read_committed_text`).

:mod:`designer.spec.yamlio` parses what these functions read (and re-exports them).
"""

from __future__ import annotations

__all__ = ["MAX_BYTES", "read_text", "read_regular_file", "read_committed_text"]

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


def _git(args: list[str], folder: Path) -> tuple[int, bytes, str]:
    """(exit code, stdout, last line of stderr) of one git command run in ``folder``."""
    import subprocess

    try:
        proc = subprocess.run(["git", *args], cwd=folder, capture_output=True, timeout=60, stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        raise InputError("reading a committed file needs git, and git is not installed") from None
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise InputError(f"cannot run git: {exc}") from None
    why = proc.stderr.decode("utf-8", "replace").strip().splitlines()
    return proc.returncode, proc.stdout, why[-1].removeprefix("fatal: ") if why else ""


def read_committed_text(ref: str, path: str | Path, *, max_bytes: int = MAX_BYTES) -> str:
    """The text of the file at ``path`` as committed in git at revision ``ref``.

    ``git rev-parse`` checks the revision first, so that an unknown revision and a file missing
    from a known one say so apart; ``git show REF:./FILE`` then reads the file. Both run in the
    file's folder, so the path is the one given wherever the repository's root is, and the file
    itself need not exist any more.

    Raises:
        InputError: not a revision, not in a git repository, not in that revision, too large, not
            UTF-8 (located ``FILE:``, the file as given); git missing or failing to run.
    """
    p, where = Path(path), Location(str(path))
    folder = p.parent.resolve()
    if not ref or ref.startswith("-") or not ref.isprintable():
        raise InputError(f"{ref!r} is not a git revision", where, hint="name a branch, tag or commit")
    if not folder.is_dir():
        raise InputError(f"no such folder {str(p.parent)!r}, so no git repository to read from", where)
    code, _, why = _git(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], folder)
    if code != 0 and "not a git repository" in why:
        raise InputError("not in a git repository, so there is no committed version of it", where,
                         hint="commit it first, or compare two files")
    if code != 0:
        raise InputError(f"unknown git revision {ref!r}", where,
                         hint="name a branch, tag or commit of the repository that holds the file")
    code, raw, why = _git(["show", f"{ref}:./{p.name}"], folder)
    if code != 0:
        raise InputError(f"not in git revision {ref!r}" + (f" ({why})" if why else ""), where,
                         hint="name a revision in which the file is committed")
    if len(raw) > max_bytes:
        raise InputError(f"larger than the limit of {max_bytes:,} bytes at git revision {ref!r}", where)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text at git revision {ref!r} (byte {exc.start})", where) from None
