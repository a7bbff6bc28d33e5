"""The text encryption of jasypt's ``BasicTextEncryptor`` and ``StrongTextEncryptor``, which Gobblin's
``PasswordManager`` uses for ``ENC(…)`` values: byte for byte what the JDK's SunJCE provider computes.

- ``BasicTextEncryptor``: ``PBEWithMD5AndDES``; ``StrongTextEncryptor``: ``PBEWithMD5AndTripleDES``.
- An 8-byte random salt, 1000 iterations; the result is base64 (with padding) of ``salt || ciphertext``, the
  text UTF-8, the cipher in CBC mode with PKCS#5 padding.
- The key and IV come from PBKDF1 with MD5 as SunJCE implements it: for DES, ``MD5^1000(password || salt)`` gives
  the key (first 8 bytes) and the IV (last 8); for triple DES each half of the salt is hashed on its own
  (``MD5(half || password)``, iterated) into 16 bytes each, giving a 24-byte key and an 8-byte IV, and a salt
  whose halves are equal has its first half reversed first, as SunJCE does.
- The master password must be printable ASCII: SunJCE's PBE keys refuse anything else.
"""

from __future__ import annotations

import base64
import binascii
import os
import warnings
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.ciphers import Cipher

# hashlib and cryptography are imported where a value is encrypted or decrypted: a job without ENC(…) values
# loads neither

__all__ = ["SALT_BYTES", "ITERATIONS", "JasyptError", "algorithm", "encrypt", "decrypt"]

SALT_BYTES = 8  # jasypt's RandomSaltGenerator default, and the salt size PBEWithMD5And(Triple)DES require
ITERATIONS = 1000  # jasypt's StandardPBEByteEncryptor default
_BLOCK = 8


class JasyptError(ValueError):
    """The value cannot be decrypted with this master password (wrong password, or not jasypt's format), or the
    master password is not one SunJCE accepts. The message never holds the value or the password."""


def algorithm(strong: bool) -> str:
    """The JCE name of the cipher: ``PBEWithMD5AndTripleDES`` when ``strong``, else ``PBEWithMD5AndDES``."""
    return "PBEWithMD5AndTripleDES" if strong else "PBEWithMD5AndDES"


def _password_bytes(password: str) -> bytes:
    if any(not " " <= ch <= "~" for ch in password):
        raise JasyptError("the master password is not printable ASCII (the JDK's PBE ciphers accept nothing else)")
    return password.encode("ascii")


def _des_key(password: bytes, salt: bytes, iterations: int) -> tuple[bytes, bytes]:
    import hashlib

    digest = hashlib.md5(password + salt).digest()
    for _ in range(iterations - 1):
        digest = hashlib.md5(digest).digest()
    return digest[:8] * 3, digest[8:]  # DES as triple DES with one key three times (EDE = E)


def _triple_des_key(password: bytes, salt: bytes, iterations: int) -> tuple[bytes, bytes]:
    import hashlib

    work = bytearray(salt)
    if work[:4] == work[4:]:
        work[:4] = work[3::-1]  # SunJCE reverses the first half of a salt whose halves are equal
    out = b""
    for half in (bytes(work[:4]), bytes(work[4:])):
        for _ in range(iterations):
            half = hashlib.md5(half + password).digest()
        out += half
    return out[:24], out[24:32]


def _cipher(password: str, salt: bytes, strong: bool) -> Cipher:
    from cryptography.hazmat.decrepit.ciphers.algorithms import TripleDES
    from cryptography.hazmat.primitives.ciphers import Cipher, modes

    derive = _triple_des_key if strong else _des_key
    key, iv = derive(_password_bytes(password), salt, ITERATIONS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TripleDES lives in cryptography's "decrepit" module: this is on purpose
        return Cipher(TripleDES(key), modes.CBC(iv))


def encrypt(plain: str, password: str, *, strong: bool = False, salt: bytes | None = None) -> str:
    """``plain`` encrypted as jasypt's text encryptor does (base64, without the ``ENC(…)`` around it)."""
    salt = os.urandom(SALT_BYTES) if salt is None else salt
    if len(salt) != SALT_BYTES:
        raise ValueError(f"the salt must be {SALT_BYTES} bytes")
    from cryptography.hazmat.primitives import padding

    padder = padding.PKCS7(_BLOCK * 8).padder()
    data = padder.update(plain.encode("utf-8")) + padder.finalize()
    encryptor = _cipher(password, salt, strong).encryptor()
    return base64.b64encode(salt + encryptor.update(data) + encryptor.finalize()).decode("ascii")


def decrypt(encrypted: str, password: str, *, strong: bool = False) -> str:
    """The text jasypt's encryptor turned into ``encrypted`` (base64 of salt and ciphertext); :class:`JasyptError`
    when the password is wrong or the value is not in jasypt's format."""
    try:
        raw = base64.b64decode(encrypted.strip(), validate=True)
    except (binascii.Error, ValueError):
        raise JasyptError("the value is not base64 (jasypt writes base64 of the salt and the ciphertext)") from None
    body = raw[SALT_BYTES:]
    if len(raw) < SALT_BYTES + _BLOCK or len(body) % _BLOCK:
        raise JasyptError(f"the value is {len(raw)} bytes, not an {SALT_BYTES}-byte salt and whole cipher blocks")
    from cryptography.hazmat.primitives import padding

    decryptor = _cipher(password, raw[:SALT_BYTES], strong).decryptor()
    data = decryptor.update(body) + decryptor.finalize()
    unpadder = padding.PKCS7(_BLOCK * 8).unpadder()
    try:
        plain = unpadder.update(data) + unpadder.finalize()
        return plain.decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        raise JasyptError(f"it does not decrypt with this master password ({algorithm(strong)})") from None
