"""The crash harness of tests/crash on a job publishing into Delta tables (one per dataset): its rows are read
through the tables (only the files a table references count), and what a run may leave is the tables' files."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from gobblin_py.connectors.delta.table import app_id, state_store_of
from gobblin_py.connectors.tables.publisher import RunIdentity
from tests.crash.harness import LOGS, CrashJob

KEPT_FILE = re.compile(r"data/[^/]+/f\d{5}\.csv|published/crash/[^/]+/part\.task_Crash_\d+_\d+_0\.parquet"
                       r"|published/crash/[^/]+/_delta_log/(\d{20}\.json|\d{20}\.checkpoint\.parquet|_last_checkpoint)"
                       r"|published/crash/[^/]+/part-\d{5}-[-0-9a-f]+-c\d{3}(\.\w+)?\.parquet"
                       r"|published/crash/[^/]+/_gpy_merge/[0-9a-f]{20}/\d+/part\.task_Crash_\d+_\d+_0\.parquet"
                       r"|state/Crash/[^/]+-(job_Crash_\d+|current)\.jst|state/Crash/_gpy_state_index\.json"
                       r"|state/_history/Crash/\d{15}-job_Crash_\d+\.json")
KEPT_FOLDER = re.compile(r"data(/[^/]+)?|published(/crash(/[^/]+(/_delta_log|/_gpy_merge(/[0-9a-f]{20}(/\d+)?)?)?)?)?"
                         r"|state(/Crash|/_commit_sequences(/Crash)?|/_history(/Crash)?)?|(staging|output)(/Crash)?")


@dataclass
class DeltaCrashJob(CrashJob):
    """:class:`CrashJob` with ``data.publisher.type=DeltaPublisher``: table ``published/crash/<dataset>``; with
    ``merge`` its rows are upserted on their ids."""

    merge: bool = False

    def __post_init__(self) -> None:
        merge = "table.merge.key=order_id\n" if self.merge else ""
        self.job_keys = f"data.publisher.type=DeltaPublisher\nwriter.output.format=PARQUET\n{merge}{self.job_keys}"
        super().__post_init__()

    def table(self, dataset: str):
        from deltalake import DeltaTable

        path = self.root / "published" / "crash" / dataset
        return DeltaTable(str(path)) if (path / "_delta_log").is_dir() else None

    def published_ids(self) -> list[int]:
        ids: list[int] = []
        for dataset in self.datasets:
            table = self.table(dataset)
            if table is not None:
                ids += table.to_pyarrow_table(columns=["order_id"]).column("order_id").to_pylist()
        return sorted(ids)

    def check_rows(self) -> None:
        super().check_rows()
        self.check_tables()

    def check_tables(self) -> None:
        """Each run's data in one commit (the replays found their transactions), every data file of a table in
        it (none left unreferenced), and of the files upserts read only the last run's still there."""
        operations = ("MERGE",) if self.merge else ("WRITE", "CREATE TABLE")
        for dataset in self.datasets:
            table = self.table(dataset)
            if table is None:
                continue
            runs = Counter(c["gpy.run"] for c in table.history() if c["operation"] in operations)
            assert all(n == 1 for n in runs.values()), f"{dataset}: a run committed twice: {runs}"
            app = app_id(RunIdentity("Crash", "", dataset, ""), 1, 0, state_store_of({"state.store.dir": self.state_url}))
            assert table.transaction_version(app) == len(runs)
            folder = self.root / "published" / "crash" / dataset
            waiting = {p.parent.name for p in (folder / "_gpy_merge").rglob("*.parquet")}
            assert waiting <= {str(len(runs))}, f"{dataset}: the files of earlier upserts are still there: {waiting}"
            on_disk = {str(p) for p in folder.rglob("*.parquet") if not {"_gpy_merge", "_delta_log"} & set(p.parts)}
            referenced = {uri.removeprefix("file://") for uri in table.file_uris()}
            assert on_disk == referenced, f"{dataset}: files outside the table: {sorted(on_disk - referenced)}"

    def leftovers(self) -> list[str]:
        base = self.base.rstrip("/")
        found = []
        for path, info in self.fs.find(base, withdirs=True, detail=True).items():
            relative = path[len(base):].lstrip("/")
            if not relative or relative == self.job_file.name or relative.split("/")[0] == LOGS:
                continue
            kept = KEPT_FOLDER if info["type"] == "directory" else KEPT_FILE
            if not kept.fullmatch(relative):
                found.append(relative)
        return sorted(found)
