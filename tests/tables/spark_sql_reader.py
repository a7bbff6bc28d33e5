"""An independent reader of the Hive tables gpy registers: a Spark SQL process of its own, with Spark's Hive
catalog pointed at the metastore (nothing of gpy is imported).

    python spark_sql_reader.py thrift://127.0.0.1:PORT WORK_FOLDER

Starts its SparkSession at once, then answers each line of standard input, a JSON object ``{"tables": [...]}``,
with one line, ``ANSWER`` and a JSON object: for each table, its rows (as JSON values, sorted), its partitions
(``SHOW PARTITIONS``, or null for a table without) and its columns. Started early, it starts Spark while the
tests publish; one process serves the whole session (tests/tables/metastore.py's ``spark_sql_reader``).
"""

from __future__ import annotations

import json
import sys

ANSWER = "gpy-spark-sql-reader: "


def main() -> None:
    uri, work = sys.argv[1], sys.argv[2]
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master("local[1]").appName("hive-reader")
             .config("spark.sql.catalogImplementation", "hive")
             .config("spark.hadoop.hive.metastore.uris", uri)
             .config("spark.sql.warehouse.dir", f"{work}/spark-warehouse")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.shuffle.partitions", "1")
             # the JIT's first tier only: half the time of a short Spark process here (measured: 35 s → 17 s)
             .config("spark.driver.extraJavaOptions",
                     f"-Dderby.system.home={work} -XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    spark.range(1).collect()  # the JVM's classes loaded before the tables are asked for
    for line in sys.stdin:
        if not line.strip():
            continue
        out = {}
        for table in json.loads(line)["tables"]:
            try:
                if spark.catalog.tableExists(table):  # what an earlier request read of it may have changed
                    spark.catalog.refreshTable(table)
                out[table] = read(spark, table)
            except Exception as exc:  # noqa: BLE001 - said in the answer, for the test to show
                out[table] = {"error": f"{type(exc).__name__}: {exc}"[:2000]}
        print(ANSWER + json.dumps(out), flush=True)
    spark.stop()


def read(spark, table: str) -> dict:
    """A table's rows, partitions and columns."""
    frame = spark.table(table)
    rows = sorted(json.dumps(row.asDict(recursive=True), sort_keys=True, default=str) for row in frame.collect())
    try:
        partitions = sorted(r[0] for r in spark.sql(f"SHOW PARTITIONS {table}").collect())
    except Exception as exc:  # noqa: BLE001 - Spark's AnalysisException for a table without partitions
        if "not partitioned" not in str(exc).lower() and "NOT_PARTITIONED" not in str(exc):
            raise
        partitions = None
    return {"rows": [json.loads(r) for r in rows], "partitions": partitions,
            "columns": [f.name for f in frame.schema.fields]}


if __name__ == "__main__":
    main()
