"""A file's SHA-256 hashed in the background: the file's own digest, of the file opened
when it was asked for."""

import hashlib
import os

import pytest

from verify.runtime.digest import FileDigest


def test_the_background_digest_is_the_files_sha256_as_opened(tmp_path):
    path = tmp_path / "data.bin"
    payload = os.urandom(3 << 20)
    path.write_bytes(payload)
    digest = FileDigest(path)
    replacement = tmp_path / "other.bin"
    replacement.write_bytes(b"another file")
    os.replace(replacement, path)  # the path now names another file; the digest does not
    assert digest.hexdigest() == hashlib.sha256(payload).hexdigest()
    assert digest.hexdigest() == hashlib.sha256(payload).hexdigest()  # asked twice


def test_a_missing_file_is_an_error_at_once(tmp_path):
    with pytest.raises(FileNotFoundError):
        FileDigest(tmp_path / "absent.npz")
