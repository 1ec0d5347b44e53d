"""The output directory as a transaction: contained paths, a lock, staging and a journal.

Threat model: the output tree lives in a repository that may come from an untrusted pull
request, so its manifest, cache, and any symlinks in it are attacker-controlled. Everything
here touches only paths *inside* the resolved output directory and never follows a symlink:

* every relative path is checked (no absolute paths, no ``..``, no empty or NUL parts) and
  every directory on the way to it must be a real directory, not a symlink;
* files are read with ``O_NOFOLLOW`` and only when they are regular files (a FIFO or
  ``/dev/zero`` committed under a managed name cannot hang or flood the build).

On Linux (``renameat2(RENAME_EXCHANGE)``) a commit swaps whole trees: the new tree is built
beside the output directory, in ``.<name>.idlgen-swap`` (unchanged and unmanaged files
hard-linked, changed ones written and fsynced), and one ``RENAME_EXCHANGE`` puts it in place;
the old tree, now at the swap path, is deleted. A reader (or a process killed at any instant)
sees the complete old tree or the complete new one, never a mix, with no replay needed; a
leftover swap dir is deleted by the next run. Where the swap is not possible (another OS, no
``renameat2``, the output is a mount point, the parent directory is not writable, hard links
are refused) the journal commit below is used.

The journal commit is crash-safe: the new files are written (and fsynced) under ``.idlgen-stage/``, then a
journal naming every rename and deletion is written atomically — the commit point — and
replayed. A process killed before the journal exists leaves the old tree (the next run deletes
the stale staging dir); one killed after leaves a journal the next run replays to the end, so
the tree is always the complete old or the complete new one once idlgen has run again. Files
the manifest does not list are never touched. An exclusive ``flock``
on the output directory
serialises builds into one output.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import json
import os
import shutil
import stat
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path, PurePosixPath

from .safe_read import read_regular

__all__ = [
    "JOURNAL",
    "STAGE",
    "OutputError",
    "commit",
    "locked",
    "read_regular",
    "recover",
    "safe_rel",
    "contained",
]

STAGE = ".idlgen-stage"
JOURNAL = ".idlgen-journal.json"
_JOURNAL_TMP = ".journal.tmp"  # inside STAGE; generated names never start with '.journal'


class OutputError(Exception):
    """The output directory cannot be used (unsafe path, read-only, full disk, …)."""


def safe_rel(rel: object) -> str | None:
    """``rel`` as a normalised relative POSIX path, or None if it could leave the output."""
    if not isinstance(rel, str) or not rel or "\x00" in rel or "\\" in rel:
        return None
    p = PurePosixPath(rel)
    if p.is_absolute() or any(part in ("", ".", "..") for part in rel.split("/")):
        return None
    if p.parts[0] in (STAGE, JOURNAL):
        return None
    return str(p)


def _real_dirs(root: Path, rel: str, *, create: bool) -> Path | None:
    """The parent directory of ``root/rel`` if every directory below ``root`` is a real one.

    With ``create`` missing directories are made; a symlink (or a non-directory) on the way
    gives None.
    """
    d = root
    for part in PurePosixPath(rel).parts[:-1]:
        d = d / part
        try:
            st = os.lstat(d)
        except FileNotFoundError:
            if not create:
                return None
            os.mkdir(d)
            continue
        if not stat.S_ISDIR(st.st_mode):
            return None
    return d


def contained(root: Path, rel: str) -> Path | None:
    """``root/rel`` when ``rel`` is safe and no directory on the way is a symlink."""
    s = safe_rel(rel)
    if s is None or _real_dirs(root, s, create=False) is None:
        return None
    return root / s


@contextmanager
def locked(root: Path, *, exclusive: bool = True, create: bool = False) -> Iterator[None]:
    """Hold an flock on the output directory itself; builds into one output take turns.

    Locking the directory (not a lock file) leaves nothing behind in the tree. With
    ``create`` the directory is made first; a build that fails may remove it again, so after
    waiting for the lock the directory is checked to still be the one that was locked.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - no flock on Windows; builds are not serialised
        if create:
            root.mkdir(parents=True, exist_ok=True)
        yield
        return
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
    while True:
        try:
            if create:
                root.mkdir(parents=True, exist_ok=True)
            fd = os.open(root, flags)
        except OSError as e:
            if not exclusive:  # check on a missing output: nothing to guard
                yield
                return
            raise OutputError(f"cannot open '{root}': {e.strerror or e}") from e
        try:
            fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
            try:
                same = os.path.samestat(os.fstat(fd), os.lstat(root))
            except FileNotFoundError:
                same = False
            if same or not create:
                yield
                return
        finally:
            os.close(fd)


