"""The tests of tests/tables run in one pytest-xdist worker (tests/conftest.py's SERVER_GROUPS), so that the
session's Hive metastore, and the Hive tests' Spark reader, start once and not once per worker."""


def test_the_folder_runs_in_its_worker_group(request):
    assert [m.args[0] for m in request.node.iter_markers("xdist_group")] == ["tables-and-metastore"]
    if hasattr(request.config, "workerinput"):  # under pytest-xdist: the group reached its scheduler
        assert request.node.nodeid.endswith("@tables-and-metastore"), request.node.nodeid
