"""ENC(…) values in job files: decrypted at load with Gobblin's master password files (rotation included), refused
before any work naming the key (never the value) when they cannot be, written by ``gpy password-manager``, and
never shown by anything gpy writes."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from gobblin_py.cli import main
from gobblin_py.jobconf import jasypt, load_job
from gobblin_py.sdk.redact import redact
from tests.support.cli import run_gpy_here
from tests.sql.helpers import SqlJob, create_shop
from tests.sql.servers import PG_PASSWORD

CURRENT, OLD, JDBC = "Current-Master-7q", "Old-Master-2w", "Jdbc-Master-5e"


def key_files(root: Path) -> Path:
    """``master.key`` (the current master password), ``master.key.1`` (the one before) and a JDBC publisher's key."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "master.key").write_text(CURRENT + "\n")
    (root / "master.key.1").write_text(OLD + "\r\nignored second line\n")
    (root / "jdbc.key").write_text(JDBC)
    return root / "master.key"


def enc(value: str, master: str = CURRENT, strong: bool = False) -> str:
    return f"ENC({jasypt.encrypt(value, master, strong=strong)})"


def write(path: Path, props: dict[str, str]) -> Path:
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    return path


def test_every_enc_value_is_decrypted_at_load_with_the_key_its_rotation_or_the_jdbc_publishers(tmp_path):
    key = key_files(tmp_path / "keys")
    job = write(tmp_path / "job.pull", {
        "encrypt.key.loc": str(key),
        "source.conn.password": enc("Pw-current-81"),
        "rest.auth.token": " " + enc("Tok-rotated-52", OLD) + " ",  # blanks around, as a file may have them
        "jdbc.publisher.encrypt_key_loc": str(tmp_path / "keys" / "jdbc.key"),
        "jdbc.publisher.password": enc("Pw-jdbc-ünï-33", JDBC),
        "jdbc.publisher.password.1": enc("Pw-branch-1-44", JDBC),  # a branch's: the unsuffixed key file serves it
        "source.querybased.query": "SELECT 'ENC(abc)' AS x",  # ENC(…) inside a value: not a secret, kept
    })
    props = load_job(job)
    assert props["source.conn.password"] == "Pw-current-81"
    assert props["rest.auth.token"] == "Tok-rotated-52"
    assert props["jdbc.publisher.password"] == "Pw-jdbc-ünï-33" and props["jdbc.publisher.password.1"] == "Pw-branch-1-44"
    assert props["source.querybased.query"] == "SELECT 'ENC(abc)' AS x"
    assert redact("login Pw-current-81 / Tok-rotated-52 / Pw-jdbc-ünï-33") == "login ****** / ****** / ******"


def test_a_value_that_cannot_be_decrypted_stops_the_job_before_any_work_naming_the_key_not_the_value(tmp_path):
    key = key_files(tmp_path / "keys")
    (tmp_path / "folder.key").mkdir()
    jobs = tmp_path / "jobs"
    jobs.mkdir()
    secret = "Never-Shown-61"
    base = {"job.name": "x", "source.class": "gobblin_py.connectors.sql.QueryBasedSource",
            "source.conn.driver": "sqlite", "source.conn.database": str(tmp_path / "db.sqlite"),
            "source.entities": "t", "task.data.root.dir": str(tmp_path / "work"),
            "state.store.dir": str(tmp_path / "state"), "data.publisher.final.dir": str(tmp_path / "out")}
    cases = {
        "no_key": ({"source.conn.password": enc(secret)},
                   "encrypt.key.loc, the file holding the master password, is not set"),
        "folder": ({"encrypt.key.loc": str(tmp_path / "folder.key"), "source.conn.password": enc(secret)},
                   "is a folder"),
        "missing": ({"encrypt.key.loc": str(tmp_path / "nowhere.key"), "source.conn.password": enc(secret)},
                    "is not found"),
        "wrong_key": ({"encrypt.key.loc": str(key), "source.conn.password": enc(secret, "Some-Other-Master")},
                      f"cannot be decrypted with the master password in {key}, {key}.1"),
        "strong": ({"encrypt.key.loc": str(key), "source.conn.password": enc(secret, strong=True)},
                   "does not decrypt with this master password (PBEWithMD5AndDES)"),
        "not_base64": ({"encrypt.key.loc": str(key), "source.conn.password": "ENC(" + secret + ")"},
                       "the value is not base64"),
        "cut_short": ({"encrypt.key.loc": str(key), "source.conn.password": enc(secret)[:-9] + ")"},
                      "not an 8-byte salt and whole cipher blocks"),
    }
    for name, (props, _) in cases.items():
        write(jobs / f"{name}.pull", {**base, **props})
    result = run_gpy_here("validate", str(jobs), "--json")
    assert result.returncode == 2, result.stdout
    reports = {Path(r["path"]).stem: r["problems"] for r in json.loads(result.stdout)}
    for name, (_, why) in cases.items():
        assert len(reports[name]) == 1 and "key 'source.conn.password': ENC(…)" in reports[name][0], reports[name]
        assert why in reports[name][0], (name, reports[name])
    assert secret not in result.stdout + result.stderr and jasypt.encrypt(secret, CURRENT)[:12] not in result.stdout
    run = run_gpy_here("run", str(jobs / "wrong_key.pull"), "--engine", "local")
    assert run.returncode == 2 and "key 'source.conn.password'" in run.stderr and secret not in run.stderr
    assert not (tmp_path / "out").exists()


