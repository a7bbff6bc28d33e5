"""Gobblin classes gpy does not port: the nearest gpy built-in, if any, and what to do instead.

Only consulted to explain why a job file naming one of them does not validate (``gpy validate`` lists each
such class with its nearest built-in and a one-line hint). Registered with the plugin resolver
(:func:`gobblin_py.sdk.plugins.register_unported_hints`) on import: :mod:`gobblin_py.jobconf` imports it, so every
process that loads a job file explains a Gobblin class it names and gpy lacks.
"""

from __future__ import annotations

from dataclasses import dataclass

from gobblin_py.sdk.plugins import register_unported_hints

G = "org.apache.gobblin."


@dataclass(frozen=True)
class Unported:
    """What gpy says about a Gobblin class it lacks."""

    nearest: str | None
    hint: str


_VENDOR = "a vendor connector ({}): write a Source plugin (gobblin_py/sdk/contracts.py) for its API"
# Gobblin class name, or a package prefix ending in ".", -> (nearest gpy built-in or None, one-line hint)
HINTS: dict[str, tuple[str | None, str]] = {
    # Hive: gpy has the Avro-to-ORC conversion (HiveSource, HiveAvroToOrcConverter, HiveQueryWriterBuilder,
    # HiveConvertPublisher) and the copy's HiveDatasetFinder
    G + "data.management.conversion.hive.": (None, "of Gobblin's Hive conversion classes gpy has HiveSource, "
                                             "HiveAvroToOrcConverter (flattened ORC), HiveQueryWriterBuilder and "
                                             "HiveConvertPublisher"),
    G + "data.management.copy.hive.": (None, "of Gobblin's Hive copy classes gpy has HiveDatasetFinder"),
    # copying: gpy ports the file copy (CopySource, UnGzipConverter, the copy writers, CopyDataPublisher)
    G + "data.management.copy.": (None, "of Gobblin's copy classes gpy has CopySource with "
                                  "CopyableGlobDatasetFinder or HiveDatasetFinder, UnGzipConverter, FileAwareInputStreamDataWriterBuilder, "
                                  "TarArchiveInputStreamDataWriterBuilder and CopyDataPublisher"),
    G + "data.management.retention.profile.": ("GlobCleanableDatasetFinder", "published versions are found by a "
                                               "glob of dataset folders (gobblin.retention.dataset.pattern)"),
    G + "data.management.retention.dataset.finder.": ("TimeBasedDatasetStoreDatasetFinder", "the state store is "
                                                      "cleaned by its run files' age"),
    G + "data.management.retention.": (None, "of Gobblin's retention classes gpy has "
                                       "DatasetCleanerJob with TimeBasedDatasetStoreDatasetFinder (state) or "
                                       "GlobCleanableDatasetFinder with DateTimeDatasetVersionFinder (published "
                                       "versions)"),
    G + "data.management.policy.": ("SelectBeforeTimeBasedPolicy", "of Gobblin's selection policies gpy has the "
                                    "time-based (before, between), newest-K, combine, all and nothing ones"),
    G + "data.management.version.": ("DateTimeDatasetVersionFinder", "gpy finds published versions by the date "
                                     "in their folder names"),
    # Kafka producers and serializers of Gobblin's own
    G + "kafka.FlakyKafkaProducer": ("KafkaDataWriterBuilder", "a Gobblin test producer that fails sends on purpose "
                                     "(flaky.errorType)"),
    G + "kafka.serialize.": ("KafkaDataWriterBuilder", "gpy's Kafka writer sends text, bytes or JSON records"),
    G + "kafka.schemareg.": ("KafkaDataWriterBuilder", "a schema registry of Gobblin's Kafka serializers"),
    # vendor connectors and examples
    G + "ingestion.google.webmaster.GoogleWebmasterDayPartitioner": ("TimeBasedWriterPartitioner", "partition by "
                                                                     "the date column with writer.partition.*"),
    G + "ingestion.google.": (None, _VENDOR.format("Google APIs")),
    G + "source.extractor.extract.google.": (None, _VENDOR.format("Google APIs")),
    G + "zuora.": (None, _VENDOR.format("Zuora")),
    G + "salesforce.": (None, _VENDOR.format("Salesforce")),
    # cluster services
    G + "runtime.locks.ZookeeperBasedJobLock": (None, "gpy's job lock is a file next to the state store "
                                                "(job.lock.dir)"),
    # everyday classes with a near equivalent
    G + "source.extractor.filebased.TextFileBasedSource": ("FileBasedSource", "the file source reads CSV, JSON "
                                                           "lines, Parquet and Avro files into typed columns"),
    G + "source.extractor.filebased.CsvFileDownloader": ("FileBasedSource", "CSV is read by the file source "
                                                         "(source.filebased.csv.delimiter, .header)"),
    G + "source.extractor.extract.jdbc.SqlServerSource": ("QueryBasedSource", "the SQL source speaks SQLite, "
                                                          "PostgreSQL and MySQL"),
    G + "source.extractor.extract.jdbc.OracleSource": ("QueryBasedSource", "the SQL source speaks SQLite, "
                                                       "PostgreSQL and MySQL"),
    G + "source.extractor.extract.jdbc.TeradataSource": ("QueryBasedSource", "the SQL source speaks SQLite, "
                                                         "PostgreSQL and MySQL"),
    G + "source.DatePartitionedJsonFileSource": ("DatePartitionedAvroFileSource", "date-partitioned folders of "
                                                 "Avro files are supported; JSON ones are not yet"),
    G + "source.RegexPartitionedAvroFileSource": ("AvroFileSource", "reads every Avro file under a folder"),
    G + "converter.json.JsonStringToJsonIntermediateConverter": ("JsonIntermediateToAvroConverter", "it reads "
                                                                 "JSON text records directly"),
    G + "converter.avro.AvroToJsonConverter": ("AnyToStringConverter", "prints each record as Avro's JSON text"),
    G + "converter.string.StringToBytesConverter": ("IdentityConverter", "gpy writers take text columns as they are"),
    G + "converter.filter.AvroFilterConverter": ("RequiredFieldsPolicy", "filter rows with a row-level quality "
                                                 "policy (OPTIONAL drops them)"),
    G + "converter.avro.AvroFieldRetrieverConverter": ("FieldProjectionConverter", "keep fields with "
                                                       "converter.projection.fields"),
}


def explain(gobblin_class: str) -> Unported | None:
    """What gpy says about a Gobblin class (``org.apache.gobblin.…``) it lacks, or None when it says nothing."""
    entry = HINTS.get(gobblin_class)
    if entry is None:
        prefixes = [p for p in HINTS if p.endswith(".") and gobblin_class.startswith(p)]
        entry = HINTS[max(prefixes, key=len)] if prefixes else None
    return Unported(*entry) if entry else None


def hint_for(gobblin_class: str) -> str | None:
    """The one-line hint for a Gobblin class name (``org.apache.gobblin.…``), or None."""
    found = explain(gobblin_class)
    return found.hint if found else None


register_unported_hints(hint_for)
