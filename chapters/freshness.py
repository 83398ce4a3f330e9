"""Which chapter notebooks' saved outputs predate changes to the code they show.

    python chapters/freshness.py [NOTEBOOKS...]

``make chapters`` (chapters/run.py in full mode) records in each notebook's metadata, under
``"tracegrad"``, the commit it ran on and a hash of every source file of the four stage
packages the kernel had loaded by the end of the run (``record``). This script compares
those hashes with the files as they are now and prints a warning for each notebook whose
outputs are older than the code (the files that changed or went away), and for each
notebook with no record yet. It never fails: outputs are refreshed by re-running the
chapter (``make chapters`` or ``python chapters/run.py NAME``), which is slow, so stale
outputs are reported, not refused. ``make test`` runs it after ruff.

It uses only the standard library and imports nothing from the project: the check reads
files, it runs no notebook.
"""
import argparse
import hashlib
import json
import subprocess
import sys
import textwrap
from pathlib import Path

CHAPTERS = Path(__file__).resolve().parent
REPO = CHAPTERS.parent
PACKAGES = ("stage1_scalargrad", "stage2_tensor", "stage3_native", "stage4_models")
KEY = "tracegrad"            # the notebook metadata entry this module owns
# stage3_native's compiled libraries are built from these: a notebook that loaded one of
# them shows what the C and CUDA sources compute.
NATIVE_SOURCES = ("stage3_native/csrc", "stage3_native/cuda")
NATIVE_SUFFIXES = (".c", ".h", ".cu", ".cuh")

# The code run in the kernel after the notebook's last cell: the files of the modules it
# loaded from the four packages, relative to the folder that holds the packages.
PROBE = f"""
def _tracegrad_loaded():
    import json, pathlib, sys
    files = set()
    for name, module in list(sys.modules.items()):
        top = name.split(".")[0]
        file = getattr(module, "__file__", None)
        if top in {PACKAGES!r} and file and getattr(sys.modules.get(top), "__file__", None):
            root = pathlib.Path(sys.modules[top].__file__).resolve().parent.parent
            try:
                files.add(pathlib.Path(file).resolve().relative_to(root).as_posix())
            except ValueError:
                pass
    return json.dumps(sorted(files))
print({KEY!r} + _tracegrad_loaded())
del _tracegrad_loaded
"""


def file_hash(path):
    """The first 16 hex digits of the file's SHA-256 (enough to tell two versions apart)."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]


def commit(repo=REPO):
    """(HEAD's commit, whether tracked files differ from it), or ("unknown", False) outside
    a git checkout."""
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True)
        status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=repo,
                                capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return "unknown", False
    return head.stdout.strip(), bool(status.stdout.strip())


def sources(loaded, repo=REPO):
    """The files to hash for the modules a kernel loaded (paths relative to the repository):
    the Python modules, and the C and CUDA sources when a compiled library of stage3_native
    was among them. Files that are not in the repository are left out."""
    files = {f for f in loaded if f.endswith(".py") and (repo / f).is_file()}
    if any(f.startswith("stage3_native/") and not f.endswith(".py") for f in loaded):
        for folder in NATIVE_SOURCES:
            files.update(p.relative_to(repo).as_posix() for p in sorted((repo / folder).glob("*"))
                         if p.suffix in NATIVE_SUFFIXES)
    return sorted(files)


def record(metadata, loaded, head, dirty, repo=REPO):
    """Write the freshness record into a notebook's ``metadata`` (a dict)."""
    metadata[KEY] = {"commit": head, "dirty": dirty,
                     "sources": {f: file_hash(repo / f) for f in sources(loaded, repo)}}


def parse_probe(text):
    """The file list the PROBE printed, from the text of its output."""
    for line in text.splitlines():
        if line.startswith(KEY):
            return json.loads(line[len(KEY):])
    raise ValueError(f"freshness: the kernel's answer has no line starting with {KEY!r}: {text[:200]!r}")


def stale(notebook, repo=REPO):
    """``None`` when the notebook has no record; otherwise (record, changed files), where a
    changed file is one whose hash differs or that no longer exists."""
    with open(notebook, encoding="utf-8") as f:
        meta = json.load(f).get("metadata", {}).get(KEY)
    if not meta or "sources" not in meta:
        return None
    changed = [name for name, digest in sorted(meta["sources"].items())
               if not (repo / name).is_file() or file_hash(repo / name) != digest]
    return meta, changed


def report(notebooks, repo=REPO):
    """The warning lines for ``notebooks`` (an empty list when every one is fresh)."""
    lines = []
    for path in notebooks:
        result = stale(path, repo)
        if result is None:
            lines.append(f"warning: {path.name} has no freshness record yet: run it in full mode "
                         f"(make chapters, or python chapters/run.py {path.stem})")
            continue
        meta, changed = result
        if changed:
            when = meta.get("commit", "unknown")[:10] + (" with uncommitted changes" if meta.get("dirty") else "")
            head = (f"warning: {path.name}'s saved outputs (run at {when}) predate changes to "
                    f"{len(changed)} file{'s' if len(changed) != 1 else ''} it loads: ")
            lines.append(textwrap.fill(head + ", ".join(changed), width=110, subsequent_indent="    "))
    return lines


def main(argv=None, repo=REPO):
    parser = argparse.ArgumentParser(description="Warn about chapter notebooks older than the code they show.")
    parser.add_argument("notebooks", nargs="*", type=Path, help="notebooks to check (default: chapters/*.ipynb)")
    args = parser.parse_args(argv)
    notebooks = args.notebooks or sorted(CHAPTERS.glob("*.ipynb"))
    lines = report(notebooks, repo)
    for line in lines:
        print(line)
    print(f"freshness: {len(notebooks) - len(lines)} of {len(notebooks)} notebooks' saved outputs are as new as "
          "the code they load" + ("" if not lines else " (warnings above; never a failure)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
