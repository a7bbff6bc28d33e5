"""OpenLineage run events with the openlineage-python client (the ``metrics`` extra).

A run sends ``START`` when it starts and one of ``COMPLETE`` (SUCCEEDED, NOTHING_NEW, PARTIAL), ``FAIL`` or
``ABORT`` (stopped by a signal) when it ends, under one run id. The end event names the inputs the run read
(folders, tables, topics with the partitions and offsets read) and the outputs it published, with their schema
and row counts (``inputStatistics`` / ``outputStatistics``). The job is ``<openlineage.namespace>/<job.name>``; a
parent run (``openlineage.parent.id`` or ``$OPENLINEAGE_PARENT_ID``: ``<namespace>/<job>/<run id>``, what the
Airflow DAG passes) becomes the ``parent`` run facet.

The client is configured the way it documents: ``openlineage.transport.*`` keys of the job (its ``transport``
section: ``type=http``, ``url``, ...), else ``OPENLINEAGE_CONFIG`` / ``openlineage.yml`` / ``OPENLINEAGE_URL``.
Without any of them no event is sent. Each event is given ``openlineage.timeout`` seconds; one not sent is a
warning. The ``console`` transport logs each event at INFO, below the WARNING gpy lets through from libraries: its
events are written as they are, one JSON line each, to stderr.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import sys
from collections.abc import Mapping
from typing import Any

import attr
from openlineage.client import OpenLineageClient
from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
from openlineage.client.facet_v2 import InputDatasetFacet
from openlineage.client.generated import error_message_run, job_type_job, parent_run, processing_engine_run
from openlineage.client.generated.dataset_version_dataset import DatasetVersionDatasetFacet
from openlineage.client.generated.input_statistics_input_dataset import InputStatisticsInputDatasetFacet
from openlineage.client.generated.output_statistics_output_dataset import OutputStatisticsOutputDatasetFacet
from openlineage.client.generated.schema_dataset import SchemaDatasetFacet, SchemaDatasetFacetFields
from openlineage.client.uuid import generate_new_uuid

from gobblin_py.runtime.monitor.lineage_names import DatasetName, input_name, output_names
from gobblin_py.runtime.monitor.report import RunInfo, RunReport, within
from gobblin_py.runtime.monitor.settings import LineageSettings, transport_config
from gobblin_py.sdk.logs import get_logger
from gobblin_py.sdk.redact import redact

log = get_logger(__name__)

PRODUCER = "urn:gobblin_py:gpy"  # no public home to point at: a URN names gpy as the producer
OFFSETS_FACET = "gpy_kafka_offsets"
_END_TYPES = {"FAILED": "FAIL", "STOPPED": "ABORT"}  # any other status: COMPLETE


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _schema_fields(schema: str | None) -> list[dict[str, str]]:
    try:
        fields = json.loads(schema) if schema else []
    except ValueError:
        return []
    return [{"name": str(f["name"]), "type": str(f["type"])} for f in fields if isinstance(f, dict) and "name" in f]


class LineageReporter:
    """Sends a run's OpenLineage events (a :class:`~.report.RunListener`)."""

    name = "openlineage"

    def __init__(self, settings: LineageSettings, props: Mapping[str, str]) -> None:
        self.settings = settings
        self.props = props
        config = {"transport": transport_config(settings.transport)} if settings.transport else None
        self.client = _client_leaving_environment_alone(config)
        _console_events_to_stderr()
        self.run_id = str(generate_new_uuid())

    def run_started(self, run: RunInfo) -> None:
        self._emit(self._event("START", run, [], []))

    def run_finished(self, report: RunReport) -> None:
        inputs = self._inputs(report.results)
        outputs = [o for d in report.results for o in self._outputs(d)]
        event_type = _END_TYPES.get(report.status, "COMPLETE")
        error = None
        if event_type != "COMPLETE":  # the run's own error, else its datasets' (a dataset that failed its commit)
            error = report.error or "; ".join(f"dataset {d.urn!r}: {d.error}" if d.urn else d.error
                                              for d in report.results if d.error) or report.status
        self._emit(self._event(event_type, report.run, inputs, outputs, error))

    def _inputs(self, results: list[Any]) -> list[Any]:
        """One input per dataset read (datasets of one folder or table are one input: their rows summed)."""
        read: dict[tuple[str, str], tuple[DatasetName, int]] = {}
        for result in results:
            name = input_name(self.props, result)
            key = (name.namespace, name.name)
            if key in read:
                known, rows = read[key]
                known.partitions.extend(name.partitions)
                read[key] = (known, rows + result.records_extracted)
            else:
                read[key] = (name, result.records_extracted)
        inputs = []
        for name, rows in read.values():
            facets: dict[str, Any] = {"inputStatistics": InputStatisticsInputDatasetFacet(rowCount=rows)}
            if name.partitions:
                facets[OFFSETS_FACET] = _offsets_facet(name)
            inputs.append(InputDataset(namespace=name.namespace, name=name.name, inputFacets=facets))
        return inputs

    def _outputs(self, result: Any) -> list[Any]:
        fields = [SchemaDatasetFacetFields(name=f["name"], type=f["type"]) for f in _schema_fields(result.schema)]
        outputs = []
        for name in output_names(self.props, result):
            stats = OutputStatisticsOutputDatasetFacet(rowCount=result.records_written, size=result.bytes_written,
                                                       fileCount=result.files)
            facets: dict[str, Any] = {"schema": SchemaDatasetFacet(fields=fields)} if fields else {}
            if name.version is not None:
                facets["version"] = DatasetVersionDatasetFacet(datasetVersion=name.version)
            outputs.append(OutputDataset(namespace=name.namespace, name=name.name, facets=facets,
                                         outputFacets={"outputStatistics": stats}))
        return outputs

    def _event(self, event_type: str, run: RunInfo, inputs: list[Any], outputs: list[Any],
               error: str | None = None) -> Any:
        run_facets: dict[str, Any] = {"processing_engine": processing_engine_run.ProcessingEngineRunFacet(
            version=_gpy_version(), name="gpy", openlineageAdapterVersion=_client_version())}
        parent = self.settings.parent_id()
        if parent:
            namespace, rest = parent.split("/", 1)
            job_name, parent_run_id = rest.rsplit("/", 1)
            run_facets["parent"] = parent_run.ParentRunFacet(
                run=parent_run.Run(runId=parent_run_id), job=parent_run.Job(namespace=namespace, name=job_name))
        if error:
            run_facets["errorMessage"] = error_message_run.ErrorMessageRunFacet(
                message=redact(error), programmingLanguage="python")
        job_facets: dict[str, Any] = {"jobType": job_type_job.JobTypeJobFacet(processingType="BATCH", integration="GPY",
                                                              jobType="JOB")}
        return RunEvent(eventType=RunState[event_type], eventTime=_now(), producer=PRODUCER,
                        run=Run(runId=self.run_id, facets=run_facets),
                        job=Job(namespace=self.settings.job_namespace(), name=run.job, facets=job_facets),
                        inputs=inputs, outputs=outputs)

    def _emit(self, event: Any) -> None:
        try:
            within(self.settings.timeout, "openlineage", lambda: self.client.emit(event))
        except Exception as exc:  # noqa: BLE001 - lineage never fails a run
            log.warning("lineage_not_sent", event_type=str(event.eventType.value), error=f"{type(exc).__name__}: {exc}")


