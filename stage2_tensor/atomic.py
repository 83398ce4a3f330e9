"""Writing a file atomically, as ``save`` does (and stage4's safetensors writer and its
training logs): the bytes go to a temporary file in the same folder, which is flushed to
disk and then renamed over the target (``os.replace``). A crash or an error mid-write
leaves the previous file intact; a reader never sees half a file.

The temporary file is ``.NAME.PID.HEX.tmp`` beside NAME: the writing process's id and a
random tag, so two writers never share one. A failed write removes its own; a process that
is killed mid-write cannot, so others do: each write to NAME first, and whoever calls
``remove_stale_temporaries(folder)`` (a training run, when it starts).

Which temporary files are abandoned? The process id in the name cannot say: a killed
process that its parent has not yet reaped (a zombie) still has its id, and ids are handed
out again (Linux counts to 32768 by default), so a dead writer's file would look alive. A
lock can: the writer holds an exclusive ``flock`` on its temporary file from just after
creating it until after the rename, and the kernel drops a process's locks the moment it
ends, however it ends. A temporary file nobody holds is abandoned.
"""
import os
import re
import secrets

try:
    import fcntl                # POSIX file locks
except ImportError:             # Windows: no flock; temporaries there are never swept
    fcntl = None


def atomic_write(path, write):
    """Call ``write(f)`` with a binary file whose contents become ``path`` only once it
    returns (all or nothing)."""
    path = os.path.abspath(os.fspath(path))
    folder, name = os.path.split(path)
    remove_stale_temporaries(folder, name)
    tmp = os.path.join(folder, f".{name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    held = None
    try:
        with open(tmp, "xb") as f:                      # "x": never someone else's file
            held = _hold(f)
            write(f)
            f.flush()
            os.fsync(f.fileno())                        # the bytes are on disk before the rename
        os.replace(tmp, path)                           # atomic: old file or new, never half
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    finally:
        if held is not None:                            # renamed or removed: nothing to guard
            os.close(held)
    if hasattr(os, "O_DIRECTORY"):                      # make the rename itself durable (POSIX)
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def atomic_write_text(path, text, encoding="utf-8"):
    """``atomic_write`` of the string ``text`` (a log, JSON, a vocabulary), encoded."""
    data = text.encode(encoding)                        # an unencodable text fails before any file
    atomic_write(path, lambda f: f.write(data))


def _hold(f):
    """Lock the new temporary file ``f`` for this write. Returns a second descriptor of it,
    which keeps the lock after ``f`` is closed, until the rename (a lock lasts while any
    descriptor of the open file does); None where files cannot be locked."""
    if fcntl is None:
        return None
    try:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)
    except OSError:                 # a file system without locks: sweepers ask the process id
        return None
    return os.dup(f.fileno())


def remove_stale_temporaries(folder, name=None):
    """Delete the temporary files of writes to ``name`` (of any name when None) in
    ``folder`` that will never finish: their writer was killed. A file its writer still
    holds is a write in progress, so it stays; so does everything where files cannot be
    locked (Windows)."""
    if fcntl is None:
        return
    target = re.escape(name) if name is not None else ".+"
    pattern = re.compile(rf"\.{target}\.(\d+)\.[0-9a-f]{{8}}\.tmp")
    try:
        entries = os.listdir(folder)
    except FileNotFoundError:           # no folder: the write itself says so
        return
    for entry in entries:
        match = pattern.fullmatch(entry)
        if match and _abandoned(os.path.join(folder, entry), int(match.group(1))):
            try:
                os.remove(os.path.join(folder, entry))
            except FileNotFoundError:   # another sweeper removed it first
                pass


def _abandoned(path, pid):
    """Whether the temporary file at ``path``, written by process ``pid``, belongs to a
    write that will never finish: nobody holds its lock. A writer locks its file just
    after creating it and writes only then, so an empty file that is not locked may be one
    just created: that one counts as abandoned only once process ``pid`` is gone."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:                     # renamed or removed meanwhile, or not ours to read
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:             # its writer holds it: a write in progress
        return False
    except OSError:                     # a file system without locks
        return not _running(pid)
    else:
        return os.fstat(fd).st_size > 0 or not _running(pid)
    finally:
        os.close(fd)


def _running(pid):
    """Whether a process with this id exists (signal 0 checks without sending anything)."""
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):     # gone, or an id no process can have
        return False
    except PermissionError:                         # exists, owned by someone else
        return True
    return True
