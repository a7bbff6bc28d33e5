"""Gobblin classes gpy does not port, with the nearest gpy built-in and what to do instead.

Only consulted to explain why a job file naming one of them does not validate.
"""

from __future__ import annotations

# Gobblin class name (or a package prefix ending in ".") -> a one-line hint
HINTS: dict[str, str] = {
    "org.apache.gobblin.data.management.convertion.hive.": "Hive-bound: gpy has no Hive metastore; "
    "write Parquet/ORC with the file writers and register the table in your catalog",
    "org.apache.gobblin.data.management.copy.hive.": "Hive-bound: gpy has no Hive metastore",
    "org.apache.gobblin.data.management.copy.": "distcp-style copying is not a gpy job; use your object store's "
    "copy tooling",
    "org.apache.gobblin.data.management.retention.": "retention jobs are not ported; gpy's state store has "
    "state.store.retention",
    "org.apache.gobblin.example.wikipedia.": "a vendor example (Wikipedia API); write a Source plugin",
    "org.apache.gobblin.ingestion.google.": "a vendor connector (Google APIs); write a Source plugin",
    "org.apache.gobblin.source.extractor.extract.google.": "a vendor connector (Google APIs); write a Source plugin",
    "org.apache.gobblin.zuora.": "a vendor connector (Zuora); write a Source plugin",
    "org.apache.gobblin.salesforce.": "a vendor connector (Salesforce); write a Source plugin",
    "org.apache.gobblin.source.extractor.extract.kafka.KafkaSimpleStreamingSource": "streaming mode is not "
    "ported: gpy runs bounded batches; use KafkaSimpleSource and schedule the job",
    "org.apache.gobblin.runtime.locks.ZookeeperBasedJobLock": "gpy's job lock is a file next to the state "
    "store (job.lock.dir)",
}


def hint_for(gobblin_class: str) -> str | None:
    """The hint for a Gobblin class name (``org.apache.gobblin.…``), or None."""
    if gobblin_class in HINTS:
        return HINTS[gobblin_class]
    prefixes = [p for p in HINTS if p.endswith(".") and gobblin_class.startswith(p)]
    return HINTS[max(prefixes, key=len)] if prefixes else None
