"""Finding the data files the models train on (MNIST, names, GPT-2's tokenizer files,
tiny-shakespeare), shared by every stage4 program.

A file ``folder/name`` is looked for, in this order, in

1. ``$TRACEGRAD_DATA/folder/name`` (the Makefile points it at ``../shared/data``),
2. ``~/.cache/tracegrad/folder/name``,

and only when it is in neither is it downloaded from its public original into the cache,
checked against its SHA-256 (a wrong or cut-off download is deleted, never used) and then
used. Offline, the error names the missing files and the variable that would find them.
"""
import functools
import hashlib
import os
import sys
import urllib.request
from dataclasses import dataclass
from pathlib import Path

VARIABLE = "TRACEGRAD_DATA"
# The most dimensions an array read from a file may have (numpy 1's limit): the IDX and
# safetensors readers refuse more.
MAX_DIMS = 32


@dataclass(frozen=True)
class DataFile:
    """One file of a dataset: where it lives under a data folder, where to download it
    from (mirrors, tried in order) and its SHA-256."""
    folder: str
    name: str
    urls: tuple
    sha256: str

    @property
    def relative(self):
        return Path(self.folder) / self.name


def read_text(path, expected):
    """The text of the UTF-8 file ``path``. A file that is not UTF-8 is a ValueError naming
    it, the first bad byte and ``expected`` (what the file should hold): Python's own
    UnicodeDecodeError names neither the file nor what it was for."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(f"{path}: not UTF-8 text (byte 0x{err.object[err.start]:02x} at offset "
                         f"{err.start}); expected {expected}") from None


def cache_dir():
    return Path.home() / ".cache" / "tracegrad"


def search_dirs():
    """The folders looked in, in order: $TRACEGRAD_DATA (when set), then the cache."""
    dirs = [Path(os.environ[VARIABLE]).expanduser()] if os.environ.get(VARIABLE) else []
    return dirs + [cache_dir()]


def locate(file):
    """The path of an existing copy of ``file``, or None."""
    for base in search_dirs():
        path = base / file.relative
        if path.is_file():
            return path
    return None


def fetch(files, download=True):
    """Paths of every file in ``files``, downloading the missing ones into the cache.
    Raises FileNotFoundError naming each file that could be neither found nor downloaded."""
    paths, missing = [], []
    for f in files:
        path = locate(f)
        if path is None and download:
            path = _download(f)
        paths.append(path)
        if path is None:
            missing.append(f)
    if missing:
        names = ", ".join(str(f.relative) for f in missing)
        looked = " and ".join(str(d) for d in search_dirs())
        tried = (f"the download from {missing[0].urls[0]} failed" if download
                 else "downloading was not allowed")
        raise FileNotFoundError(
            f"data file(s) not found: {names} (looked in {looked}) and {tried}. Set {VARIABLE} "
            f"to a folder that holds {missing[0].relative}, or put the file(s) in {cache_dir()}.")
    return paths


class _WrongBytes(Exception):
    """A download whose SHA-256 is not the file's (a moved page, a cut-off transfer)."""


def _download(file):
    """Download ``file`` into the cache; its path, or None when no mirror could be reached or
    none gave the right bytes. The bytes go through ``atomic_write`` (stage2_tensor/atomic.py)
    and are checked as they arrive: a wrong, failed or killed download never becomes the
    file, and a killed one's temporary file is removed by the next download."""
    from stage2_tensor.atomic import atomic_write     # here: the tokenizer, needing no tensors, imports data.py
    target = cache_dir() / file.relative
    target.parent.mkdir(parents=True, exist_ok=True)
    for url in file.urls:
        print(f"downloading {file.relative} from {url}", file=sys.stderr)
        try:
            atomic_write(target, functools.partial(_copy_checked, url, file.sha256))
            return target
        except (OSError, _WrongBytes):   # offline, refused, timed out, wrong bytes: try the next mirror
            pass
    return None


def _copy_checked(url, sha256, out):
    """Copy the download of ``url`` into the file ``out``; _WrongBytes unless its SHA-256
    is ``sha256``."""
    digest = hashlib.sha256()
    with urllib.request.urlopen(url, timeout=30) as response:
        for block in iter(lambda: response.read(1 << 20), b""):
            digest.update(block)
            out.write(block)
    if digest.hexdigest() != sha256:
        raise _WrongBytes(f"{url}: SHA-256 {digest.hexdigest()}, expected {sha256}")
