"""``-o`` writes only regular files: device nodes, FIFOs, folders, the command's own inputs and
read-only files are refused with one located line and exit 2, before any solve, and left untouched.

Run as root (as CI and many containers do), a rename over a device node would replace it for the
whole machine; the character devices here are real ones made with ``mknod`` in a temporary folder
(root only), and ``/dev/null`` itself is checked to stay a character device.
"""

from __future__ import annotations

import errno
import hashlib
import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from designer import planner
from designer.cli import app, atomic
from designer.errors import InputError
from tiny_spec import TINY

ROOT = Path(__file__).resolve().parents[2]
RUNNER = CliRunner()
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
needs_root = pytest.mark.skipif(not IS_ROOT, reason="mknod of a character device needs root")


def run(*args: object):
    return RUNNER.invoke(app, [str(a) for a in args])


def fingerprint(path: Path) -> tuple:
    """What must not change: the file type, mode, owner, inode, size, times and (for a regular file) bytes."""
    st = os.lstat(path)
    data = hashlib.sha256(path.read_bytes()).hexdigest() if stat.S_ISREG(st.st_mode) else None
    return (stat.S_IFMT(st.st_mode), st.st_mode, st.st_uid, st.st_ino, st.st_rdev, st.st_size, st.st_mtime_ns, data)


def mknull(path: Path) -> Path:
    """A character device with /dev/null's numbers (1, 3), so writing to it is harmless."""
    os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    return path


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.yaml"
    path.write_text(TINY)
    return path


@pytest.fixture
def no_solve(monkeypatch: pytest.MonkeyPatch) -> None:
    """A refused target is refused before the solve, which can take minutes."""
    monkeypatch.setattr(planner, "plan", lambda *a, **k: pytest.fail("solved before the output was checked"))


def refused(result, target: object, pattern: str) -> None:
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"error: {target}: "), line
    assert pattern in line, line
    assert "Traceback" not in result.output


# ---------------------------------------------------------------- device nodes


@needs_root
def test_solve_onto_a_character_device_leaves_it_and_the_spec_untouched(tmp_path, tiny, no_solve):
    node = mknull(tmp_path / "null")
    before, spec_before = fingerprint(node), fingerprint(tiny)
    result = run("solve", tiny, "-o", node)
    refused(result, node, "is a character device, not a regular file; -o writes only regular files")
    assert fingerprint(node) == before and stat.S_ISCHR(os.lstat(node).st_mode)
    assert fingerprint(tiny) == spec_before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["null", "tiny.yaml"]  # no temporary file left


@needs_root
def test_a_symbolic_link_to_a_device_is_refused(tmp_path, tiny, no_solve):
    node = mknull(tmp_path / "null")
    link = tmp_path / "design.yaml"
    link.symlink_to(node)
    before = fingerprint(node)
    refused(run("solve", tiny, "-o", link), link, "is a character device")
    assert fingerprint(node) == before and link.is_symlink()


def test_dev_null_stays_a_character_device(tiny, no_solve):
    before = fingerprint(Path("/dev/null"))
    refused(run("solve", tiny, "-o", "/dev/null"), "/dev/null", "is a character device, not a regular file")
    assert stat.S_ISCHR(os.lstat("/dev/null").st_mode) and fingerprint(Path("/dev/null")) == before


def test_dev_null_as_root_in_a_separate_process(tiny):
    """The installed command end to end: exit 2, /dev/null still a character device."""
    before = fingerprint(Path("/dev/null"))
    proc = subprocess.run([sys.executable, "-m", "designer", "solve", str(tiny), "-o", "/dev/null"],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr == ("error: /dev/null: is a character device, not a regular file; -o writes only "
                           "regular files (nothing was written)\n")
    assert stat.S_ISCHR(os.lstat("/dev/null").st_mode) and fingerprint(Path("/dev/null")) == before


def test_a_fifo_is_refused_without_blocking(tmp_path, tiny, no_solve):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    refused(run("solve", tiny, "-o", fifo), fifo, "is a FIFO (named pipe), not a regular file")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_a_socket_is_refused(tmp_path, tiny, no_solve):
    path = tmp_path / "s.sock"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(path))
        refused(run("solve", tiny, "-o", path), path, "is a socket, not a regular file")
    assert stat.S_ISSOCK(os.lstat(path).st_mode)


# ---------------------------------------------------------------- inputs


def test_solve_onto_its_own_spec_is_refused(tmp_path, tiny, no_solve):
    before = fingerprint(tiny)
    refused(run("solve", tiny, "-o", tiny), tiny, "is the spec being read; give another file name")
    assert fingerprint(tiny) == before


@pytest.mark.parametrize("how", ["symlink", "hardlink", "dot-path"])
def test_the_spec_under_another_name_is_refused(tmp_path, tiny, no_solve, how):
    other = tmp_path / "other.yaml"
    if how == "symlink":
        other.symlink_to(tiny)
    elif how == "hardlink":
        os.link(tiny, other)
    else:
        other = tmp_path / "." / "sub" / ".." / "tiny.yaml"
        (tmp_path / "sub").mkdir()
    before = fingerprint(tiny)
    refused(run("solve", tiny, "-o", other), other, "is the spec being read")
    assert fingerprint(tiny) == before


def test_a_catalog_being_read_is_refused(tmp_path, no_solve):
    cat = tmp_path / "prices.yaml"
    cat.write_text("schema_version: 1\nkind: switch\nitems:\n  - name: nvidia-qm9700\n    price: $30,000\n"
                   "    source: a quote\n    as_of: 2025-01\n")
    spec = tmp_path / "spec.yaml"
    spec.write_text(TINY + "catalogs: [prices.yaml]\n")
    before = fingerprint(cat)
    refused(run("solve", spec, "-o", cat), cat, "is a catalog being read")
    assert fingerprint(cat) == before


