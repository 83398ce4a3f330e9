"""The chapters' infrastructure: the freshness record that `make chapters` writes and `make
test` checks (chapters/freshness.py, chapters/run.py), and the `make lab` target.

The freshness logic is tested on a temporary repository and notebook; one test starts a
kernel to check that the record names what the notebook really loaded.
"""
import contextlib
import importlib.util
import io
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
CHAPTERS = REPO / "chapters"

pytestmark = pytest.mark.chapters


def _load(name):
    spec = importlib.util.spec_from_file_location(f"chapters_{name}", CHAPTERS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


freshness = _load("freshness")


@pytest.fixture
def repo(tmp_path):
    """A repository with a stage1 module, a stage3 C source and a notebook."""
    (tmp_path / "stage1_scalargrad").mkdir()
    (tmp_path / "stage1_scalargrad" / "value.py").write_text("x = 1\n")
    (tmp_path / "stage1_scalargrad" / "viz.py").write_text("y = 2\n")
    (tmp_path / "stage3_native" / "csrc").mkdir(parents=True)
    (tmp_path / "stage3_native" / "csrc" / "add.c").write_text("int add(int a, int b) { return a + b; }\n")
    (tmp_path / "stage3_native" / "csrc" / "notes.txt").write_text("not a source\n")
    (tmp_path / "stage3_native" / "__init__.py").write_text("")
    (tmp_path / "chapters").mkdir()
    return tmp_path


def _notebook(repo, loaded=None, name="01_demo.ipynb"):
    """A one-cell notebook, written as JSON: freshness reads only its metadata, and nbformat's
    import (its schema validator) takes seconds."""
    nb = {"cells": [{"cell_type": "code", "execution_count": None, "id": "cell-1", "metadata": {},
                     "outputs": [], "source": "print(1)"}],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    if loaded is not None:
        freshness.record(nb["metadata"], loaded, "0123456789abcdef", False, repo=repo)
    path = repo / "chapters" / name
    path.write_text(json.dumps(nb), encoding="utf-8")
    return path


def test_record_hashes_the_loaded_python_files_in_the_repository(repo):
    meta = {}
    freshness.record(meta, ["stage1_scalargrad/value.py", "stage1_scalargrad/gone.py"], "abc", True, repo=repo)
    record = meta["tracegrad"]
    assert record["commit"] == "abc" and record["dirty"] is True
    assert list(record["sources"]) == ["stage1_scalargrad/value.py"]        # gone.py is not in the repo
    assert record["sources"]["stage1_scalargrad/value.py"] == freshness.file_hash(repo / "stage1_scalargrad/value.py")
    assert re.fullmatch(r"[0-9a-f]{16}", record["sources"]["stage1_scalargrad/value.py"])


def test_a_loaded_native_library_brings_the_c_sources(repo):
    files = freshness.sources(["stage3_native/__init__.py", "stage3_native/_native.cpython-311-x86_64-linux-gnu.so"],
                              repo=repo)
    assert files == ["stage3_native/__init__.py", "stage3_native/csrc/add.c"]
    assert freshness.sources(["stage3_native/__init__.py"], repo=repo) == ["stage3_native/__init__.py"]


@pytest.mark.slow          # seconds of whole runs or compiles: make test-slow
def test_a_fresh_notebook_gives_no_warning(repo):
    path = _notebook(repo, ["stage1_scalargrad/value.py", "stage1_scalargrad/viz.py"])
    assert freshness.report([path], repo=repo) == []


@pytest.mark.slow          # seconds of compiles or runs: make test-slow
def test_a_changed_or_removed_file_is_named(repo):
    path = _notebook(repo, ["stage1_scalargrad/value.py", "stage1_scalargrad/viz.py"])
    (repo / "stage1_scalargrad" / "value.py").write_text("x = 2\n")
    [line] = freshness.report([path], repo=repo)
    assert line.startswith("warning: 01_demo.ipynb's saved outputs (run at 0123456789) predate changes to 1 file")
    assert "stage1_scalargrad/value.py" in line and "viz.py" not in line
    (repo / "stage1_scalargrad" / "viz.py").unlink()
    [line] = freshness.report([path], repo=repo)
    assert "2 files" in line and "stage1_scalargrad/viz.py" in line


def test_rewriting_a_file_with_the_same_text_is_not_a_change(repo):
    path = _notebook(repo, ["stage1_scalargrad/value.py"])
    (repo / "stage1_scalargrad" / "value.py").write_text("x = 1\n")
    assert freshness.report([path], repo=repo) == []


def test_a_notebook_without_a_record_is_named(repo):
    path = _notebook(repo, None, name="02_new.ipynb")
    [line] = freshness.report([path], repo=repo)
    assert "02_new.ipynb has no freshness record yet" in line and "chapters/run.py 02_new" in line


def test_main_warns_but_never_fails(repo):
    fresh = _notebook(repo, ["stage1_scalargrad/value.py"], name="01_a.ipynb")
    new = _notebook(repo, None, name="02_b.ipynb")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert freshness.main([str(fresh), str(new)], repo=repo) == 0
    assert "02_b.ipynb has no freshness record" in out.getvalue()
    assert "freshness: 1 of 2 notebooks" in out.getvalue()


def test_the_probe_lists_the_package_modules_loaded():
    import stage1_scalargrad.viz  # noqa: F401 - the probe must find it
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(freshness.PROBE, {})
    files = freshness.parse_probe(out.getvalue())
    assert "stage1_scalargrad/viz.py" in files and "stage1_scalargrad/__init__.py" in files
    assert all(f.split("/")[0] in freshness.PACKAGES for f in files)
    with pytest.raises(ValueError, match="no line starting with 'tracegrad'"):
        freshness.parse_probe("something else\n")


def test_commit_outside_git_is_unknown(tmp_path):
    assert freshness.commit(tmp_path) == ("unknown", False)


@pytest.mark.skipif(shutil.which("git") is None or not (REPO / ".git").exists(), reason="not a git checkout")
def test_commit_in_this_checkout():
    head, dirty = freshness.commit()
    assert re.fullmatch(r"[0-9a-f]{40}", head) and isinstance(dirty, bool)


@pytest.mark.slow      # starts a kernel: runs with the notebooks (make test-slow STAGE=chapters)
def test_a_full_run_records_what_the_kernel_loaded(tmp_path):
    """run.py's execute with a commit: one probe cell after the last, removed before saving."""
    run = _load("run")
    import nbformat
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("from stage1_scalargrad import Value\n"
                                                                    "print(Value(2) * 3)")])
    path = tmp_path / "demo.ipynb"
    nbformat.write(nb, path)
    run.execute(path, quick=False, write_back=True, commit=("feedbeef", True))
    saved = nbformat.read(path, as_version=4)
    assert len(saved.cells) == 1 and "Value(data=6" in saved.cells[0].outputs[0]["text"]
    record = saved.metadata["tracegrad"]
    assert record["commit"] == "feedbeef" and record["dirty"] is True
    assert "stage1_scalargrad/value.py" in record["sources"]
    assert not any(name.startswith("stage4_models") for name in record["sources"])     # never imported
    assert freshness.report([path]) == []


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_lab_opens_the_chapters_in_jupyterlab_on_the_venv():
    result = subprocess.run(["make", "-n", "lab"], cwd=REPO, capture_output=True, text=True, check=True)
    assert ".venv/bin/jupyter lab --notebook-dir=chapters" in result.stdout


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_test_runs_the_freshness_check():
    result = subprocess.run(["make", "-n", "test"], cwd=REPO, capture_output=True, text=True, check=True)
    lines = result.stdout.splitlines()
    ruff = next(i for i, line in enumerate(lines) if "ruff check" in line)
    fresh = next(i for i, line in enumerate(lines) if "chapters/freshness.py" in line)
    pytest_ = next(i for i, line in enumerate(lines) if "-m pytest" in line)
    assert ruff < fresh < pytest_
