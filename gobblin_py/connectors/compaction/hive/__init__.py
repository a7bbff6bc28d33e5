"""Gobblin's Hive compactor as a gpy job, without Hive: a snapshot and its deltas merged by primary key.

A job file names ``source.class=org.apache.gobblin.compaction.hive.CompactionRunner`` (or ``HiveCompactionSource``)
and the keys of one Gobblin compaction job config: ``snapshot.*``, ``delta.<i>.*``, ``output.*``
(:mod:`.settings`). The run plans one work unit (:mod:`.source`); its task merges the tables with Arrow, memory
bounded by the compaction's spill (:mod:`.merge`), and writes the result in the input's format into a folder beside
the output (:mod:`.writer`); the compaction publisher's commit swaps it in through the commit log
(:class:`~gobblin_py.connectors.compaction.steps.SwapFolderStep`), so a crash leaves the old output or the new.

What Gobblin does (apache/gobblin, ``gobblin-compaction/src/main/java/org/apache/gobblin/compaction/hive/``):

- ``bin/gobblin-compaction.sh --type hive --conf <global .properties>`` starts ``CompactionRunner`` (script lines
  117-121). Its ``main`` reads ``compaction.config.dir`` from the global file and runs one compaction per regular
  file in that folder whose name does not start with ``.`` (each a properties file), writing each one's seconds to
  ``timing.file`` (default ``time.txt``) (CompactionRunner.java:44-93). gpy: one job file is one compaction
  (``compaction.config.dir`` is refused, naming the key, not yet read).
- Keys of a compaction (CompactionRunner.java:48-57, 103-139): ``snapshot.`` and ``delta.<i>.`` each with ``name``,
  ``pkey``, ``datalocation``, ``schemalocation`` (default ""), ``copydata`` (default false),
  ``dataformat.extension.name`` (default ""); deltas are read for i = 1, 2, … until the first without a
  ``datalocation``; then ``output.name`` and ``output.datalocation``. ``pkey`` is a comma list, trimmed, empty
  items dropped (HiveTable.java:64-68); a blank ``name`` means a random one (HiveTable.java:46-55). The template
  ``gobblin-compaction/jobconf/task1.conf`` spells the extension key ``dataformat``: gpy reads both.
- ``SerialCompactor`` (SerialCompactor.java): at least one delta (Builder ``withDeltas``); every delta's pkey list
  equal to the snapshot's, else it fails (``checkSchemaCompatibility``). It merges the deltas in order: merged =
  delta 1; for each next delta, merged's rows whose key that delta lacks (a LEFT OUTER JOIN on all key columns,
  WHERE the delta's key IS NULL) UNION ALL the delta (``mergeTwoDeltas``, ``getNotUpdatedRecords``); the output is
  the snapshot's rows whose key the merged deltas lack UNION ALL the merged deltas
  (``unionNotUpdatedRecordsAndDeltas``), all projected to the last delta's columns (``addNewColumnsInSchema``: a
  column an older table lacks is added, null), into an Avro table at ``output.datalocation`` with the last delta's schema. So a later delta's record
  beats an earlier one's, any delta's beats the snapshot's, and a key only in the snapshot is kept.
- A table's schema is its ``schemalocation``, else that of its first data file (AvroExternalTable.java:97-123);
  with ``copydata=true`` its files (only those with the extension, when named) are copied under ``hive.tmpdata.dir``
  first (AvroExternalTable.java; the user guide's Compaction page, "Hive Compactor"). The other keys
  (``hive.db.name``, ``hive.queue.name``, ``hive.use.mapjoin``, ``hive.mapjoin.smalltable.filesize``,
  ``hive.input.split.size``, ``mapreduce.job.num.reducers``, ``hive.tmpschema.dir``, ``hive.tmpdata.dir``, the
  ``hiveserver.*`` ones) tune Hive (SerialCompactor.java:44-53).
- The user guide adds: snapshot and deltas are Avro, their schemas may differ, the output has the last delta's
  schema; deleted records are not handled (a delta cannot say a key is gone).

Where gpy differs, on purpose: the input may be Avro, Parquet or ORC (one format; the output in it); a table's
schema is its newest file's (as gpy's compaction reads a dataset) unless ``schemalocation`` names one (Avro only);
of duplicate keys within one table the first read is kept (Gobblin's UNION ALL keeps them all), so each key is in
the output once, a null key value counting as one value (Gobblin's join never matches nulls); numbered deltas with
a gap, a missing table folder, and a key field the records lack are refused before any work (Gobblin stops at the
gap, or fails inside Hive); ``copydata`` copies nothing (gpy never writes its input) but still selects the files by
extension; no metastore table is made (``*.name`` only names the output's dataset); a rerun over the same files
changes nothing (the output's ``_HIVE_COMPACTION_COMPLETE`` says what it merged).
"""
