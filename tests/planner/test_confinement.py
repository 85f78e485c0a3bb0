"""Input confinement: a file named as a catalog is read only as a regular file of bounded size
that looks like a catalog, and anything else gets one message that quotes nothing of the file and
is the same whether the path exists or not (``catalogs: [/etc/shadow]`` once printed its first
line, password hash included)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from designer.errors import CatalogError
from designer.planner import inputs
from designer.spec import yamlio
from tiny_spec import TINY

ROOT = Path(__file__).resolve().parents[2]
# Lines shaped like /etc/shadow and /etc/passwd: YAML reads "user:...:" lines as mapping keys.
SECRET = ("root:$6$Zq8n1X0a$T3stHashTestHashTestHashTestHashTestHashTestHash0123456789abcd:20228:0:99999:7:::\n"
          "daemon:*:20228:0:99999:7:::\n")


def _spec(tmp_path: Path, entry: str) -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(TINY + f"catalogs: [{entry}]\n")
    return path


def _message(tmp_path: Path, entry: str) -> str:
    spec = _spec(tmp_path, entry)
    with pytest.raises(CatalogError) as info:
        inputs.load_inputs(spec)
    loc = info.value.location
    assert (loc.file, loc.line) == (str(spec), TINY.count("\n") + 1), info.value.located()
    return info.value.message


def _expected(entry: str) -> str:
    return f"catalog file {entry!r} {yamlio.NOT_A_CATALOG} (paths resolve relative to the spec's folder)"


def _make(kind: str, path: Path) -> None:
    if kind == "missing":
        return
    if kind == "folder":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)  # opening it for reading must not wait for a writer
    elif kind == "secret":
        path.write_text(SECRET)
    elif kind == "binary":
        path.write_bytes(b"\x00\xff" * 100)
    elif kind == "latin-1":
        path.write_bytes("schema_version: 1\nkind: gpu\nitems: []\n# caf\xe9\n".encode("latin-1"))
    elif kind == "too-large":
        with path.open("wb") as out:  # sparse: 11 MB of size, no disk used
            out.truncate(11 * 1024 * 1024)
    elif kind == "yaml-not-catalog":
        path.write_text("apiVersion: v1\nkind: Secret\ndata: {password: aHVudGVyMg==}\n")
    elif kind == "link-to-secret":
        target = path.with_name("hidden-secret")
        target.write_text(SECRET)
        path.symlink_to(target)
    elif kind == "dangling-link":
        path.symlink_to(path.with_name("nowhere"))
    elif kind == "socket":
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(path))
        sock.close()


KINDS = ["missing", "folder", "fifo", "secret", "binary", "latin-1", "too-large", "yaml-not-catalog",
         "link-to-secret", "dangling-link", "socket"]


@pytest.mark.parametrize("kind", KINDS)
def test_every_unusable_catalog_gets_the_same_message(tmp_path, kind):
    """Missing, a folder, a FIFO, a socket, a secret, binary, too large, another YAML file: one
    message, so that naming a path tells nothing about whether it exists or what it holds."""
    _make(kind, tmp_path / "c.yaml")
    start = time.monotonic()
    assert _message(tmp_path, "c.yaml") == _expected("c.yaml")
    assert time.monotonic() - start < 5  # a FIFO without a writer does not block


def test_no_line_of_a_non_yaml_file_is_echoed(tmp_path):
    (tmp_path / "shadow").write_text(SECRET)
    message = _message(tmp_path, "shadow")
    for line in SECRET.splitlines():
        for part in line.split(":"):
            if len(part) >= 4:
                assert part not in message


@pytest.mark.parametrize("path", ["/etc/shadow", "/etc/passwd", "/etc", "/dev/zero", "/dev/null",
                                  "/proc/self/environ", "/nonexistent/x.yaml"])
def test_system_files_as_catalogs_through_the_command(tmp_path, path):
    """The command end to end, in its own process: one line, exit 2, nothing of the file."""
    spec = _spec(tmp_path, path)
    proc = subprocess.run([sys.executable, "-m", "designer", "validate", str(spec)], capture_output=True,
                          text=True, timeout=60, cwd=ROOT)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr == f"error: {spec}:{TINY.count(chr(10)) + 1}:12: {_expected(path)}\n"
    if os.path.isfile(path) and os.access(path, os.R_OK) and not path.startswith("/proc"):
        for line in Path(path).read_text(errors="replace").splitlines()[:50]:
            if len(line) >= 8:
                assert line not in proc.stderr


def test_a_real_catalog_with_a_misspelt_top_key_is_still_quoted(tmp_path):
    """A file that is recognisably a catalog is the user's own: its typos are quoted (cut)."""
    (tmp_path / "c.yaml").write_text("schema_version: 1\nkind: switch\nitmes: []\n")
    with pytest.raises(CatalogError, match=r"unknown key 'itmes' \(did you mean 'items'\?\)"):
        inputs.load_inputs(_spec(tmp_path, "c.yaml"))


