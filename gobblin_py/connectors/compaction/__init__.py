"""Gobblin's compaction as a gpy job: ``source.class=org.apache.gobblin.compaction.source.CompactionSource``.

A run finds the datasets to compact (:mod:`.finder`: the folders ``gobblin.dataset.pattern`` matches, or
Gobblin's ``TimeBasedSubDirDatasetsFinder`` / ``SimpleDatasetsFinder`` over ``compaction.input.dir``), decides for
each what to do from its ``_COMPACTION_COMPLETE`` marker (:mod:`.plan`: compact, recompact, set late files aside,
or nothing), holds back a time folder the ingestion job is not complete past yet when the job asks
(:mod:`.completeness`), and plans one work unit per dataset. Its task reads the dataset's files (Avro, Parquet or
ORC) as Arrow batches and deduplicates them with bounded memory (:mod:`.dedup`), and the writer writes the result in the
input's format into a folder beside the destination (:mod:`.writer`). The publisher's commit steps
(:mod:`.steps`), logged in the commit log like every gpy publish, swap that folder in for the destination and
write the marker last, so a crash leaves the old output or the new one, never a mix.
"""
