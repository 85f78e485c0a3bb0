"""Reading a file as committed in git (designer.spec.files.read_committed_text): the committed
bytes, not the file on disk, and one located problem for each way it can be missing."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from designer.errors import InputError
from designer.spec import files

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _git(folder, *args):
    subprocess.run(["git", *args], cwd=folder, check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@t", "HOME": str(folder), "PATH": "/usr/bin:/bin"})


@pytest.fixture()
def repo(tmp_path):
    _git(tmp_path, "init", "-q")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.yaml").write_text("committed: 1\n")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-qm", "one")
    (tmp_path / "sub" / "a.yaml").write_text("on disk: 2\n")
    return tmp_path


def test_reads_the_committed_text_relative_to_the_files_folder(repo):
    assert files.read_committed_text("HEAD", repo / "sub" / "a.yaml") == "committed: 1\n"
    (repo / "sub" / "a.yaml").unlink()  # a file deleted since is still read as committed
    assert files.read_committed_text("HEAD", repo / "sub" / "a.yaml") == "committed: 1\n"


@pytest.mark.parametrize("ref, name, problem", [
    ("no-such-branch", "a.yaml", "unknown git revision 'no-such-branch'"),
    ("HEAD", "b.yaml", "not in git revision 'HEAD' ("),
    ("--output=x", "a.yaml", "'--output=x' is not a git revision"),
    ("HEAD\n", "a.yaml", "'HEAD\\n' is not a git revision"),
])
def test_each_missing_piece_is_one_problem_located_at_the_file(repo, ref, name, problem):
    path = repo / "sub" / name
    with pytest.raises(InputError) as caught:
        files.read_committed_text(ref, path)
    assert caught.value.location.file == str(path) and caught.value.location.line is None
    assert caught.value.problem.startswith(problem) and caught.value.hint
    assert not (repo / "sub" / "x").exists()


def test_too_large_and_outside_a_repository(repo, tmp_path_factory):
    with pytest.raises(InputError, match="larger than the limit of 5 bytes"):
        files.read_committed_text("HEAD", repo / "sub" / "a.yaml", max_bytes=5)
    outside = tmp_path_factory.mktemp("plain") / "a.yaml"
    with pytest.raises(InputError, match="not in a git repository"):
        files.read_committed_text("HEAD", outside)
