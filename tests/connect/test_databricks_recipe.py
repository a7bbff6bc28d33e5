"""The docs' Databricks recipe, checked without Databricks: its address parses as PySpark's Connect client
reads it (TLS on port 443, the cluster id sent as a header, gpy's kept session id added), the job validates,
and every spark.* key it sets is one a Spark Connect session may set (checked on the suite's Connect server:
a cluster key there would be dropped silently)."""

from __future__ import annotations

from pyspark.sql.connect.client import DefaultChannelBuilder

from gobblin_py.runtime.engines.connect import check_remote
from gobblin_py.runtime.engines.connect_session import session_url
from tests.support.cli import run_gpy_here
from tests.support.readme_recipes import job_with, properties


def test_the_databricks_address_parses_as_the_connect_client_reads_it_and_the_job_validates(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # where gpy keeps the job's session id
    keys = properties("databricks")
    remote = check_remote(keys["spark.remote"], "spark.remote")
    channel = DefaultChannelBuilder(session_url(remote, "orders"))  # the address gpy connects with
    assert channel.secure and channel.endpoint.endswith(":443") and channel.host.endswith(".azuredatabricks.net")
    assert ("x-databricks-cluster-id", "0123-456789-abcdefgh") in channel.metadata()
    assert channel.session_id is not None  # a UUID the client accepts
    assert "token" not in remote  # read from SPARK_CONNECT_AUTHENTICATE_TOKEN, never in the job file

    result = run_gpy_here("validate", "--strict", str(job_with(keys, tmp_path)))
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_databricks_recipes_session_keys_are_ones_a_connect_session_sets(connect_server):
    from pyspark.sql.connect.session import SparkSession

    runtime = {k: v for k, v in properties("databricks").items() if k.startswith("spark.") and k != "spark.remote"}
    assert runtime
    session = SparkSession.builder.remote(connect_server.url).create()
    try:
        for key, value in runtime.items():
            assert session.conf.isModifiable(key), f"{key} is not a runtime key: a Connect session ignores it"
            session.conf.set(key, value)
            assert session.conf.get(key) == value
    finally:
        session.stop()
