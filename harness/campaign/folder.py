"""Files inside a campaign folder, which is data from someone else.

A campaign folder travels (a mail, a shared folder, rsync from a worker),
so whatever sits in it may be a trap: a symbolic link to a file of ours, a
FIFO that blocks its reader forever, a device, a file of gigabytes.  Every
read and write of a file under the folder goes through here, relative to
the folder's own descriptor: no component under the folder is followed
when it is a link (O_NOFOLLOW at each step), a file read must be a regular
file no larger than its bound (opened O_NONBLOCK, then fstat), and a file
is written whole or not at all (a temporary file made O_EXCL beside it,
renamed into place; a rename never follows a link).  The folder itself,
named by the user, may be reached through links.

A path under the folder is relative, '/'-separated, without '.' or '..'
components (``rel``); anything else is refused.
"""

from __future__ import annotations

import errno
import os
import secrets
import shutil
import stat
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from .. import files
from ..errors import InputError

MISSING, FILE, DIR, LINK, OTHER = "missing", "file", "folder", "link", "other"

_RD = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class _Missing(InputError):
    """A folder on the way does not exist."""


def _parts(rel: str) -> list[str]:
    parts = str(rel).split("/")
    if not rel or str(rel).startswith("/") or any(p in ("", ".", "..") or "\0" in p
                                                  for p in parts):
        raise InputError(f"{rel!r}: not a plain path inside a campaign folder", path=str(rel))
    return parts


def _top(folder: Path) -> int:
    try:
        return os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as e:
        err = _Missing if e.errno == errno.ENOENT else InputError
        raise err(f"{folder} is not a campaign folder ({e.strerror or e})",
                  path=str(folder)) from None


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return LINK
    if stat.S_ISREG(mode):
        return FILE
    if stat.S_ISDIR(mode):
        return DIR
    return OTHER


class _Dir:
    """The folder that holds ``rel``'s last component, open, every folder on
    the way a real folder (no link); ``make``: missing ones are made."""

    def __init__(self, folder: Path, rel: str, make: bool = False):
        self.folder, self.rel = Path(folder), str(rel)
        parts = _parts(rel)
        self.name = parts[-1]
        fd = _top(self.folder)
        try:
            for i, p in enumerate(parts[:-1]):
                if make:
                    try:
                        os.mkdir(p, 0o777, dir_fd=fd)
                    except FileExistsError:
                        pass
                try:
                    nfd = os.open(p, _DIR, dir_fd=fd)
                except OSError as e:
                    raise self._error("/".join(parts[:i + 1]), fd, p, e) from None
                os.close(fd)
                fd = nfd
        except BaseException:
            os.close(fd)
            raise
        self.fd = fd

    def _error(self, sub: str, fd: int, name: str, e: OSError) -> InputError:
        where = self.folder / sub
        if e.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
            try:
                k = _kind(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode)
            except OSError:
                k = OTHER
            if k == LINK:
                return InputError(f"{where} is a symbolic link: a campaign folder's files "
                                  "and folders must be its own, not links", path=str(where))
            return InputError(f"{where} is not a folder", path=str(where))
        if e.errno == errno.ENOENT:
            return _Missing(f"{where}: no such folder", path=str(where))
        return InputError(f"{where}: {e.strerror or e}", path=str(where))

    def __enter__(self) -> "_Dir":
        return self

    def __exit__(self, *exc) -> None:
        os.close(self.fd)

    def kind(self) -> str:
        try:
            return _kind(os.stat(self.name, dir_fd=self.fd, follow_symlinks=False).st_mode)
        except FileNotFoundError:
            return MISSING


def kind(folder: Path, rel: str) -> str:
    """What ``rel`` is under the folder, no link followed: MISSING, FILE,
    DIR, LINK or OTHER (a FIFO, socket or device); a link or a file on
    the way to it is InputError."""
    try:
        with _Dir(folder, rel) as d:
            return d.kind()
    except _Missing:
        return MISSING


def require(folder: Path, rel: str, want: str, what: str, missing_ok: bool = True) -> None:
    """``rel`` is ``want`` (FILE or DIR) or, if ``missing_ok``, missing; else InputError."""
    k = kind(folder, rel)
    if k == want or (k == MISSING and missing_ok):
        return
    p = Path(folder) / rel
    if k == MISSING:
        raise InputError(f"{what} {p}: no such {'folder' if want == DIR else 'file'}",
                         path=str(p))
    if k == LINK:
        raise InputError(f"{what} {p} is a symbolic link: a campaign folder's files and "
                         "folders must be its own, not links", path=str(p))
    raise InputError(f"{what} {p} is not a {'folder' if want == DIR else 'regular file'}",
                     path=str(p))


