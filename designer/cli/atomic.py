"""Output files: ``-o`` writes only regular files, atomically, and never over what is being read.

The text goes to a temporary file in the target's folder (``os.replace`` is atomic only within one
file system), is flushed and fsynced, then renamed over the target; the folder is fsynced so the
rename survives a power cut (the POSIX ``rename(2)`` + ``fsync(2)`` recipe). A new file is put in
place with ``link(2)``, which fails instead of replacing anything that appeared at that name in
the meantime. On any failure the temporary file is removed and the previous file is left as it was.

A target is refused, before any work and again just before the rename, when it is not a regular
file (a folder, a character or block device such as ``/dev/null``, a FIFO, a socket), when it is
one of the command's own inputs (the spec, a catalog, the design being drawn; compared by device
and inode, so another name or a link is caught too), when it is read-only (no write permission
bit: honoured for root as well, who could otherwise replace it), and when its name ends in ``/``
or is longer than the file system allows. Renaming over a device node as root would otherwise
turn ``/dev/null`` into a regular file for the whole machine.
"""

from __future__ import annotations

__all__ = ["InputFile", "write_atomic", "write_data", "check_writable", "check_output", "spec_inputs",
           "load_spec_for_output"]

import errno
import os
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from designer.cli import interrupt
from designer.errors import InputError, Location

# Mode of a new file when the process umask cannot be read: rw-r--r--, the usual umask 022 result.
_DEFAULT_MODE = 0o644
# POSIX limits used when the file system does not say (Linux: NAME_MAX 255 bytes, PATH_MAX 4096).
_NAME_MAX, _PATH_MAX = 255, 4096
# Bytes of the target's name kept in the temporary file's name (the rest is ".", "." and mkstemp's
# 8 random characters + ".tmp"), so that a long but valid name never makes the temporary one too long.
_TMP_STEM = 64
_SHOWN = 400  # characters of the target's name a message quotes

