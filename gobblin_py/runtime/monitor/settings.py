"""The keys of a run's reporters: Gobblin's metric keys, Prometheus, OpenLineage, and the reporters gpy lacks.

Gobblin's ``metrics.*`` keys keep their names and defaults (``metrics.report.interval`` in milliseconds). Gobblin
reporters gpy has no equivalent for (Hadoop counters, JMX, custom builders) are named by ``gpy validate`` and at
the start of a run (:func:`unsupported_reporter_keys`), never ignored silently. The Kafka, Graphite and InfluxDB
reporters' keys are in :mod:`~gobblin_py.runtime.monitor.gobblin_reporter_settings`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from gobblin_py.sdk.config_errors import ConfigError
from gobblin_py.sdk.settings import Kind, Settings, setting

PROMETHEUS_PREFIX = "metrics.reporting.prometheus."
LINEAGE_TRANSPORT_PREFIX = "openlineage.transport."
PARENT_ENV = "OPENLINEAGE_PARENT_ID"  # "<namespace>/<job name>/<run id>", as dbt-ol and Airflow's macros spell it
# Gobblin's reporters gpy does not have: key prefix → what it is
UNSUPPORTED_REPORTERS: dict[str, str] = {
    "metrics.reporting.hadoop.counters.": "Gobblin's Hadoop counters reporter",
    "metrics.reporting.jmx.": "Gobblin's JMX reporter",
    "metrics.reporting.custom.builders": "Gobblin's custom reporter builders",
    "metrics.reporting.events.": "Gobblin's event reporters",
    "metrics.kafka.": "Gobblin's Kafka metrics reporter",
}
REPORTER_KEYS = frozenset({"metrics.reporting.events.kafka.format"})  # under a prefix above, yet read by gpy
_ENABLED_SUFFIX = ("enabled", "enable")


@dataclass(frozen=True)
class MetricsSettings(Settings):
    """Gobblin's metric reporting keys: the file reporter (one file per job run) and the master switch."""

    enabled: bool = setting("metrics.enabled", default=True,
                            doc="report the run's metrics at all (the metrics file and Prometheus)")
    file_enabled: bool = setting("metrics.reporting.file.enabled", default=False,
                                 doc="write the run's metrics and events to a file under metrics.log.dir, one file "
                                     "per run: DIR/gobblin.metrics.JOB_ID/gobblin.metrics.JOB_ID[.SUFFIX]"
                                     ".metrics.log (see Monitoring)")
    log_dir: str | None = setting("metrics.log.dir", doc="the folder of the metrics files (a path or URL)")
    file_suffix: str = setting("metrics.reporting.file.suffix", default="",
                               doc="inserted before .metrics.log in the metrics file's name, as in Gobblin")
    interval_ms: int = setting("metrics.report.interval", default=30000, minimum=100,
                               doc="milliseconds between two progress reports of a running job (the metrics file, Kafka, "
                                   "Graphite, InfluxDB)")

    def check(self) -> list[ConfigError]:
        if self.enabled and self.file_enabled and not self.log_dir:
            return [ConfigError("is not set", key="metrics.log.dir",
                                hint="name the folder of the metrics files, or set metrics.reporting.file.enabled="
                                     "false")]
        return []

    @property
    def file_reporting(self) -> bool:
        return self.enabled and self.file_enabled and bool(self.log_dir)


@dataclass(frozen=True)
class PrometheusSettings(Settings):
    """Prometheus for batch jobs: a Pushgateway push at the end of every run, a node-exporter textfile."""

    pushgateway: str | None = setting(PROMETHEUS_PREFIX + "pushgateway.url", example="http://pushgateway:9091",
                                      doc="push the run's metrics to this Pushgateway when the run ends (succeeded, "
                                          "failed or stopped), grouped by job=JOB_NAME")
    textfile_dir: str | None = setting(PROMETHEUS_PREFIX + "textfile.dir",
                                       example="/var/lib/prometheus/node-exporter",
                                       doc="write the run's metrics to DIR/gpy_JOB_NAME.prom (atomically) for "
                                           "node-exporter's textfile collector")
    timeout: float = setting(PROMETHEUS_PREFIX + "timeout", default=5.0, minimum=0.1, maximum=300,
                             doc="seconds a push may take before it is given up with a warning")

    @property
    def enabled(self) -> bool:
        return bool(self.pushgateway or self.textfile_dir)


