"""Writing a file atomically, as ``save`` does (and stage4's safetensors writer): the bytes
go to a temporary file in the same folder, which is flushed to disk and then renamed over
the target (``os.replace``). A crash or an error mid-write leaves the previous file intact;
a reader never sees half a file.

The temporary file is ``.NAME.PID.HEX.tmp`` beside NAME: the writing process's id and a
random tag, so two writers never share one. A failed write removes its own; a process that
is killed mid-write cannot, so each write first removes the ones whose process is gone.
"""
import os
import re
import secrets


def atomic_write(path, write):
    """Call ``write(f)`` with a binary file whose contents become ``path`` only once it
    returns (all or nothing)."""
    path = os.path.abspath(os.fspath(path))
    folder, name = os.path.split(path)
    remove_stale_temporaries(folder, name)
    tmp = os.path.join(folder, f".{name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        with open(tmp, "xb") as f:                      # "x": never someone else's file
            write(f)
            f.flush()
            os.fsync(f.fileno())                        # the bytes are on disk before the rename
        os.replace(tmp, path)                           # atomic: old file or new, never half
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    if hasattr(os, "O_DIRECTORY"):                      # make the rename itself durable (POSIX)
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def remove_stale_temporaries(folder, name):
    """Delete the temporary files of writes to ``name`` in ``folder`` whose process no
    longer runs (killed mid-write). A running process's file may be a write in progress,
    so it stays; so does everything on a system where liveness cannot be asked safely."""
    if os.name != "posix":              # Windows' os.kill(pid, 0) would terminate the process
        return
    pattern = re.compile(rf"\.{re.escape(name)}\.(\d+)\.[0-9a-f]+\.tmp")
    try:
        entries = os.listdir(folder)
    except FileNotFoundError:           # no folder: the write itself says so
        return
    for entry in entries:
        match = pattern.fullmatch(entry)
        if match and not _running(int(match.group(1))):
            try:
                os.remove(os.path.join(folder, entry))
            except FileNotFoundError:   # another writer removed it first
                pass


def _running(pid):
    """Whether a process with this id exists (signal 0 checks without sending anything)."""
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):     # gone, or an id no process can have
        return False
    except PermissionError:                         # exists, owned by someone else
        return True
    return True
