"""The filesystem keys: Hadoop's S3A names and fsspec's options become fsspec's per-protocol defaults; wrong
values are refused before any work, one line each; secrets are never printed."""

from __future__ import annotations

import json
from pathlib import Path

import fsspec.config
import pytest

from gobblin_py.io import fs as fsutil
from gobblin_py.io import fs_settings
from gobblin_py.io.fs_settings import FsSettings
from gobblin_py.io.local_fs import LocalFileSystem
from gobblin_py.sdk.errors import UsageError
from gobblin_py.sdk.settings import SettingsError
from tests.support.cli import run_gpy

SECRET = "wJalrXUtnFEMI-never-print-me"


def options(props: dict) -> dict:
    return FsSettings.load(props).storage_options()


def test_s3a_keys_become_s3fs_options():
    got = options({"fs.s3a.endpoint": "minio.internal:9000", "fs.s3a.connection.ssl.enabled": "false",
                   "fs.s3a.access.key": "AKIA", "fs.s3a.secret.key": SECRET, "fs.s3a.session.token": "tok",
                   "fs.s3a.path.style.access": "true", "fs.s3a.endpoint.region": "eu-west-1"})
    assert got == {"s3": {"client_kwargs": {"endpoint_url": "http://minio.internal:9000", "region_name": "eu-west-1"},
                          "key": "AKIA", "secret": SECRET, "token": "tok",
                          "config_kwargs": {"s3": {"addressing_style": "path"}}}}
    assert options({"fs.s3a.endpoint": "s3.example.com"})["s3"]["client_kwargs"]["endpoint_url"] == "https://s3.example.com"
    assert options({"fs.s3a.endpoint": "http://127.0.0.1:9000/"})["s3"]["client_kwargs"]["endpoint_url"] == "http://127.0.0.1:9000"
    assert options({}) == {}


def test_fsspec_keys_pass_any_option_through_with_json_values_and_dotted_nesting():
    got = options({"fsspec.s3.requester_pays": "true", "fsspec.s3.default_block_size": "8388608",
                   "fsspec.s3.client_kwargs.region_name": "eu-west-3", "fsspec.hdfs.user": "etl",
                   "fsspec.gcs.project": "analytics", "fsspec.s3.config_kwargs": '{"retries": {"max_attempts": 9}}',
                   "fs.s3a.endpoint": "http://minio:9000"})
    assert got["s3"] == {"requester_pays": True, "default_block_size": 8388608,
                         "client_kwargs": {"region_name": "eu-west-3", "endpoint_url": "http://minio:9000"},
                         "config_kwargs": {"retries": {"max_attempts": 9}}}
    assert got["hdfs"] == {"user": "etl"} and got["gcs"] == {"project": "analytics"}


@pytest.mark.parametrize("props, message", [
    ({"fs.s3a.access.key": "AKIA"}, "key 'fs.s3a.access.key': is set without fs.s3a.secret.key; set both, or neither"),
    ({"fs.s3a.secret.key": SECRET}, "key 'fs.s3a.secret.key': is set without fs.s3a.access.key"),
    ({"fs.s3a.endpoint": "http://minio:9000/bucket/x"}, "key 'fs.s3a.endpoint': 'http://minio:9000/bucket/x' is not an endpoint"),
    ({"fsspec.nosuchfs.opt": "1"}, "key 'fsspec.nosuchfs.opt': fsspec has no filesystem 'nosuchfs'"),
    ({"fsspec.s3": "1"}, "key 'fsspec.s3': names no option"),
    ({"fs.s3a.path.style.access": "yes"}, "key 'fs.s3a.path.style.access': 'yes': not a boolean"),
])
def test_wrong_values_are_refused_naming_the_key(props, message):
    with pytest.raises(SettingsError) as caught:
        FsSettings.load(props)
    assert message in str(caught.value) and SECRET not in str(caught.value)