@attr.define
class KafkaOffsetsInputDatasetFacet(InputDatasetFacet):
    """The partitions of a topic a run read, each with the offsets it read from and up to."""

    partitions: list[dict[str, Any]] = attr.field(factory=list)

    @staticmethod
    def _get_schema() -> str:
        return "urn:gobblin_py:facets:KafkaOffsetsInputDatasetFacet"


def _client_leaving_environment_alone(config: dict[str, Any] | None) -> OpenLineageClient:
    """The client, without the ``OPENLINEAGE__TRANSPORT__*`` variables it writes into the process's environment
    when it reads ``OPENLINEAGE_URL``: its transport is made by then, and left behind they would configure lineage
    for every later run of a long-lived process (and every child it starts) whatever those runs' jobs say."""
    before = dict(os.environ)
    try:
        return OpenLineageClient(config=config)
    finally:
        for key in set(os.environ) - set(before):
            del os.environ[key]
        for key, value in before.items():
            if os.environ.get(key) != value:
                os.environ[key] = value


CONSOLE_LOGGER = "openlineage.client.transport.console"  # the logger the client's console transport writes to


class _EventLines(logging.Handler):
    """Writes each record's message alone (an event's JSON) to ``sys.stderr`` as it is at the time."""

    def emit(self, record: logging.LogRecord) -> None:
        sys.stderr.write(record.getMessage() + "\n")
        sys.stderr.flush()


def _console_events_to_stderr() -> None:
    logger = logging.getLogger(CONSOLE_LOGGER)
    if not any(isinstance(h, _EventLines) for h in logger.handlers):
        logger.addHandler(_EventLines())
    logger.setLevel(logging.INFO)
    logger.propagate = False  # not a second time through the root logger's "INFO name: message" lines


def _offsets_facet(name: DatasetName) -> KafkaOffsetsInputDatasetFacet:
    return KafkaOffsetsInputDatasetFacet(partitions=name.partitions)


def _gpy_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("gobblin_py")
    except PackageNotFoundError:
        return "0"


def _client_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("openlineage-python")
    except PackageNotFoundError:
        return "0"
