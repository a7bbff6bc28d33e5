"""gpy's ENC(…) ciphers against an independent implementation: the JDK's own SunJCE ``PBEWithMD5AndDES`` and
``PBEWithMD5AndTripleDES``, driven as jasypt drives them (JasyptCompat.java beside this file), in both directions."""

from __future__ import annotations

import base64
import hashlib
import shutil
import subprocess
from pathlib import Path

import pytest

from gobblin_py.jobconf import jasypt
from tests.support.environment import needs

SOURCE = Path(__file__).with_name("JasyptCompat.java")
ALGORITHMS = {False: "PBEWithMD5AndDES", True: "PBEWithMD5AndTripleDES"}
MASTER = "Gobblin-Master#2026 key"
VALUES = ["Pw-maria-5d1e-Kq", "pässwörd ünïcödé 密码 🔑", "", "x" * 100, "tab\tand\nnewline"]

pytestmark = needs(shutil.which("javac") is not None, "javac (a JDK) is not installed")


@pytest.fixture(scope="module")
def jdk(request, tmp_path_factory):
    """Runs request lines through the compiled JasyptCompat (compiled once, kept in pytest's cache when it has one)."""
    digest = hashlib.sha256(SOURCE.read_bytes()).hexdigest()[:16]
    cache = getattr(request.config, "cache", None)
    classes = cache.mkdir(f"jasypt-java-{digest}") if cache is not None else tmp_path_factory.mktemp("jasypt-java")
    if not (classes / "JasyptCompat.class").exists():
        subprocess.run(["javac", "-d", str(classes), str(SOURCE)], check=True, timeout=120)

    def run(lines: list[list[str]]) -> list[str]:
        text = "".join("\t".join(fields) + "\n" for fields in lines)
        done = subprocess.run(["java", "-cp", str(classes), "JasyptCompat"], input=text, capture_output=True,
                              text=True, encoding="utf-8", check=True, timeout=120)
        return done.stdout.splitlines()

    return run


def b64(text: str) -> str:
    return base64.b64encode(text.encode("utf-8")).decode()


def test_values_the_jdk_encrypts_gpy_decrypts_and_the_other_way_round(jdk):
    requests, expected = [], []
    for strong, name in ALGORITHMS.items():
        for value in VALUES:
            requests.append(["enc", name, MASTER, "-", b64(value)])  # Java encrypts, random salt
            expected.append(("java", strong, value))
        for value in VALUES:
            requests.append(["dec", name, MASTER, "-", jasypt.encrypt(value, MASTER, strong=strong)])  # gpy encrypts
            expected.append(("gpy", strong, value))
        # a salt whose halves are equal: SunJCE changes it before deriving the triple-DES key
        for salt in ("0102030401020304", "a1b2c3d4e5f60718"):
            requests.append(["enc", name, MASTER, salt, b64("same salt")])
            expected.append(("exact", strong, jasypt.encrypt("same salt", MASTER, strong=strong,
                                                             salt=bytes.fromhex(salt))))
    answers = jdk(requests)
    assert len(answers) == len(expected)
    for answer, (who, strong, value) in zip(answers, expected, strict=True):
        if who == "java":
            assert jasypt.decrypt(answer, MASTER, strong=strong) == value
        elif who == "gpy":
            assert base64.b64decode(answer).decode("utf-8") == value
        else:
            assert answer == value, (strong, value)


def test_a_wrong_master_password_or_a_non_ascii_one_fails_in_both(jdk):
    ours = jasypt.encrypt("s3cret-value", MASTER)
    theirs = jdk([["enc", ALGORITHMS[True], MASTER, "-", b64("s3cret-value")],
                  ["dec", ALGORITHMS[False], "not the master", "-", ours],
                  ["enc", ALGORITHMS[False], "mäster", "-", b64("x")]])
    assert theirs[1:] == ["ERR BadPaddingException", "ERR InvalidKeySpecException"]
    with pytest.raises(jasypt.JasyptError, match="does not decrypt"):
        jasypt.decrypt(ours, "not the master")
    with pytest.raises(jasypt.JasyptError, match="does not decrypt"):
        jasypt.decrypt(theirs[0], MASTER, strong=False)  # triple DES read as DES
    with pytest.raises(jasypt.JasyptError, match="not printable ASCII"):
        jasypt.encrypt("x", "mäster")
    for corrupt in ("not base64!", base64.b64encode(b"short").decode(), ours[:-4]):
        with pytest.raises(jasypt.JasyptError) as caught:
            jasypt.decrypt(corrupt, MASTER)
        assert corrupt not in str(caught.value)
