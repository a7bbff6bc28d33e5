"""Which pytest-xdist group a test joins: the server it uses, not the folder it lives in.

`make test` runs the suite in two workers (``-n 2 --dist loadgroup``). A session fixture that starts a server (or
builds an environment) starts once in each worker that runs a test using it. Each test that uses one of
``SERVERS`` joins that server's group, so the server starts in one worker only; xdist hands each group whole to
the next free worker (the groups with the most tests first), then the other tests one at a time to whichever
worker is free, so the two queues end together. A test using several servers joins the group of the first of
them in ``SERVERS``; the others start in its worker too (each is cheap next to the first).

A test that reaches a server through ``request.getfixturevalue`` names it by a parameter's value
(``BY_PARAMETER``: tests/sql's ``db``, ``kind``, ``database``, …); a server that starts for a test which declared
neither fails that test, naming the server, so the groups stay exact as tests are added.
"""

from __future__ import annotations

import pytest

# the session fixtures that start a server or build an environment, costliest to start first: JVMs (the Hive
# metastore, a standalone cluster, Spark Connect), Airflow's environments, the docs site's build, then the database
# servers, the Pushgateway, promtool, carbon, InfluxDB and Chromium (which apt may install), moto, the Kafka broker,
# the registry
SERVERS = ("hive_metastore", "spark_sql_reader", "standalone", "connect_server", "airflow_venv", "airflow2_venv",
           "built_site", "pg_cluster", "mariadb_server", "pushgateway", "promtool", "carbon_server", "influxdb_server",
           "chromium_binary", "s3_server", "broker", "schema_registry")
# a parameter's value that makes a test ask for a server's fixture by name while it runs
BY_PARAMETER = {"postgresql": "pg_cluster", "postgres_db": "pg_cluster", "pg_db": "pg_cluster",
                "mysql": "mariadb_server", "mariadb": "mariadb_server", "mysql_db": "mariadb_server",
                "airflow3": "airflow_venv", "airflow2": "airflow2_venv"}
_running: list[pytest.Item] = []


def servers_of(item: pytest.Item) -> list[str]:
    """The servers ``item`` uses, in the order of ``SERVERS``."""
    names = set(getattr(item, "fixturenames", ()))
    callspec = getattr(item, "callspec", None)
    if callspec is not None:
        names |= {BY_PARAMETER[value] for value in callspec.params.values()
                  if isinstance(value, str) and value in BY_PARAMETER}
    return [server for server in SERVERS if server in names]


# first: pytest-xdist's worker plugin reads the groups in its own hook of this name
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Each test that uses a server joins the group of the first it uses."""
    for item in items:
        servers = servers_of(item)
        if servers:
            item.add_marker(pytest.mark.xdist_group(servers[0]))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    _running.append(item)
    try:
        yield
    finally:
        _running.pop()


@pytest.hookimpl(tryfirst=True)
def pytest_fixture_setup(fixturedef: pytest.FixtureDef, request: pytest.FixtureRequest) -> None:
    """A server starting for a test that did not declare it would start in the other worker too."""
    if fixturedef.argname in SERVERS and _running and fixturedef.argname not in servers_of(_running[-1]):
        raise pytest.UsageError(
            f"{_running[-1].nodeid} starts the server fixture {fixturedef.argname!r} it did not declare: request "
            "it as an argument, or add the parameter value that makes it ask for it to BY_PARAMETER in "
            "tests/server_groups.py")