_KINDS = ((stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
          (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder"))


@dataclass(frozen=True, slots=True)
class InputFile:
    """A file the command reads, which its output must never replace: ``role`` names it in the
    message (``the spec``, ``a catalog``, ``the design``)."""

    role: str
    path: Path


def _where(name: str) -> Location:
    """The target as a message shows it: NUL bytes visible, an absurdly long path cut in the middle."""
    shown = name.replace("\x00", "\\0")
    if len(shown) > _SHOWN:
        shown = f"{shown[:_SHOWN // 2]}...{shown[-_SHOWN // 2:]}"
    return Location(shown)


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


def _why(exc: OSError) -> str:
    return (exc.strerror or str(exc)).lower()


def _limit(folder: Path, name: str, default: int) -> int:
    try:
        return int(os.pathconf(folder if folder.is_dir() else ".", name))
    except (OSError, ValueError):
        return default


def _check_name(name: str, loc: Location) -> None:
    """Refuse names no file can have, or that name a folder, before touching the file system."""
    if "\x00" in name:  # the OS would refuse it with a ValueError, not an OSError
        raise InputError("cannot write: the file name contains a NUL character", loc)
    if not name:
        raise InputError("cannot write: the file name is empty", loc)
    last = name.rstrip("/").rpartition("/")[2]
    if name.endswith("/") or last in ("", ".", ".."):
        raise InputError("names a folder; give a file name to write to (such as "
                         f"{name.rstrip('/') or '.'}/design.yaml)", loc)
    folder = Path(name).parent
    size = len(os.fsencode(last))
    most = _limit(folder, "PC_NAME_MAX", _NAME_MAX)
    if size > most:
        raise InputError(f"cannot write: the file name is {size:,} bytes long; the limit is {most:,}", loc)
    total, most_path = len(os.fsencode(name)), _limit(folder, "PC_PATH_MAX", _PATH_MAX)
    if total >= most_path:
        raise InputError(f"cannot write: the path is {total:,} bytes long; the limit is {most_path - 1:,}", loc)


def _resolve(name: str, loc: Location) -> Path:
    """The file a write replaces: a symbolic link is followed (the file it points to is written)."""
    target = Path(name)
    try:
        if stat.S_ISLNK(os.lstat(target).st_mode):
            target = Path(os.path.realpath(target))
    except (FileNotFoundError, NotADirectoryError):
        pass  # a new file, or a part of the folder path is a file: check_output says which
    except OSError as exc:
        raise InputError(f"cannot write: {_why(exc)}", loc) from None
    return target


def _refuse_existing(target: Path, st: os.stat_result, inputs: Iterable[InputFile], loc: Location) -> None:
    """Refuse an existing target that is not a regular file, is an input, or is read-only."""
    for is_kind, kind in _KINDS:
        if is_kind(st.st_mode):
            if kind == "a folder":
                raise InputError("is a folder; give a file name to write to", loc)
            raise InputError(f"is {kind}, not a regular file; -o writes only regular files (nothing was written)", loc)
    for item in inputs:
        try:
            other = os.stat(item.path)
        except (OSError, ValueError):
            continue
        if (other.st_dev, other.st_ino) == (st.st_dev, st.st_ino):
            raise InputError(f"is {item.role} being read; give another file name (inputs are never overwritten)", loc)
    mode = stat.S_IMODE(st.st_mode)
    if not mode & 0o222 or not os.access(target, os.W_OK):
        raise InputError(f"is read-only (mode {mode:04o}); nothing was written: make it writable or choose "
                         "another file name", loc)


def check_output(path: str | Path, inputs: Iterable[InputFile] = ()) -> Path:
    """The regular file a write to ``path`` replaces or creates, or an error saying why not.

    Args:
        path: the file named by ``-o``.
        inputs: the command's input files; the output may not be any of them.

    Returns:
        The path to write (a symbolic link followed).

    Raises:
        InputError: located at ``path``; nothing is changed.
    """
    name = os.fspath(path)
    loc = _where(name)
    _check_name(name, loc)
    target = _resolve(name, loc)
    folder = target.parent
    try:
        st = os.stat(target)
    except (FileNotFoundError, NotADirectoryError):
        st = None  # a new file, or a part of the folder path is a file: said below
    except OSError as exc:
        raise InputError(f"cannot write: {_why(exc)}", loc) from None
    if st is not None:
        _refuse_existing(target, st, tuple(inputs), loc)
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "does not exist"
        raise InputError(f"cannot write: the folder {str(folder)!r} {what}", loc)
    return target


def _temp_prefix(target: Path) -> str:
    stem = target.name
    while len(os.fsencode(stem)) > _TMP_STEM:
        stem = stem[:-1]
    return f".{stem}."


def check_writable(path: str | Path, inputs: Iterable[InputFile] = ()) -> None:
    """Fail now, not after a long computation, when :func:`write_atomic` could not write ``path``:
    the same checks, and a trial temporary file created and removed in the target's folder.

    Raises:
        InputError: as :func:`write_atomic` would; nothing is changed.
    """
    name = os.fspath(path)
    target = check_output(path, inputs)
    try:
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=_temp_prefix(target), suffix=".tmp")
    except OSError as exc:
        raise InputError(f"cannot write into the folder {str(target.parent)!r}: {_why(exc)}", _where(name)) from None
    os.close(fd)
    os.unlink(tmp)


def _new_file_mode(st: os.stat_result | None) -> int:
    """Keep an existing file's permission bits; give a new one what ``open()`` would."""
    if st is not None:
        return stat.S_IMODE(st.st_mode)
    mask = _umask()
    return _DEFAULT_MODE if mask is None else 0o666 & ~mask


def _put_in_place(tmp: str, target: Path, inputs: tuple[InputFile, ...], loc: Location) -> None:
    """Rename ``tmp`` over ``target`` after checking the target once more (it may have changed while
    the command ran); a new file is linked, which never replaces what appeared meanwhile."""
    try:
        st = os.stat(target)
    except FileNotFoundError:
        st = None
    if st is None:
        try:
            os.link(tmp, target)
        except FileExistsError:
            st = os.stat(target)  # something appeared: judge it like any existing target
        except OSError as exc:
            if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK):
                raise
            # A file system without hard links (FAT, some FUSE mounts): rename, as before.
            os.replace(tmp, target)
            return
        else:
            os.unlink(tmp)
            return
    _refuse_existing(target, st, inputs, loc)
    os.chmod(tmp, stat.S_IMODE(st.st_mode))
    if os.geteuid() == 0 and (st.st_uid, st.st_gid) != (0, 0):
        try:  # root replacing a user's file keeps it the user's
            os.chown(tmp, st.st_uid, st.st_gid)
        except OSError:
            pass
    os.replace(tmp, target)


def write_atomic(path: str | Path, text: str | bytes, inputs: Iterable[InputFile] = ()) -> None:
    """Replace the regular file at ``path`` with ``text`` (UTF-8, newlines as given; or bytes) atomically.

    A symbolic link is followed: the file it points to is replaced and the link kept. An existing
    file keeps its permission bits (and, written by root, its owner); a new one gets the mode
    ``open()`` would give it.

    Args:
        path: the file to write.
        text: its complete new content.
        inputs: the command's input files, which are never replaced.

    Raises:
        InputError: the target is not a regular file, is an input, is read-only, the folder does
            not exist, or the file cannot be written (permission denied, disk full, ...); the
            message says which, and nothing was changed.
    """
    name = os.fspath(path)
    loc = _where(name)
    inputs = tuple(inputs)
    target = check_output(path, inputs)
    folder = target.parent
    data = text.encode("utf-8") if isinstance(text, str) else bytes(text)
    try:
        st = os.stat(target)
    except OSError:
        st = None
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=_temp_prefix(target), suffix=".tmp")
    except OSError as exc:
        raise InputError(f"cannot write into the folder {str(folder)!r}: {_why(exc)}", loc) from None
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, _new_file_mode(st))
        interrupt.check()  # after Ctrl-C nothing is put in place, even if a library swallowed it
        _put_in_place(tmp, target, inputs, loc)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise InputError(f"cannot write: {_why(exc)}; the previous file is unchanged", loc) from None
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


