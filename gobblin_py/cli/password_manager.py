"""``gpy password-manager encrypt|decrypt``: ``ENC(…)`` values as Gobblin's ``gobblin passwordManager``
(``CLIPasswordEncryptor``) writes and reads them, with the master password file of ``encrypt.key.loc``.

The value comes from standard input or a prompt that does not echo, never from the command line, so it does not
land in the shell's history or in the process list.
"""

from __future__ import annotations

import sys

import click

from gobblin_py.cli.base import main
from gobblin_py.sdk.errors import UsageError


def _read_value(prompt: str, confirm: bool) -> str:
    if sys.stdin.isatty():
        return str(click.prompt(prompt, hide_input=True, confirmation_prompt=confirm, err=True))
    text = sys.stdin.read()
    return text[:-1] if text.endswith("\n") else text  # one line ending, as a shell's echo or here-string adds


def _key_options(func):
    func = click.option("-s", "--strong", is_flag=True,
                        help="jasypt's StrongTextEncryptor (PBEWithMD5AndTripleDES), as encrypt.use.strong."
                             "encryptor=true; default BasicTextEncryptor (PBEWithMD5AndDES).")(func)
    return click.option("-f", "--key-file", required=True, metavar="FILE",
                        help="The master password file (encrypt.key.loc): its first line is the master password.")(func)


@main.group("password-manager")
def password_manager() -> None:
    """Encrypt or decrypt values for ENC(…) in job files (Gobblin's passwordManager)."""


@password_manager.command("encrypt")
@_key_options
def encrypt_command(key_file: str, strong: bool) -> None:
    """Print ENC(…) of a value read from standard input (or a prompt): paste it into a job file."""
    from gobblin_py.jobconf import jasypt
    from gobblin_py.jobconf.encrypted import KeyringError, master_passwords

    try:
        (_, password), *_ = master_passwords(key_file, 1)
        value = _read_value("Value to encrypt", confirm=True)
        click.echo(f"ENC({jasypt.encrypt(value, password, strong=strong)})")
    except (KeyringError, jasypt.JasyptError) as exc:
        raise UsageError(f"--key-file: {exc}") from None


@password_manager.command("decrypt")
@_key_options
@click.option("--keys", "count", type=click.IntRange(1, 1000), default=2, show_default=True,
              help="How many master password files to try: FILE, then FILE.1, … (num.encrypt.keys).")
def decrypt_command(key_file: str, strong: bool, count: int) -> None:
    """Print the plain value of an ENC(…) read from standard input (or a prompt), to check it."""
    from gobblin_py.jobconf import jasypt
    from gobblin_py.jobconf.encrypted import KeyringError, encrypted_keys, master_passwords

    value = _read_value("ENC(…) value", confirm=False).strip()
    if not encrypted_keys({"value": value}):
        raise UsageError("the value read is not ENC(…)")
    inner = value[value.index("(") + 1:value.rindex(")")]
    try:
        keyring = master_passwords(key_file, count)
    except KeyringError as exc:
        raise UsageError(f"--key-file: {exc}") from None
    for _, password in keyring:
        try:
            click.echo(jasypt.decrypt(inner, password, strong=strong))
            return
        except jasypt.JasyptError:
            continue
    files = ", ".join(path for path, _ in keyring)
    raise UsageError(f"ENC(…) does not decrypt with the master password in {files} ({jasypt.algorithm(strong)})")
