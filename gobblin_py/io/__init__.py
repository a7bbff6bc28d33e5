"""Files and processes: fsspec filesystems and the local disk, durable writes, conditional creates, contained
paths, group-shared folders, native reads, prefetching and child processes. Built on :mod:`gobblin_py.sdk` only.
"""
