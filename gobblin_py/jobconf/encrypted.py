"""``ENC(…)`` values, Gobblin's encrypted passwords, decrypted when a job is loaded so every plugin reads plain values.

Gobblin's ``PasswordManager`` facts kept here:

- the master password is the first line (UTF-8) of the file ``encrypt.key.loc``; for key rotation, decryption
  also tries ``<loc>.1``, ``<loc>.2``, … up to ``num.encrypt.keys`` files in all (default 2), stopping at the first
  that is not a file; the first that decrypts the value wins (encryption always uses ``<loc>`` itself);
- ``encrypt.use.strong.encryptor=true`` picks jasypt's ``StrongTextEncryptor`` (``PBEWithMD5AndTripleDES``),
  else ``BasicTextEncryptor`` (``PBEWithMD5AndDES``): see :mod:`gobblin_py.jobconf.jasypt`;
- a folder at ``encrypt.key.loc`` is no key at all (Gobblin skips it, and decrypts nothing);
- Gobblin's JDBC writer and publisher take the master password file of ``jdbc.publisher.password`` from
  ``jdbc.publisher.encrypt_key_loc`` (with the basic encryptor), and gpy does too (else ``encrypt.key.loc``).

Where gpy differs on purpose: Gobblin decrypts only the keys each of its components passes to
``PasswordManager.readPassword``, and an ``ENC(…)`` it cannot decrypt (no key file) reaches the database as is;
gpy decrypts the value of every key that is ``ENC(…)`` as a whole (surrounding blanks aside) at load, and a value
it cannot decrypt stays as written for :func:`encrypted_value_problems` to report (exit code 2, the key named,
the value never shown) before any work. Each decrypted value is masked wherever gpy writes text
(:mod:`gobblin_py.sdk.redact`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from gobblin_py.sdk import redact
from gobblin_py.sdk.config_errors import ConfigError
from gobblin_py.sdk.settings import Settings, SettingsError, setting

from . import jasypt

__all__ = ["EncryptionSettings", "KEY_LOC", "STRONG", "encrypted_keys", "decrypt_properties",
           "encrypted_value_problems", "master_passwords", "KeyringError"]

KEY_LOC = "encrypt.key.loc"
STRONG = "encrypt.use.strong.encryptor"
NUM_KEYS = "num.encrypt.keys"
_JDBC_PASSWORD = "jdbc.publisher.password"
_JDBC_KEY_LOC = "jdbc.publisher.encrypt_key_loc"
_ENCRYPTED = re.compile(r"\s*ENC\((.*)\)\s*", re.DOTALL)
_LINE_END = re.compile(r"\r\n|\r|\n")  # where Java's LineReader ends a line (not at \f, \x1c, \u2028, …)


@dataclass(frozen=True)
class EncryptionSettings(Settings):
    """Gobblin's PasswordManager keys: where the master password of ENC(…) values is, and which encryptor wrote them."""

    key_loc: str | None = setting(KEY_LOC, example="/etc/gobblin/master.key",
                                  doc="FILE, whose first line is the master password of every ENC(…) value "
                                      "(a local path or an fsspec URL); FILE.1, FILE.2, … hold older master "
                                      "passwords, tried in turn (key rotation)")
    strong: bool = setting(STRONG, default=False,
                           doc="ENC(…) values are jasypt's StrongTextEncryptor's (PBEWithMD5AndTripleDES) instead of "
                               "BasicTextEncryptor's (PBEWithMD5AndDES)")
    key_count: int = setting(NUM_KEYS, default=2, minimum=1, maximum=1000,
                             doc="how many master password files are tried: encrypt.key.loc, then FILE.1, … (the "
                                 "first missing file ends the list)")


class KeyringError(ValueError):
    """No master password to decrypt with; the message names the file, never a password."""


def encrypted_keys(props: Mapping[str, str]) -> list[str]:
    """The keys whose value is ``ENC(…)`` as a whole."""
    return [key for key, value in props.items() if isinstance(value, str) and _ENCRYPTED.fullmatch(value)]


def master_passwords(location: str | None, count: int = 2) -> list[tuple[str, str]]:
    """``(file, master password)`` for ``location`` and its rotations ``<location>.1``, … (``count`` files at most,
    up to the first that is not a file); :class:`KeyringError` when ``location`` itself gives none."""
    if not location:
        raise KeyringError(f"{KEY_LOC}, the file holding the master password, is not set")
    found: list[tuple[str, str]] = []
    for index in range(count):
        path = location if index == 0 else f"{location}.{index}"
        try:
            import fsspec  # only a job with ENC(…) values reads key files

            fs, fs_path = fsspec.core.url_to_fs(path)
            if not fs.isfile(fs_path):
                break
            with fs.open(fs_path, "rb") as handle:
                first = _LINE_END.split(handle.read(65536).decode("utf-8"))
        except (OSError, ValueError, ImportError) as exc:
            raise KeyringError(f"the master password file {path} cannot be read: {type(exc).__name__}") from None
        if not first[0]:
            raise KeyringError(f"the master password file {path} has an empty first line")
        found.append((path, first[0]))
    if not found:
        kind = "a folder" if _is_dir(location) else "not found"
        raise KeyringError(f"{KEY_LOC} {location} is {kind}: it must be the file whose first line is the master "
                           "password")
    return found