def read_bytes(folder: Path, rel: str, what: str = "file", limit: int = files.MAX_BYTES) -> bytes:
    """The bytes of a regular file under the folder (no link, FIFO or device;
    at most ``limit`` bytes), or InputError naming it."""
    p = Path(folder) / rel
    with _Dir(folder, rel) as d:
        try:
            fd = os.open(d.name, _RD, dir_fd=d.fd)
        except FileNotFoundError:
            raise InputError(f"{what} {p}: no such file", path=str(p)) from None
        except OSError as e:
            if e.errno == errno.ELOOP:
                raise InputError(f"{what} {p} is a symbolic link: a campaign folder's files "
                                 "must be its own, not links", path=str(p)) from None
            raise InputError(f"{what} {p}: {e.strerror or e}", path=str(p)) from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise InputError(f"{what} {p} is a folder, not a file", path=str(p))
        if not stat.S_ISREG(st.st_mode):
            raise InputError(f"{what} {p} is not a regular file (a FIFO, a socket or a "
                             "device)", path=str(p))
        if st.st_size > limit:
            raise InputError(f"{what} {p} is larger than {limit >> 20} MiB", path=str(p))
        os.set_blocking(fd, True)
        chunks, size = [], 0
        while True:
            b = os.read(fd, min(1 << 20, limit + 1 - size))
            if not b:
                break
            chunks.append(b)
            size += len(b)
            if size > limit:            # it grew while we read
                raise InputError(f"{what} {p} is larger than {limit >> 20} MiB", path=str(p))
        return b"".join(chunks)
    except OSError as e:
        raise InputError(f"{what} {p}: cannot read it ({e.strerror or e})", path=str(p)) from None
    finally:
        os.close(fd)


def read_text(folder: Path, rel: str, what: str = "file", limit: int = files.MAX_BYTES) -> str:
    """As read_bytes, decoded; undecodable bytes replaced (logs written by others)."""
    return read_bytes(folder, rel, what, limit).decode("utf-8", errors="replace")


def read_json(folder: Path, rel: str, what: str = "file", limit: int = files.MAX_BYTES):
    p = Path(folder) / rel
    return files.parse_json(read_bytes(folder, rel, what, limit), f"{what} {p}", p)


def mkdir(folder: Path, rel: str, what: str = "folder") -> None:
    """``rel`` a real folder under the folder (made, with its parents, when
    missing); a link or anything else there is InputError."""
    with _Dir(folder, rel + "/x", make=True):
        pass
    require(folder, rel, DIR, what, missing_ok=False)


def write_bytes(folder: Path, rel: str, data: bytes, mode: int | None = None) -> None:
    """``rel`` holds ``data``, written whole or not at all; its folders are
    made when missing; a link or a FIFO at ``rel`` or on the way is InputError
    (never followed: the file is made anew and renamed into place)."""
    p = Path(folder) / rel
    with _Dir(folder, rel, make=True) as d:
        if d.kind() not in (MISSING, FILE):
            require(folder, rel, FILE, "file")
        tmp = f".{d.name}.{os.getpid()}.tmp"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                         0o666, dir_fd=d.fd)
            try:
                if mode is not None:            # exactly this mode (a script), not the umask's
                    os.fchmod(fd, mode)
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
            finally:
                os.close(fd)
            os.replace(tmp, d.name, src_dir_fd=d.fd, dst_dir_fd=d.fd)
        except OSError as e:
            try:
                os.unlink(tmp, dir_fd=d.fd)
            except OSError:
                pass
            raise InputError(f"cannot write {p}: {e.strerror or e}", path=str(p)) from None


def write_text(folder: Path, rel: str, text: str, mode: int | None = None) -> None:
    write_bytes(folder, rel, text.encode("utf-8", errors="surrogateescape"), mode)


def listdir(folder: Path, rel: str) -> list[str]:
    """The names in the real folder ``rel`` ([] when it is missing)."""
    if kind(folder, rel) == MISSING:
        return []
    require(folder, rel, DIR, "folder", missing_ok=False)
    with _Dir(folder, rel + "/x") as d:
        return os.listdir(d.fd)


@contextmanager
def planned(dest: Path) -> Iterator[Path]:
    """A new campaign folder written whole or not at all: the plan is written
    into a temporary sibling folder (yielded), which becomes ``dest`` (new,
    or an empty folder) when the block ends; on any error or Ctrl-C it is
    removed and ``dest`` stays as it was."""
    dest = Path(dest)
    if os.path.islink(dest):
        raise InputError(f"{dest} is a symbolic link: name the campaign folder itself",
                         path=str(dest))
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise InputError(f"{dest} is not empty: a campaign gets a folder of its own",
                         path=str(dest))
    parent = dest.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        tmp = parent / f".{dest.name}.{os.getpid()}.{secrets.token_hex(4)}.plan"
        os.mkdir(tmp)
    except OSError as e:
        raise InputError(f"cannot make {dest}: {e.strerror or e}", path=str(dest)) from None
    try:
        yield tmp
        if not (tmp / "results").is_dir():
            os.mkdir(tmp / "results")
        if dest.is_dir():
            os.rmdir(dest)              # empty (checked above): the plan takes its place
        os.rename(tmp, dest)
    except OSError as e:
        shutil.rmtree(tmp, ignore_errors=True)
        raise InputError(f"cannot write the campaign {dest}: {e.strerror or e}",
                         path=str(dest)) from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
