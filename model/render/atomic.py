"""Write a file atomically: every file acplab writes goes through :func:`replacing`."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path


@contextlib.contextmanager
def replacing(path):
    """Write ``path`` atomically: yield a temporary sibling to fill, then rename it over ``path``.

    Every file acplab writes goes through here, so a full disk, ``ulimit -f``
    or a kill leaves the old file (or none), never a torn one: on an error the
    temporary file is removed and ``path`` is untouched, and an ``OSError``
    names ``path`` (the command line prints it as one line).  A file that is
    replaced keeps its mode and, where allowed, its owner; a new file gets
    0666 less the umask, as ``open`` would give it.
    """
    path = Path(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.acplab-tmp-", dir=path.parent)
    except OSError as err:
        raise OSError(err.errno, err.strerror or str(err), str(path)) from None
    os.close(fd)
    try:
        yield Path(tmp)
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        _take_mode(tmp, path)
        os.replace(tmp, path)
    except BaseException as err:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(err, OSError) and err.filename in (None, tmp):  # say which file, not the temporary one
            raise OSError(err.errno, err.strerror or str(err), str(path)) from None
        raise


def write_atomic(path, content: str | bytes) -> None:
    """``path`` holds ``content`` (text as UTF-8), written through :func:`replacing`."""
    data = content.encode("utf-8") if isinstance(content, str) else content
    with replacing(path) as tmp, open(tmp, "wb") as f:
        f.write(data)


def _take_mode(tmp: str, path: Path) -> None:
    try:
        old = os.lstat(path)
    except FileNotFoundError:
        old = None
    if old is None or not stat.S_ISREG(old.st_mode):
        mask = os.umask(0o022)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)
        return
    mine = os.lstat(tmp)
    if (mine.st_uid, mine.st_gid) != (old.st_uid, old.st_gid):
        with contextlib.suppress(OSError):  # only root may give a file away; a user keeps it as theirs
            os.chown(tmp, old.st_uid, old.st_gid)
    os.chmod(tmp, stat.S_IMODE(old.st_mode))  # after chown, which clears the set-id bits


__all__ = ["replacing", "write_atomic"]
