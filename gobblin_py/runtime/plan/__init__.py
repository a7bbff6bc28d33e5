"""Before any work: every key and plugin of a job checked, stored startpoints checked against the source, the
run's folders, and the job's lock."""