def test_a_built_in_catalog_is_refused(tiny, no_solve):
    from designer.catalog import load as catalog_load

    builtin = catalog_load.builtin_paths()[0]
    before = fingerprint(builtin)
    refused(run("solve", tiny, "-o", builtin), builtin, "is a built-in catalog being read")
    assert fingerprint(builtin) == before


def test_draw_onto_its_design_or_catalog_is_refused(tmp_path, tiny):
    design = tmp_path / "fabric.dot"  # a design file may have any name
    assert run("solve", tiny, "-o", design).exit_code == 0
    before = fingerprint(design)
    refused(run("draw", design, "-o", design), design, "is the design being read")
    assert fingerprint(design) == before


# ---------------------------------------------------------------- folders, names, permissions


@pytest.mark.parametrize("name", ["newdir/", "existing/", "existing/."])
def test_a_folder_name_is_refused_and_nothing_is_created(tmp_path, tiny, no_solve, name):
    (tmp_path / "existing").mkdir()
    target = f"{tmp_path}/{name}"
    result = run("solve", tiny, "-o", target)
    assert result.exit_code == 2
    assert "names a folder; give a file name to write to" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["existing", "tiny.yaml"]
    assert list((tmp_path / "existing").iterdir()) == []


def test_frontier_and_draw_refuse_folder_names_before_the_format(tmp_path, tiny):
    for args in (("frontier", tiny, "--utilization", "0.5"), ("draw", tiny)):
        result = run(*args, "-o", f"{tmp_path}/pics/")
        assert result.exit_code == 2 and "names a folder" in result.stderr, result.output
    assert not (tmp_path / "pics").exists()


def test_a_read_only_design_is_not_replaced_even_by_root(tmp_path, tiny, no_solve):
    out = tmp_path / "design.yaml"
    out.write_text("the reviewed design\n")
    out.chmod(0o444)
    before = fingerprint(out)
    refused(run("solve", tiny, "-o", out), out, "is read-only (mode 0444); nothing was written")
    assert fingerprint(out) == before


def test_names_beyond_the_file_system_limit_are_refused(tmp_path, tiny, no_solve):
    long = tmp_path / ("x" * 256)
    refused(run("solve", tiny, "-o", long), long, "the file name is 256 bytes long; the limit is 255")
    deep = f"{tmp_path}/" + "/".join(["d" * 200] * 21) + "/design.yaml"
    result = run("solve", tiny, "-o", deep)
    assert result.exit_code == 2 and "the path is" in result.stderr and "the limit is 4,095" in result.stderr


def test_the_longest_allowed_name_is_written(tmp_path, tiny):
    """255 bytes is legal: the temporary file's name must not grow past the limit."""
    out = tmp_path / ("é" * 127 + "x")  # 255 bytes in UTF-8
    assert len(os.fsencode(out.name)) == 255
    result = run("solve", tiny, "-o", out, "--format", "json")
    assert result.exit_code == 0, result.output
    assert out.read_text().startswith("schema_version") or "design" in out.read_text()[:200]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([out.name, "tiny.yaml"])


# ---------------------------------------------------------------- the writer itself


@needs_root
def test_a_device_node_appearing_during_the_solve_is_not_replaced(tmp_path, tiny, monkeypatch):
    """Checked again just before the rename: a node made while the command ran survives."""
    out = tmp_path / "design.yaml"
    real_plan = planner.plan

    def plan_then_mknod(*args, **kwargs):
        result = real_plan(*args, **kwargs)
        mknull(out)
        return result

    monkeypatch.setattr(planner, "plan", plan_then_mknod)
    result = run("solve", tiny, "-o", out)
    assert result.exit_code == 2 and "is a character device" in result.stderr
    assert stat.S_ISCHR(os.lstat(out).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["design.yaml", "tiny.yaml"]


def test_a_new_file_is_linked_into_place_never_over_something_new(tmp_path, monkeypatch):
    """A regular file that appears between the check and the write is replaced like any existing
    one (its mode kept); the new-file path uses link(2), which cannot clobber."""
    out = tmp_path / "design.yaml"
    real_link = os.link

    def racing_link(src, dst, *a, **k):
        Path(dst).write_text("appeared\n")
        os.chmod(dst, 0o600)
        return real_link(src, dst, *a, **k)

    monkeypatch.setattr(atomic.os, "link", racing_link)
    atomic.write_atomic(out, "mine\n")
    assert out.read_text() == "mine\n" and stat.S_IMODE(out.stat().st_mode) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["design.yaml"]


def test_file_systems_without_hard_links_fall_back_to_rename(tmp_path, monkeypatch):
    def no_links(src, dst, *a, **k):
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(atomic.os, "link", no_links)
    atomic.write_atomic(tmp_path / "d.yaml", "text\n")
    assert (tmp_path / "d.yaml").read_text() == "text\n" and len(list(tmp_path.iterdir())) == 1


@pytest.mark.skipif(not IS_ROOT, reason="chown needs root")
def test_root_replacing_a_users_file_keeps_its_owner(tmp_path):
    out = tmp_path / "design.yaml"
    out.write_text("old\n")
    os.chown(out, 1234, 5678)
    out.chmod(0o640)
    atomic.write_atomic(out, "new\n")
    st = out.stat()
    assert out.read_text() == "new\n" and (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (1234, 5678, 0o640)


def test_bytes_are_written_atomically_too(tmp_path):
    out = tmp_path / "p.png"
    atomic.write_data(out, b"\x89PNG\r\n")
    assert out.read_bytes() == b"\x89PNG\r\n"
    with pytest.raises(InputError, match="is a folder"):
        atomic.write_data(tmp_path, b"x")