def write_data(path: str | Path, data: bytes | str, inputs: Iterable[InputFile] = ()) -> None:
    """Replace ``path`` with ``data`` (text or bytes, such as a PNG) atomically: :func:`write_atomic`.

    Raises:
        InputError: the file cannot be written; nothing was changed.
    """
    write_atomic(path, data, inputs)


def spec_inputs(spec_path: str | Path, catalogs: Iterable[Path] = (), *, role: str = "the spec"
                ) -> tuple[InputFile, ...]:
    """The files a command that reads a spec (or a design, ``role``) must not overwrite: that file,
    its catalog files and the built-in catalogs."""
    from designer.catalog import load as catalog_load

    return (InputFile(role, Path(spec_path)), *(InputFile("a catalog", Path(p)) for p in catalogs),
            *(InputFile("a built-in catalog", p) for p in catalog_load.builtin_paths()))


def load_spec_for_output(spec_path: str | Path, output: str | None, *, picture: bool = False):
    """The spec and its catalogs, for a command that will write ``output`` (or nothing: None).

    In this order, so that the first problem is the one reported: the target is checked against
    the spec before anything is read (a device node, a folder name or the spec itself is refused
    first); with ``picture``, its picture format is read from the name (PNG and SVG need
    matplotlib); the spec is loaded; and the target is checked against the catalogs the spec
    names, with a trial write (:func:`check_writable`), so that a long solve never ends in an
    unwritable file.

    Returns:
        ``(spec, catalog, image_format)``: as :func:`designer.planner.inputs.load_inputs` gives
        them, and the picture format (None without ``picture`` or ``output``).
    """
    from designer.planner import inputs

    image = None
    if output is not None:  # the name as typed: a trailing '/' says it is a folder
        check_output(output, spec_inputs(spec_path))
        if picture:
            from designer.pictures import plot

            image = plot.format_of(output, plot.IMAGE_FORMATS)
            plot.check_matplotlib()
    spec, catalog = inputs.load_inputs(spec_path)
    if output is not None:
        check_writable(output, spec_inputs(spec_path, spec.catalogs))
    return spec, catalog, image