def _fsync_dir(d: Path) -> None:
    try:
        fd = os.open(d, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _write_new(path: Path, data: bytes) -> None:
    """Create ``path`` (it must not exist) honouring the umask, and fsync it."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o666)
    try:
        view = memoryview(data)
        while view:
            n = os.write(fd, view)
            view = view[n:]
        os.fsync(fd)
    finally:
        os.close(fd)


def _remove_tree(p: Path) -> None:
    """Delete a staging dir; rmtree never follows symlinks inside it."""
    try:
        st = os.lstat(p)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(st.st_mode):
        shutil.rmtree(p, ignore_errors=True)
    else:
        os.unlink(p)


def recover(root: Path) -> list[str]:
    """Finish or discard what a killed build left behind; returns warnings.

    Call with the lock held. A journal means the build had committed: replay it. A staging dir
    without a journal means it had not: delete it (the old tree is intact).
    """
    warnings: list[str] = []
    raw = read_regular(root / JOURNAL)
    if raw is not None:
        try:
            journal = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):  # '[[[[…' is hostile too
            journal = None
        if isinstance(journal, dict):
            _replay(root, journal, warnings)
        else:
            warnings.append(f"ignoring unreadable journal '{root / JOURNAL}'")
    if raw is not None or os.path.lexists(root / JOURNAL):
        try:
            os.unlink(root / JOURNAL)
        except FileNotFoundError:
            pass
    _remove_tree(root / STAGE)
    _remove_swap_leftover(root)
    return warnings


def _replay(root: Path, journal: Mapping[str, object], warnings: list[str]) -> None:
    moves = journal.get("write", [])
    deletes = journal.get("delete", [])
    if not isinstance(moves, list) or not isinstance(deletes, list):
        warnings.append("ignoring malformed journal")
        return
    stage = root / STAGE
    try:
        stage_ok = stat.S_ISDIR(os.lstat(stage).st_mode)
    except FileNotFoundError:
        stage_ok = False
    for rel in moves:
        s = safe_rel(rel)
        if s is None:
            warnings.append(f"ignoring journal entry {rel!r}: outside the output")
            continue
        src = contained(stage, s) if stage_ok else None
        if src is None or not os.path.lexists(src):
            continue  # already moved before the interruption
        parent = _real_dirs(root, s, create=True)
        if parent is None:
            raise OutputError(f"refusing to write '{s}': a symlink or file is in the way")
        os.replace(src, root / s)
    for rel in deletes:
        path = contained(root, rel) if safe_rel(rel) else None
        if path is None:
            warnings.append(f"ignoring journal entry {rel!r}: outside the output")
            continue
        try:
            if not stat.S_ISDIR(os.lstat(path).st_mode):
                os.unlink(path)
        except FileNotFoundError:
            continue
        _prune_empty(root, path)
    _fsync_dir(root)


def _prune_empty(root: Path, path: Path) -> None:
    d = path.parent
    while d != root and root in d.parents:
        try:
            d.rmdir()
        except OSError:
            return
        d = d.parent


# Whole-tree swaps (Linux); tests set this to False to exercise the journal commit.
SWAP = sys.platform.startswith("linux")
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100
_renameat2: object = None


def _exchange(a: Path, b: Path) -> None:
    """Atomically exchange two paths (``renameat2(RENAME_EXCHANGE)``); OSError if impossible."""
    global _renameat2
    if _renameat2 is None:
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
            fn = libc.renameat2
            fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p]
            fn.argtypes.append(ctypes.c_uint)
            fn.restype = ctypes.c_int
            _renameat2 = fn
        except (OSError, AttributeError):
            _renameat2 = False
    if _renameat2 is False:
        raise OSError(errno.ENOSYS, "renameat2 is not available")
    rc = _renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)  # type: ignore[operator]
    if rc != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e), str(a))


def swap_path(root: Path) -> Path:
    """Where a whole-tree commit builds the new tree: beside ``root``, a reserved name."""
    return root.parent / f".{root.name}.idlgen-swap"


def _remove_swap_leftover(root: Path) -> None:
    """A swap dir left by a killed build (before or after its exchange): delete it. Only a
    real directory under the reserved name is removed (rmtree never follows symlinks)."""
    p = swap_path(root)
    try:
        st = os.lstat(p)
    except OSError:
        return
    if stat.S_ISDIR(st.st_mode):
        shutil.rmtree(p, ignore_errors=True)


class _NoSwap(Exception):
    """The whole-tree swap cannot be used here; fall back to the journal commit."""


def _commit_swap(root: Path, files: Mapping[str, str], delete: Sequence[str]) -> None:
    """Build the new tree beside ``root`` and exchange the two in one step.

    Raises ``_NoSwap`` (before anything is visible) when this file system or OS cannot do it,
    ``OutputError`` when the new tree cannot be made (a symlink in the way, …); the old tree
    is untouched in both cases.
    """
    swap = swap_path(root)
    _remove_swap_leftover(root)
    try:
        st = os.lstat(root)
        os.mkdir(swap, 0o700)
    except OSError as e:
        raise _NoSwap(str(e)) from e
    try:
        try:
            _link_tree(root, swap, set(files) | set(delete))
        except OSError as e:  # EXDEV, EPERM (protected hard links), EMLINK, ...
            raise _NoSwap(str(e)) from e
        for rel in sorted(files):
            if _real_dirs(swap, rel, create=True) is None or _blocked(swap, rel):
                raise OutputError(f"refusing to write '{rel}': a symlink or file is in the way")
            _write_new(swap / rel, files[rel].encode("utf-8"))
        for rel in delete:
            path = contained(swap, rel)
            if path is not None:
                _prune_empty(swap, path)
        os.chmod(swap, stat.S_IMODE(st.st_mode))
        _fsync_dir(swap)
        try:
            _exchange(swap, root)  # the commit point: readers see old, then new
        except OSError as e:
            raise _NoSwap(str(e)) from e
    except BaseException:
        shutil.rmtree(swap, ignore_errors=True)
        raise
    _fsync_dir(root.parent)
    shutil.rmtree(swap, ignore_errors=True)  # the old tree


def _link_tree(src: Path, dst: Path, skip: set[str]) -> None:
    """Mirror ``src`` into ``dst``: directories made (same mode), everything else hard-linked
    (symlinks as symlinks, never followed), except the relative paths in ``skip`` and
    idlgen's own staging entries."""
    todo = [("", src, dst)]
    while todo:
        rel, s, d = todo.pop()
        with os.scandir(s) as it:
            entries = list(it)
        for e in entries:
            r = f"{rel}{e.name}"
            if not rel and e.name in (STAGE, JOURNAL):
                continue
            if e.is_dir(follow_symlinks=False):
                os.mkdir(d / e.name, stat.S_IMODE(e.stat(follow_symlinks=False).st_mode) | 0o700)
                todo.append((f"{r}/", Path(e.path), d / e.name))
            elif r not in skip:
                os.link(e.path, d / e.name, follow_symlinks=False)
        os.chmod(d, stat.S_IMODE(os.lstat(s).st_mode))


def commit(root: Path, files: Mapping[str, str], delete: Sequence[str]) -> None:
    """Replace ``files`` (relative paths → text) and delete ``delete`` as one crash-safe step.

    Call with the lock held and after ``recover``. Raises ``OutputError`` when the output
    cannot be written; the old tree is then left as it was. On Linux the whole tree is
    swapped at once (see the module docstring); elsewhere, or when that fails, files are
    renamed one by one under a journal.
    """
    if SWAP:
        try:
            _commit_swap(root, files, delete)
            return
        except _NoSwap:
            pass
        except OSError as e:
            raise OutputError(_why(e)) from e
    stage = root / STAGE
    try:
        _remove_tree(stage)
        os.mkdir(stage)
        for rel in sorted(files):
            parent = _real_dirs(stage, rel, create=True)
            assert parent is not None  # the staging dir is ours and fresh
            _write_new(stage / rel, files[rel].encode("utf-8"))
            if _blocked(root, rel):
                raise OutputError(f"refusing to write '{rel}': a symlink or file is in the way")
        journal = json.dumps({"write": sorted(files), "delete": sorted(delete)}).encode()
        # Written inside the staging dir (so a leftover goes with it), renamed into place.
        _write_new(stage / _JOURNAL_TMP, journal)
        os.replace(stage / _JOURNAL_TMP, root / JOURNAL)  # the commit point
        _fsync_dir(root)
    except OSError as e:
        _remove_tree(stage)
        raise OutputError(_why(e)) from e
    except BaseException:
        _remove_tree(stage)
        raise
    try:
        recover(root)
    except OSError as e:
        raise OutputError(
            f"{_why(e)}; the build committed but could not finish: run it again to complete it"
        ) from e


def _blocked(root: Path, rel: str) -> bool:
    """True if a symlink or a non-directory sits where a directory of ``rel`` must be, or a
    directory sits where the file must be (the rename would fail after the commit point)."""
    d = root
    for part in PurePosixPath(rel).parts[:-1]:
        d = d / part
        try:
            st = os.lstat(d)
        except FileNotFoundError:
            return False
        if not stat.S_ISDIR(st.st_mode):
            return True
    try:
        return stat.S_ISDIR(os.lstat(root / rel).st_mode)
    except FileNotFoundError:
        return False


def _why(e: OSError) -> str:
    if e.errno == errno.ENOSPC:
        return "no space left on the device (the previous output is unchanged)"
    if e.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        where = f" '{e.filename}'" if e.filename else ""
        return f"output is not writable{where}: {e.strerror} (the previous output is unchanged)"
    return f"cannot write the output: {e.strerror or e} (the previous output is unchanged)"