@dataclass(frozen=True)
class LineageSettings(Settings):
    """OpenLineage run events, sent with the openlineage-python client."""

    enabled: bool = setting("openlineage.enabled", default=True,
                            doc="send OpenLineage events when the client is configured (openlineage.transport.*, "
                                "OPENLINEAGE_URL, OPENLINEAGE_CONFIG or an openlineage.yml); false turns them off")
    namespace: str | None = setting("openlineage.namespace", default_doc="$OPENLINEAGE_NAMESPACE, else default",
                                    doc="the OpenLineage namespace of the job")
    transport: dict[str, str] | None = setting(LINEAGE_TRANSPORT_PREFIX + "*", kind=Kind.PREFIX,
                                    example="openlineage.transport.type=http",
                                    doc="the client's transport configuration, as in openlineage.yml's transport "
                                        "(type=http|file|console, url, endpoint, log_file_path, ...); type=file "
                                        "appends one JSON line per event to log_file_path (append=false: a file "
                                        "per event), type=console writes one JSON line per event to stderr")
    parent: str | None = setting("openlineage.parent.id", default_doc=f"${PARENT_ENV}",
                                 doc="the parent run, NAMESPACE/JOB_NAME/RUN_ID (the Airflow task that ran gpy)")
    timeout: float = setting("openlineage.timeout", default=5.0, minimum=0.1, maximum=300,
                             doc="seconds sending one event may take before it is given up with a warning")

    def job_namespace(self) -> str:
        return self.namespace or os.environ.get("OPENLINEAGE_NAMESPACE") or "default"

    def parent_id(self) -> str | None:
        return self.parent or os.environ.get(PARENT_ENV) or None

    def check(self) -> list[ConfigError]:
        errors = []
        parent = self.parent
        if parent and (parent.count("/") < 2 or not all(parent.split("/"))):
            errors.append(ConfigError(f"{parent!r} is not <namespace>/<job name>/<run id>", key="openlineage.parent.id"))
        kind = (self.transport or {}).get("type", "")
        needed = _NEEDED.get(kind)
        if needed and not (self.transport or {}).get(needed):
            errors.append(ConfigError(f"is not set (openlineage.transport.type={kind} needs it)",
                                      key=LINEAGE_TRANSPORT_PREFIX + needed))
        return errors


def transport_config(keys: Mapping[str, str]) -> dict[str, object]:
    """The ``openlineage.transport.*`` keys (without the prefix) as the client's ``transport`` dictionary:
    ``a.b=c`` nests, ``true``/``false`` are booleans (as in openlineage.yml), and a ``file`` transport appends
    each event as a line of ``log_file_path`` unless ``append=false`` (the client's own default: a new
    ``<log_file_path>-<time>.json`` file per event)."""
    config: dict[str, object] = {}
    for key, value in keys.items():
        parts = key.split(".")
        node = config
        for part in parts[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                break
            node = child
        else:
            node[parts[-1]] = _BOOLEANS.get(value.strip().lower(), value)
    if config.get("type") == "file":
        config.setdefault("append", True)
    return config


_BOOLEANS = {"true": True, "false": False}
_NEEDED = {"http": "url", "file": "log_file_path"}  # transport type → the key it cannot do without


def is_reporter_key(key: str) -> bool:
    """Whether ``key`` belongs to a Gobblin metrics reporter gpy does not have (a key Gobblin knows)."""
    return key not in REPORTER_KEYS and any(key == prefix.rstrip(".") or key.startswith(prefix)
                                            for prefix in UNSUPPORTED_REPORTERS)


def unsupported_reporter_keys(props: Mapping[str, str]) -> list[tuple[str, str]]:
    """``(key, what it is)`` for each key of a Gobblin metrics reporter gpy does not have.

    A reporter switched off (``...enabled=false``) is no loss and not named.
    """
    found = []
    for key in sorted(set(props) - REPORTER_KEYS):
        for prefix, what in UNSUPPORTED_REPORTERS.items():
            if key == prefix.rstrip(".") or key.startswith(prefix):
                if key.endswith(_ENABLED_SUFFIX) and str(props[key]).strip().lower() == "false":
                    break
                found.append((key, what))
                break
    return found


def lineage_configured(settings: LineageSettings) -> bool:
    """Whether the job or the environment configures the OpenLineage client (and lineage is not turned off)."""
    if not settings.enabled or os.environ.get("OPENLINEAGE_DISABLED", "").strip().lower() == "true":
        return False
    if settings.transport or os.environ.get("OPENLINEAGE_URL") or os.environ.get("OPENLINEAGE_CONFIG"):
        return True
    if any(k.startswith("OPENLINEAGE__TRANSPORT") for k in os.environ):
        return True
    return any(os.path.isfile(p) for p in (os.path.join(os.getcwd(), "openlineage.yml"),
                                           os.path.expanduser("~/.openlineage/openlineage.yml")))
