"""One writer per output place: a command claims its ``--out`` before any work.

Two commands writing into one directory at once would interleave their files (and a
"no earlier result here" check made before writing is a race: both pass it). So a
command first *claims* the place:

1. the directory is created if missing, and must be a directory this process can write
   into;
2. the claim file ``.claim`` in it is opened (created if missing) and locked with an
   exclusive, non-blocking ``flock``; when another process holds the lock, the command is
   refused (:class:`~theory.foundation.validation.InvalidParameter` naming ``out``, the
   holder's process id, host, start time and command, read from the file);
3. a lock taken on a claim file that another process removed in the meantime does not
   count: the locked file must still be the one at ``.claim`` (same inode), otherwise
   the claim is tried again;
4. only then, under the lock, is the place checked for an earlier result (refused
   unless ``--overwrite``), and the holder's details written into the claim file.

The operating system releases the lock when the holder exits, however it exits (a
killed process leaves no stale claim); a holder that finishes removes the file. Files
inside the place are still written to unique temporary names and renamed into place
(:mod:`verify.output.files`), so a reader never sees half a file. A process may claim
a place it already holds (nested claims count up and release at the last exit).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from theory.foundation.validation import InvalidParameter
from verify.output.files import prepare_output_dir, refuse_earlier_result

CLAIM_FILE = ".claim"

#: Places this process holds: claim file -> [open descriptor, depth of nesting].
_HELD: dict[Path, list[int]] = {}


def holder_text(path: Path) -> str:
    """Who holds the claim file ``path``, in words (read from the file)."""
    try:
        holder = json.loads(path.read_text(encoding="utf-8") or "{}")
    except (OSError, ValueError):
        holder = {}
    if not isinstance(holder, dict) or "pid" not in holder:
        return "another process holds it"
    return (
        f"process {holder.get('pid')} on {holder.get('host', '?')} holds it since "
        f"{holder.get('since', '?')}: {holder.get('command', '?')}"
    )


def _lock(path: Path, shown: str, name: str) -> int:
    """An open descriptor of ``path`` under this process's exclusive lock, or
    :class:`InvalidParameter` when another process holds it."""
    while True:
        handle = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(handle)
            raise InvalidParameter(
                name,
                shown,
                f"a place no other process is writing into ({holder_text(path)}); wait for "
                "it to finish, or choose another directory",
            ) from None
        try:
            same = os.stat(path).st_ino == os.fstat(handle).st_ino
        except FileNotFoundError:
            same = False
        if same:
            return handle
        os.close(handle)  # the file was removed by its last holder: claim the new one


def _describe_holder(handle: int) -> None:
    record = {
        "pid": os.getpid(),
        "host": os.uname().nodename,
        "since": time.strftime("%Y-%m-%d %H:%M:%S"),
        "command": " ".join(sys.argv)[:500],
    }
    os.ftruncate(handle, 0)
    os.pwrite(handle, (json.dumps(record) + "\n").encode("utf-8"), 0)


@contextlib.contextmanager
def claim_output(
    path: str | Path,
    name: str = "out",
    overwrite: bool = False,
    guarded: Sequence[str] = (),
) -> Iterator[Path]:
    """Hold ``path`` as this process's output place for the block (see the module
    docstring); yields the directory. Refused with
    :class:`~theory.foundation.validation.InvalidParameter` naming ``name`` when the
    place is not a writable directory, another process holds it, or (unless
    ``overwrite``) it holds one of the ``guarded`` files of an earlier result."""
    directory = prepare_output_dir(path, name)
    claim = directory.resolve() / CLAIM_FILE
    if claim in _HELD:
        _HELD[claim][1] += 1
    else:
        handle = _lock(claim, str(path), name)
        _HELD[claim] = [handle, 1]
        try:
            refuse_earlier_result(directory, str(path), name, overwrite, guarded)
        except BaseException:
            _release(claim)
            raise
        _describe_holder(handle)
    try:
        yield directory
    finally:
        _release(claim)


def _release(claim: Path) -> None:
    held = _HELD[claim]
    held[1] -= 1
    if held[1]:
        return
    del _HELD[claim]
    with contextlib.suppress(OSError):
        claim.unlink()  # under the lock: a waiting claimant then sees another inode
    os.close(held[0])


def holds(path: str | Path) -> bool:
    """Whether this process holds the output place ``path``."""
    return Path(path).resolve() / CLAIM_FILE in _HELD


__all__ = ["claim_output", "holds", "holder_text", "CLAIM_FILE"]