def test_a_catalog_line_that_is_not_a_catalog_key_is_not_quoted(tmp_path):
    """Even in a file with a catalog's keys, a top-level key close to none of them is not repeated."""
    (tmp_path / "c.yaml").write_text(SECRET.splitlines()[0] + "\nschema_version: 1\nkind: switch\nitems: []\n")
    with pytest.raises(CatalogError) as info:
        inputs.load_inputs(_spec(tmp_path, "c.yaml"))
    assert info.value.message == "unknown key; a catalog file has schema_version, kind, items, description"
    assert (info.value.location.line, info.value.location.col) == (1, 1)


@pytest.mark.parametrize("field, value", [("kind", "x" * 5000), ("schema_version", "[" + "1, " * 3000 + "1]")])
def test_quoted_values_are_cut_and_escaped(tmp_path, field, value):
    text = {"kind": "schema_version: 1\nkind: KIND\nitems: []\n",
            "schema_version": "schema_version: KIND\nkind: switch\nitems: []\n"}[field].replace("KIND", value)
    (tmp_path / "c.yaml").write_text(text)
    with pytest.raises(CatalogError) as info:
        inputs.load_inputs(_spec(tmp_path, "c.yaml"))
    # The value is cut to a short quote; the rest is the message's own text (the list of kinds).
    assert len(info.value.message) < 240, info.value.message


def test_an_escape_sequence_in_a_key_is_shown_escaped(tmp_path):
    (tmp_path / "c.yaml").write_text('schema_version: 1\nkind: switch\nitems:\n  - {name: x, "\\e[2Jprice": 1}\n')
    with pytest.raises(CatalogError) as info:
        inputs.load_inputs(_spec(tmp_path, "c.yaml"))
    assert "\x1b" not in info.value.message and "\\x1b[2Jprice" in info.value.message


def test_a_catalog_is_read_once(tmp_path, monkeypatch):
    """One read, from which both the parse and the digest come (a pipe once gave an empty digest)."""
    import hashlib

    from designer.catalog import load as catalog_load

    cat = tmp_path / "c.yaml"
    cat.write_text("schema_version: 1\nkind: switch\nitems:\n  - {name: nvidia-qm9700, price: '$30,000', "
                   "source: quote, as_of: 2026-10}\n")
    reads: list[str] = []
    real = yamlio.read_regular_file
    monkeypatch.setattr(yamlio, "read_regular_file", lambda p, **k: reads.append(str(p)) or real(p, **k))
    _, catalog = inputs.load_inputs(_spec(tmp_path, "c.yaml"))
    assert reads == [str(cat)]
    builtin = hashlib.sha256()
    root = catalog_load._builtin_root()
    for name in catalog_load.BUILTIN_FILES:
        builtin.update(root.joinpath(name).read_bytes())
    builtin.update(cat.read_bytes())
    assert catalog.digest == builtin.hexdigest()


def test_a_file_that_is_not_a_spec_is_not_quoted(tmp_path):
    from designer.errors import SpecError
    from designer.spec import load_spec

    path = tmp_path / "shadow"
    path.write_text(SECRET)
    with pytest.raises(SpecError) as info:
        load_spec(path)
    assert info.value.message == ("not a spec: a spec is a YAML mapping with version, name and workloads "
                                  "(`designer schema` describes it)")
