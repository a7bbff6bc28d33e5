"""The Hive registration of one table as a step of a dataset's commit, after the file moves and before the
dataset's state: logged with them, so that a run killed between publishing and registering has its commit
finished, registration included, by the next run (Gobblin registers after publishing, and a crash in between
leaves the data unregistered for good)."""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

from gobblin_py.connectors.hive.client import Metastore, connect
from gobblin_py.connectors.hive.registration import TableSpec, register, registered
from gobblin_py.connectors.hive.settings import HiveRegistrationSettings, MetastoreSettings
from gobblin_py.sdk.commit import CommitStep, step_class_path
from gobblin_py.sdk.retry_budget import RetryBudget, run_budget
from gobblin_py.sdk.settings import SettingsError


@dataclass(frozen=True)
class MetastoreAddress:
    """Where the metastore is and how long to wait for it."""

    uris: tuple[str, ...]
    timeout_s: float = 60.0
    tries: int = 3
    delay_s: float = 1.0
    budget: RetryBudget | None = field(default=None, compare=False)  # the run's, for the waits between tries

    @classmethod
    def of(cls, settings: HiveRegistrationSettings | MetastoreSettings, budget: RetryBudget) -> MetastoreAddress:
        return cls(settings.metastore_uris, settings.timeout_s, settings.connect_tries, settings.retry_delay_s,
                   budget)

    def connect(self) -> AbstractContextManager[Metastore]:
        """A connection to the metastore (see :func:`gobblin_py.connectors.hive.client.connect`)."""
        return connect(self.uris, self.timeout_s, self.tries, self.delay_s, self.budget)


@dataclass
class HiveRegisterStep(CommitStep):
    """Register one table and the partitions a run published (idempotent: "if not exists" throughout)."""

    spec: TableSpec
    address: MetastoreAddress
    kind: str = "hive_register"
    done: bool = field(default=False, init=False, compare=False)

    def is_completed(self) -> bool:
        with self.address.connect() as hms:
            self.done = registered(hms, self.spec)
        return self.done

    def execute(self, fresh: bool = False) -> None:
        with self.address.connect() as hms:
            register(hms, self.spec)
        self.done = True

    def committed(self) -> str | None:
        if not self.done:
            return None
        partitions = f" ({len(self.spec.partitions)} partition(s))" if self.spec.partitions else ""
        return f"hive table {self.spec.name} registered{partitions}"

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "class": step_class_path(self), "metastore": list(self.address.uris),
                "spec": self.spec.to_json()}

    @classmethod
    def from_json(cls, data: dict[str, Any], props: Mapping[str, str]) -> HiveRegisterStep:
        """The logged step; the metastore as the job now names it (it may have moved since), else as logged."""
        try:
            address = MetastoreAddress.of(MetastoreSettings.load(props), run_budget(props))
        except SettingsError:
            address = MetastoreAddress(tuple(map(str, data["metastore"])))
        return cls(TableSpec.from_json(data["spec"]), address)

    def describe(self) -> str:
        partitions = f" and {len(self.spec.partitions)} partition(s)" if self.spec.partitions else ""
        return f"register table {self.spec.name}{partitions} in the Hive metastore {', '.join(self.address.uris)}"