def test_password_manager_encrypts_and_decrypts_from_standard_input(tmp_path):
    key = key_files(tmp_path / "keys")
    runner = CliRunner()
    for strong in ([], ["--strong"]):
        out = runner.invoke(main, ["password-manager", "encrypt", "-f", str(key), *strong], input="Pässword-9\n")
        assert out.exit_code == 0, out.output
        value = out.stdout.strip()
        assert value.startswith("ENC(") and "Pässword-9" not in value
        assert jasypt.decrypt(value[4:-1], CURRENT, strong=bool(strong)) == "Pässword-9"
        back = runner.invoke(main, ["password-manager", "decrypt", "-f", str(key), *strong], input=value)
        assert (back.exit_code, back.stdout) == (0, "Pässword-9\n")
    rotated = runner.invoke(main, ["password-manager", "decrypt", "-f", str(key)], input=enc("Old-One-4", OLD))
    assert rotated.stdout == "Old-One-4\n"
    wrong = runner.invoke(main, ["password-manager", "decrypt", "-f", str(key), "--keys", "1"],
                          input=enc("Old-One-4", OLD))
    assert wrong.exit_code == 2 and "does not decrypt" in wrong.output and "Old-One-4" not in wrong.output
    missing = runner.invoke(main, ["password-manager", "encrypt", "-f", str(tmp_path / "none")], input="x\n")
    assert missing.exit_code == 2 and "is not found" in missing.output


def test_an_sql_job_with_an_encrypted_password_runs_and_no_surface_shows_a_decrypted_value(postgres_db, tmp_path):
    create_shop(postgres_db, orders=12, customers=2)
    key = key_files(tmp_path / "keys")
    job = SqlJob(tmp_path / "job", postgres_db, tables="orders", **{
        "encrypt.key.loc": str(key), "encrypt.use.strong.encryptor": "true",
        "source.conn.password": enc(PG_PASSWORD, strong=True), "job.schedule": "0 0 2 * * ?",
        "metrics.reporting.file.enabled": "true", "metrics.log.dir": str(tmp_path / "metrics"),
        "openlineage.transport.type": "file", "openlineage.transport.log_file_path": str(tmp_path / "lineage.jsonl")})
    ok = job.run()
    assert ok.returncode == 0, ok.output
    assert job.ids() == list(range(1, 13))
    # a decrypted value a server echoes in its error: the database name, encrypted, that does not exist
    missing_db = "Shop-Db-Missing-73"
    failed = job.set(source__conn__database=enc(missing_db, strong=True)).run()
    assert failed.returncode == 2 and 'database "******" does not exist' in failed.output, failed.output
    texts = [ok.output, failed.output,
             run_gpy_here("history", str(job.file)).stdout, run_gpy_here("validate", str(job.file), "--json").stdout,
             run_gpy_here("state", "show", str(job.file), "--json").stdout]
    dags = tmp_path / "dags"
    assert run_gpy_here("schedule", str(job.file), "--airflow", str(dags), "--jobs-root", str(tmp_path)).returncode == 0
    files = [*job.state_dir.rglob("*"), *(tmp_path / "metrics").rglob("*"), tmp_path / "lineage.jsonl", *dags.rglob("*")]
    blobs = [p.read_bytes() for p in files if p.is_file()]
    assert any(b"runEvent" in b or b"eventType" in b for b in blobs) and len(blobs) > 4
    for secret in (PG_PASSWORD, missing_db):
        assert all(secret not in text for text in texts), secret
        assert all(secret.encode() not in blob for blob in blobs), secret
    assert json.loads(texts[3])[0]["properties"]["source.conn.password"] == "******"
