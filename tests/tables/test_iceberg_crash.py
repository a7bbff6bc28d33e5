"""Proof by crashing, into an Iceberg table: a job publishing into a table of the embedded catalog, killed at every
boundary of its commit (before its log, logged, after each file's move, after the check of the
moved files, after the table's snapshot, after the state, done) and then at random instants, loses no row and adds
none twice: the replay finds its run's snapshot by its summary. Afterwards every data file in a table's folder is
in the table."""

from __future__ import annotations

from tests.crash.harness import CrashJob, boundary_campaign, killed_boundaries
from tests.crash.random_kills import random_campaign
from tests.tables.iceberg_reads import catalog, referenced_files


RANDOM_KILLS = 4


class IcebergCrashJob(CrashJob):
    """The crash harness's job, publishing into Iceberg tables ``crash.<dataset>``; rows are read from them."""

    def published_ids(self) -> list[int]:
        tables = catalog(self.root / "state", self.root / "published")
        ids: list[int] = []
        for urn in self.datasets:
            if tables.table_exists(("crash", urn)):
                ids += tables.load_table(("crash", urn)).scan().to_arrow().column("order_id").to_pylist()
        return sorted(ids)

    def leftovers(self) -> list[str]:
        # a table's data and metadata folders and the catalog are what it publishes; the rest as for any job
        return [p for p in super().leftovers() if not p.startswith("published/crash/") and
                p not in ("state/iceberg_catalog.db", "published/crash")]

    def unreferenced_files(self) -> list[str]:
        tables = catalog(self.root / "state", self.root / "published")
        found = []
        for urn in self.datasets:
            referenced = referenced_files(tables.load_table(("crash", urn)))
            found += [str(p) for p in (self.root / "published" / "crash" / urn / "data").rglob("*.parquet")
                      if str(p) not in referenced]
        return found


def test_kill_at_every_boundary_of_an_iceberg_commit(tmp_path):
    job = IcebergCrashJob(tmp_path, datasets=("eu",), job_keys="data.publisher.type=IcebergPublisher\n")
    covered = boundary_campaign(job, full_checks=False)
    # one file a run: before the log, logged, its move, the check of it, the snapshot, the state, done
    assert killed_boundaries(job) == {"eu": ["before_log", "logged", "fs_rename", "published_records",
                                             "iceberg_append", "dataset_state", "done"]}
    assert covered == 7
    assert job.unreferenced_files() == []
    landings = random_campaign(job, kills=RANDOM_KILLS, seed=37)  # then killed at random: in tasks, in commits
    assert landings.kills == RANDOM_KILLS and landings.commits >= 1, landings.describe()
    assert job.unreferenced_files() == []
    tables = catalog(tmp_path / "state", tmp_path / "published")
    for urn in job.datasets:  # one snapshot per committed run, never two for one run
        runs = [s.summary["gpy.run"] for s in tables.load_table(("crash", urn)).snapshots()]
        assert len(runs) == len(set(runs))
