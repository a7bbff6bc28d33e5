"""The xdist groups follow the servers a test uses (tests/server_groups.py), and every session fixture that
starts a server is one of the servers they know."""

from __future__ import annotations

import ast
from pathlib import Path
from types import SimpleNamespace

from tests.server_groups import SERVERS, servers_of

TESTS = Path(__file__).resolve().parent
# session fixtures meant to start in each worker that needs them: nothing another worker could not start as
# cheaply, or (site_url, airflow) set up over a server's fixture, whose group they share
NOT_SERVERS = {"spark", "sample_store_module", "web_api_server", "bare_python", "site_url", "airflow"}


def _item(fixtures: list[str], **params: object) -> SimpleNamespace:
    return SimpleNamespace(fixturenames=fixtures, callspec=SimpleNamespace(params=params) if params else None)


def test_a_test_joins_the_group_of_the_costliest_server_it_uses():
    assert servers_of(_item(["tmp_path", "broker", "hive_metastore", "spark"])) == ["hive_metastore", "broker"]
    assert servers_of(_item(["tmp_path", "spark", "web_api"])) == []


def test_a_server_asked_for_by_name_while_the_test_runs_is_known_from_the_parameter():
    assert servers_of(_item(["db", "request"], db="postgresql")) == ["pg_cluster"]
    assert servers_of(_item(["request"], kind="mysql_db", delta="id")) == ["mariadb_server"]
    assert servers_of(_item(["request"], kind="sqlite_db")) == []
    assert servers_of(_item(["airflow", "request"], airflow="airflow2")) == ["airflow2_venv"]


def _session_fixtures() -> set[str]:
    found = set()
    for path in TESTS.rglob("*.py"):
        text = path.read_text()
        if 'scope="session"' not in text:
            continue
        for node in ast.walk(ast.parse(text, str(path))):
            if isinstance(node, ast.FunctionDef) and any(
                    isinstance(d, ast.Call) and any(k.arg == "scope" and getattr(k.value, "value", None) == "session"
                                                    for k in d.keywords) for d in node.decorator_list):
                found.add(node.name)
    return found


def test_every_session_fixture_is_a_grouped_server_or_meant_for_each_worker():
    unplaced = _session_fixtures() - NOT_SERVERS - set(SERVERS)
    assert not unplaced, f"{sorted(unplaced)}: a session fixture that starts a server needs a place in " \
        "tests/server_groups.py's SERVERS (or NOT_SERVERS here, when one per worker is intended)"


def test_a_test_that_uses_a_server_runs_in_its_group(request, schema_registry):
    # the registry: the cheapest server to start (a thread); the group must reach pytest-xdist's scheduler, whose
    # hook reads it after tests/server_groups.py's has set it
    assert [m.args[0] for m in request.node.iter_markers("xdist_group")] == ["schema_registry"]
    if hasattr(request.config, "workerinput"):  # under pytest-xdist
        assert request.node.nodeid.endswith("@schema_registry"), request.node.nodeid
