"""What every table publisher shares (gobblin_py.connectors.tables), seen through one format."""

from __future__ import annotations


def test_a_table_publisher_refuses_another_output_format_in_plain_words():
    from gobblin_py.connectors.iceberg.publisher import IcebergPublisher

    props = {"writer.output.format": "ORC", "data.publisher.final.dir": "/lake", "state.store.dir": "/state"}
    problems = " ".join(str(p) for p in IcebergPublisher.validate(props))
    assert "ORC: Iceberg tables take Parquet files" in problems and "a Iceberg" not in problems
