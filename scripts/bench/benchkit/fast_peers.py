"""The single-machine peers a data engineer reaches for first: Polars, DuckDB and pyarrow's dataset writer.

Each is a ``python -c`` script run from its own environment (:mod:`benchkit.peers`), given the input and the
output path as arguments, on its fastest documented path and its defaults (every core, its own Parquet
settings, snappy as gpy writes):

- files (CSV or JSON lines, ``argv[3]`` the extension): Polars ``scan_csv``/``scan_ndjson`` →
  ``sink_parquet`` (streaming, one file); DuckDB ``COPY (SELECT * FROM read_csv/read_json(glob)) TO`` one
  Parquet file; pyarrow ``write_dataset`` from ``dataset(format="csv")``, or for JSON lines from the streaming
  JSON reader, file after file;
- a table's first load: DuckDB's ``sqlite_scanner``/``postgres_scanner`` extensions (``sqlite_scan`` /
  ``postgres_scan``) straight into ``COPY … TO``, the extensions loaded from the ``duckdb-ext-*`` packages
  (this machine reaches no extension repository); Polars ``read_database_uri`` with connectorx →
  ``write_parquet``.

None keeps state or commits: each writes its output in place, with nothing that makes a rerun or a crash safe.
"""

from __future__ import annotations

POLARS_FILES = """
import sys, pathlib, polars as pl
data, out, ext = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), sys.argv[3]
out.mkdir(parents=True)
pattern = str(data / f"*.{ext}")
frame = pl.scan_csv(pattern, try_parse_dates=True) if ext == "csv" else pl.scan_ndjson(pattern)
frame.sink_parquet(out / "orders.parquet", compression="snappy")
"""

DUCKDB_FILES = """
import sys, pathlib, duckdb
data, out, ext = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), sys.argv[3]
out.mkdir(parents=True)
read = "read_csv" if ext == "csv" else "read_json"
duckdb.connect().execute(f"COPY (SELECT * FROM {read}('{data}/*.{ext}')) TO '{out}/orders.parquet' "
                         "(FORMAT parquet, COMPRESSION snappy)")
"""

# JSON lines through pyarrow's streaming JSON reader, file after file, into write_dataset: pyarrow 26's threaded
# JSON dataset scan (ds.dataset(format="json")) stops making progress on these files and never returns
WRITE_DATASET = """
import sys, pathlib, pyarrow as pa, pyarrow.dataset as ds, pyarrow.json as json
data, out, ext = pathlib.Path(sys.argv[1]), sys.argv[2], sys.argv[3]
parquet = ds.ParquetFileFormat()
options = parquet.make_write_options(compression="snappy")
if ext == "csv":
    source = ds.dataset(data, format="csv")
else:
    files = sorted(data.glob("*.jsonl"))
    first = json.open_json(files[0], read_options=json.ReadOptions(block_size=16 << 20))
    def batches():
        yield from first
        for f in files[1:]:
            yield from json.open_json(f, read_options=json.ReadOptions(block_size=16 << 20),
                                      parse_options=json.ParseOptions(explicit_schema=first.schema))
    source = pa.RecordBatchReader.from_batches(first.schema, batches())
ds.write_dataset(source, out, format=parquet, file_options=options)
"""

DUCKDB_SQL = """
import sys, pathlib, sysconfig, duckdb
kind, target, out = sys.argv[1], sys.argv[2], sys.argv[3]
extensions = pathlib.Path(sysconfig.get_paths()["purelib"]) / "duckdb_ext" / "extensions"
con = duckdb.connect(config={"extension_directory": str(extensions), "autoinstall_known_extensions": "false"})
if kind == "sqlite":
    con.execute("LOAD sqlite")
    source = f"sqlite_scan('{target}', 'orders')"
else:
    con.execute("LOAD postgres")
    source = f"postgres_scan('{target}', 'public', 'orders')"
con.execute(f"COPY (SELECT * FROM {source}) TO '{out}' (FORMAT parquet, COMPRESSION snappy)")
"""

POLARS_SQL = """
import sys, polars as pl
url, out = sys.argv[1], sys.argv[2]
pl.read_database_uri("SELECT * FROM orders", url, engine="connectorx").write_parquet(out, compression="snappy")
"""
