"""A file's SHA-256, computed in a background thread while the caller goes on.

The file is opened when the digest is asked for (so a missing file is an error at once,
and the bytes hashed are those of the file opened then, even if the path is replaced
later); the hash reads it in blocks in a daemon thread (the hash releases the interpreter
lock on each block), at a lower scheduling priority than the caller's threads (it is
needed last), and :meth:`FileDigest.hexdigest` waits for it.
"""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path

from verify.runtime.threads import lower_priority


class FileDigest:
    """The SHA-256 of the file at ``path``, hashed in the background from construction."""

    def __init__(self, path: str | Path):
        self._stream = open(path, "rb")  # noqa: SIM115 (closed by the thread)
        self._value: str | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._hash, name="sha256", daemon=True)
        self._thread.start()

    def _hash(self) -> None:
        lower_priority()
        try:
            with self._stream:
                self._value = hashlib.file_digest(self._stream, "sha256").hexdigest()
        except BaseException as error:  # re-raised by hexdigest, in the caller's thread
            self._error = error

    def hexdigest(self) -> str:
        """The digest as 64 hexadecimal digits (waits for the thread)."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        assert self._value is not None
        return self._value


__all__ = ["FileDigest"]