def _is_dir(location: str) -> bool:
    try:
        import fsspec

        fs, fs_path = fsspec.core.url_to_fs(location)
        return bool(fs.isdir(fs_path))
    except (OSError, ValueError, ImportError):
        return False


def _where(props: Mapping[str, str], key: str, settings: EncryptionSettings) -> tuple[str | None, bool]:
    """The master password file and the encryptor for ``key``: Gobblin's JDBC writer and publisher decrypt
    ``jdbc.publisher.password`` with the key in ``jdbc.publisher.encrypt_key_loc`` (per branch) and the basic
    encryptor; every other key with ``encrypt.key.loc`` and ``encrypt.use.strong.encryptor``."""
    suffix = key[len(_JDBC_PASSWORD):]
    if key.startswith(_JDBC_PASSWORD) and (not suffix or suffix[1:].isdigit() and suffix[0] == "."):
        jdbc_loc = props.get(_JDBC_KEY_LOC + suffix) or props.get(_JDBC_KEY_LOC)
        if jdbc_loc:
            return jdbc_loc, False
    return settings.key_loc, settings.strong


def _decrypt(encrypted: str, keyring: list[tuple[str, str]], strong: bool) -> str:
    inner = _ENCRYPTED.fullmatch(encrypted)
    assert inner is not None
    failure: jasypt.JasyptError | None = None
    for _path, password in keyring:
        try:
            return jasypt.decrypt(inner.group(1), password, strong=strong)
        except jasypt.JasyptError as exc:
            failure = exc
    files = ", ".join(path for path, _ in keyring)
    raise jasypt.JasyptError(f"ENC(…) cannot be decrypted with the master password in {files}: {failure}")


def _attempts(props: Mapping[str, str]) -> Iterator[tuple[str, str | Exception]]:
    """``(key, plain value or why not)`` for every ``ENC(…)`` value of ``props``."""
    keys = encrypted_keys(props)
    if not keys:
        return
    try:
        settings = EncryptionSettings.load(props)
    except SettingsError as exc:
        for key in keys:
            yield key, exc
        return
    keyrings: dict[str | None, list[tuple[str, str]] | KeyringError] = {}
    for key in keys:
        location, strong = _where(props, key, settings)
        if location not in keyrings:
            try:
                keyrings[location] = master_passwords(location, settings.key_count)
            except KeyringError as exc:
                keyrings[location] = exc
        keyring = keyrings[location]
        if isinstance(keyring, KeyringError):
            yield key, keyring
            continue
        try:
            yield key, _decrypt(props[key], keyring, strong)
        except jasypt.JasyptError as exc:
            yield key, exc


def decrypt_properties(props: Mapping[str, str]) -> dict[str, str]:
    """``props`` with every ``ENC(…)`` value decrypted where it can be (each plain value then masked wherever gpy
    writes text); a value that cannot be decrypted stays as written, for :func:`encrypted_value_problems`."""
    out = dict(props)
    for key, plain in _attempts(props):
        if isinstance(plain, str):
            redact.remember(plain)
            out[key] = plain
    return out


def encrypted_value_problems(props: Mapping[str, str]) -> list[ConfigError]:
    """One error per key whose value is still ``ENC(…)`` (the loader could not decrypt it), saying why."""
    problems: list[ConfigError] = []
    for key, why in _attempts(props):
        if isinstance(why, SettingsError):
            problems.extend(p for p in why.problems if str(p) not in {str(q) for q in problems})
        elif isinstance(why, KeyringError):
            problems.append(ConfigError(f"ENC(…) cannot be decrypted: {why}", key=key,
                                        hint=f"set {KEY_LOC} to the master password file the value was encrypted "
                                             "with (gpy password-manager encrypt writes such values)"))
        elif isinstance(why, Exception):
            other = "false" if EncryptionSettings.load(props).strong else "true"
            problems.append(ConfigError(str(why), key=key,
                                        hint=f"encrypt the value again with gpy password-manager encrypt, or set "
                                             f"{STRONG}={other} if the other encryptor wrote it"))
    return problems