def test_apply_makes_them_fsspecs_defaults_above_its_own_configuration(monkeypatch):
    fs_settings.reset()
    monkeypatch.setitem(fsspec.config.conf, "s3", {"anon": False, "client_kwargs": {"region_name": "env-region"}})
    try:
        fs_settings.apply({"fs.s3a.endpoint": "http://127.0.0.1:1", "fs.s3a.access.key": "a", "fs.s3a.secret.key": "b"})
        conf = fsspec.config.conf["s3"]
        assert conf["client_kwargs"] == {"region_name": "env-region", "endpoint_url": "http://127.0.0.1:1"}
        assert conf["key"] == "a" and conf["anon"] is False and conf["use_listings_cache"] is False
        fs_settings.apply({})  # the next job in this process: the first job's keys are gone, fsspec's stay
        assert fsspec.config.conf["s3"] == {"use_listings_cache": False, "anon": False,
                                            "config_kwargs": {"max_pool_connections": 64},
                                            "client_kwargs": {"region_name": "env-region"}}
        fs_settings.apply({"fsspec.s3.use_listings_cache": "true"})
        assert fsspec.config.conf["s3"]["use_listings_cache"] is True
    finally:
        fs_settings.reset()
    assert fsspec.config.conf["s3"] == {"anon": False, "client_kwargs": {"region_name": "env-region"}}


def test_a_local_path_opens_gpys_local_filesystem_unless_the_job_gives_options_for_local_files(tmp_path):
    plain, path = fsutil.open_fs(str(tmp_path / "a" / "b"))
    assert path == str(tmp_path / "a" / "b") and isinstance(plain, LocalFileSystem)
    assert fsutil.open_fs("relative/x")[1] == str(Path.cwd() / "relative" / "x")
    try:
        fs_settings.apply({"fsspec.file.auto_mkdir": "true"})
        configured, _ = fsutil.open_fs(str(tmp_path))
        assert configured.auto_mkdir and configured is fsspec.core.url_to_fs(str(tmp_path))[0]
    finally:
        fs_settings.apply({})
        fs_settings.reset()
    assert isinstance(fsutil.open_fs(str(tmp_path))[0], LocalFileSystem)


def test_a_missing_filesystem_package_or_hdfs_client_is_one_line_naming_the_path():
    with pytest.raises(UsageError, match=r"^gcs://bucket/state: Please install gcsfs"):
        fsutil.open_fs("gcs://bucket/state")
    with pytest.raises(UsageError) as caught:
        fsutil.open_fs("hdfs://namenode:8020/state")
    assert str(caught.value).startswith("hdfs://namenode:8020/state: cannot start the HDFS client")
    assert "\n" not in str(caught.value) and "JAVA_HOME, HADOOP_HOME and CLASSPATH" in str(caught.value)


def test_validate_masks_the_secrets_and_explains_the_keys(tmp_path):
    job = tmp_path / "s3.pull"
    job.write_text("\n".join([
        "job.name=S3Keys", "source.class=FileBasedSource", f"source.filebased.data.directory={tmp_path}",
        f"data.publisher.final.dir={tmp_path}/out", f"state.store.dir={tmp_path}/state",
        f"task.data.root.dir={tmp_path}/work", "fs.s3a.endpoint=http://minio:9000", "fs.s3a.access.key=AKIAEXAMPLE", f"fs.s3a.secret.key={SECRET}",
        f"fsspec.s3.token={SECRET}-token", "",
    ]))
    result = run_gpy("validate", str(job), "--json")
    assert result.returncode == 0, result.stdout + result.stderr
    props = json.loads(result.stdout)[0]["properties"]
    assert props["fs.s3a.endpoint"] == "http://minio:9000"
    assert props["fs.s3a.access.key"] == props["fs.s3a.secret.key"] == props["fsspec.s3.token"] == "******"
    assert SECRET not in result.stdout + result.stderr
    explained = run_gpy("validate", "--explain", "fs.s3a.secret.key")
    assert explained.returncode == 0 and "never printed" in explained.stdout


def test_a_bad_key_fails_the_run_before_any_work_with_exit_2(tmp_path):
    job = tmp_path / "bad.pull"
    job.write_text("\n".join([
        "job.name=Bad", "source.class=FileBasedSource", f"source.filebased.data.directory={tmp_path}",
        f"data.publisher.final.dir={tmp_path}/out", f"state.store.dir={tmp_path}/state",
        f"task.data.root.dir={tmp_path}/work", f"fs.s3a.secret.key={SECRET}", "",
    ]))
    result = run_gpy("run", str(job), "--engine", "local")
    assert result.returncode == 2
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"gpy: error: {job}:7: key 'fs.s3a.secret.key': is set without fs.s3a.access.key")
    assert SECRET not in result.stderr and not (tmp_path / "state").exists()
