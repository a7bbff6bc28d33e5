"""Gobblin's Hive registration: published folders registered in a Hive metastore as external tables.

``data.publisher.type=org.apache.gobblin.publisher.BaseDataPublisherWithHiveRegistration`` (or
``HiveRegistrationPublisher``) with Gobblin's ``hive.*`` keys. Modules: ``settings`` (every key), ``policy``
(database and table names, Gobblin's ``HiveRegistrationPolicyBase``), ``schema`` (formats, SerDes, Hive types),
``layout`` (a final folder's table: location, partitions, columns), ``client`` (the metastore over thrift),
``registration`` (one table's idempotent registration), ``step`` (it as a commit step) and ``publisher``.
Needs the ``hive`` extra (``pymetastore``: the thrift client generated from Hive's IDL).
"""

from gobblin_py.connectors.hive.publisher import BaseDataPublisherWithHiveRegistration, HiveRegistrationPublisher

__all__ = ["BaseDataPublisherWithHiveRegistration", "HiveRegistrationPublisher"]
