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


def test_ordered_map_keeps_the_order_and_raises_in_the_caller():
    from verify.runtime.threads import ordered_map

    drawn = []

    def items():
        for item in range(7):
            drawn.append(item)
            yield item

    results = ordered_map(lambda x: x * x, items(), workers=3)
    assert next(results) == 0 and len(drawn) <= 3  # drawn as the work goes on
    assert list(results) == [x * x for x in range(1, 7)]
    assert list(ordered_map(lambda x: -x, range(4), workers=1)) == [0, -1, -2, -3]
    with pytest.raises(ZeroDivisionError):
        list(ordered_map(lambda x: 1 / (x - 2), range(4), workers=2))
