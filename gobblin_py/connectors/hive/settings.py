"""The keys of Gobblin's Hive registration (``HiveRegProps``, ``HiveRegistrationPolicyBase``, ``HiveRegister``),
declared once, with the publisher's own keys read beside them."""

from __future__ import annotations

import re
from dataclasses import dataclass

from gobblin_py.connectors.files.publisher import FilePublisherSettings, PublisherSettings
from gobblin_py.sdk.config_errors import ConfigError
from gobblin_py.sdk.settings import Settings, same_as, setting

POLICY = "org.apache.gobblin.hive.policy.HiveRegistrationPolicyBase"
POLICIES = (POLICY, "gobblin.hive.policy.HiveRegistrationPolicyBase", "HiveRegistrationPolicyBase")
ROW_FORMATS = ("AVRO", "ORC", "PARQUET")
URI = re.compile(r"^thrift://[^/:\s]+:\d+/?$")


@dataclass(frozen=True)
class HiveRegistrationSettings(Settings):
    """The keys of Gobblin's Hive registration: the metastore, the names a folder is registered as, the properties.

    Where the metastore is, which database and table a published folder is registered as, and the properties
    the table gets."""

    metastore_uris: tuple[str, ...] = setting(
        "hive.metastore.uri", required=True, example="thrift://metastore.example.com:9083",
        doc="the Hive metastore's thrift URI (Gobblin's key); a comma list is tried in order")
    policy: str = setting("hive.registration.policy", default=POLICY, choices=POLICIES,
                          doc="how a published folder becomes a table: Gobblin's HiveRegistrationPolicyBase (the "
                              "names below; one partition per partition folder)")
    database: str | None = setting("hive.database.name", doc="database of the table (or hive.database.regex)")
    database_regex: re.Pattern | None = setting(
        "hive.database.regex", example=r".*/([^/]+)/[^/]+$",
        doc="database name: group 1 of this pattern matched against the whole published folder")
    database_prefix: str = setting("hive.database.name.prefix", default="", doc="put before the database name")
    database_suffix: str = setting("hive.database.name.suffix", default="", doc="put after the database name")
    additional_databases: tuple[str, ...] = setting("additional.hive.database.names", default=(),
                                                    doc="more databases the table is registered in too")
    table: str | None = setting("hive.table.name", doc="table name (or hive.table.regex)")
    table_regex: re.Pattern | None = setting(
        "hive.table.regex", example=r".*/([^/]+)$",
        doc="table name: group 1 of this pattern matched against the whole published folder")
    table_prefix: str = setting("hive.table.name.prefix", default="", doc="put before the table name")
    table_suffix: str = setting("hive.table.name.suffix", default="", doc="put after the table name")
    additional_tables: tuple[str, ...] = setting(
        "additional.hive.table.names", default=(),
        doc="more tables the folder is registered as ($PRIMARY_TABLE stands for the table name)")
    sanitize: bool = setting("hive.sanitize.invalid.names", default=True,
                             doc="lower-case names and replace characters other than a-z, 0-9 and _ with _ "
                                 "(Gobblin's rule); false: such a name is refused")
    table_props: tuple[str, ...] = setting("hive.table.partition.props", default=(), example="owner:etl,team:data",
                                           doc="table and partition properties, name:value pairs")
    storage_props: tuple[str, ...] = setting(
        "hive.storage.props", default=(), example="compressed:true",
        doc="storage descriptor properties, name:value pairs (input.format, output.format, compressed, "
            "num.buckets, bucket.columns set those fields)")
    serde_props: tuple[str, ...] = setting("hive.serde.props", default=(),
                                           doc="SerDe properties, name:value pairs (serde.type sets the SerDe class)")
    db_root_dir: str | None = setting("hive.db.root.dir", default_doc="the metastore's warehouse",
                                      doc="a database the registration creates goes to <this>/<name>.db")
    row_format: str | None = setting("hive.row.format", choices=ROW_FORMATS, default_doc="the published files' format",
                                     doc="the files' format, for the table's SerDe (a format the files are not in "
                                         "fails the dataset)")
    fs_uri: str | None = setting("hive.registration.fs.uri", default_doc="file:// for a local folder",
                                 doc="filesystem a folder without a scheme is registered on")
    partition_key: str = setting("hive.partition.key.name", default="datepartition",
                                 doc="partition column of date folders (2015/02/01 → datepartition=2015-02-01); "
                                     "name=value folders name their own")
    timeout_s: int = setting("hive.metastore.client.socket.timeout", default=60, minimum=1, maximum=3600,
                             doc="seconds a metastore call may take")
    connect_tries: int = setting("hive.metastore.connect.retries", default=3, minimum=1, maximum=20,
                                 doc="tries to reach the metastore before the dataset fails (the waits between "
                                     "them within the run's gpy.retry.budget.seconds)")
    retry_delay_s: float = setting("hive.metastore.client.connect.retry.delay", default=1.0, minimum=0, maximum=60,
                                   doc="seconds between those tries")
    final_dir: str = same_as(PublisherSettings, "final_dir")
    append_extract: bool = same_as(PublisherSettings, "append_extract")
    replace_final_dir: bool = same_as(PublisherSettings, "replace_final_dir")
    publisher_fs_uri: str | None = same_as(PublisherSettings, "fs_uri")
    verify: str = same_as(PublisherSettings, "verify")
    shared: bool = same_as(FilePublisherSettings, "shared")

    def check(self) -> list[ConfigError]:
        problems = [ConfigError(f"{uri!r} is not a metastore URI", key="hive.metastore.uri",
                                hint="thrift://HOST:PORT, e.g. thrift://metastore.example.com:9083")
                    for uri in self.metastore_uris if not URI.match(uri)]
        for key, name, regex, more in (
                ("hive.database", self.database, self.database_regex, self.additional_databases),
                ("hive.table", self.table, self.table_regex, self.additional_tables)):
            if name is None and regex is None and not more:
                problems.append(ConfigError("is not set", key=f"{key}.name",
                                            hint=f"set {key}.name, or {key}.regex to take it from the folder"))
            elif name is None and regex is not None and regex.groups < 1:
                problems.append(ConfigError(f"{regex.pattern!r} has no group", key=f"{key}.regex",
                                            hint="group 1 is the name, e.g. .*/([^/]+)$"))
        for key, pairs in (("hive.table.partition.props", self.table_props),
                           ("hive.storage.props", self.storage_props), ("hive.serde.props", self.serde_props)):
            problems += [ConfigError(f"{pair!r} is not a name:value pair", key=key, hint="e.g. owner:etl")
                         for pair in pairs if len(pair_of(pair)) != 2]
        return problems


@dataclass(frozen=True)
class MetastoreSettings(Settings):
    """Where the metastore is and how long to wait for it: what a logged registration needs of the job."""

    metastore_uris: tuple[str, ...] = same_as(HiveRegistrationSettings, "metastore_uris")
    timeout_s: int = same_as(HiveRegistrationSettings, "timeout_s")
    connect_tries: int = same_as(HiveRegistrationSettings, "connect_tries")
    retry_delay_s: float = same_as(HiveRegistrationSettings, "retry_delay_s")


def pair_of(text: str) -> list[str]:
    """A ``name:value`` property split as Gobblin splits it (on ':', each part trimmed, empty parts dropped)."""
    return [part.strip() for part in text.split(":") if part.strip()]


def props_of(pairs: tuple[str, ...]) -> dict[str, str]:
    """The properties of a ``hive.*.props`` list (checked to be pairs by the settings)."""
    return dict((name, value) for name, value in (pair_of(p) for p in pairs))
