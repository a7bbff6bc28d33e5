"""Copying files as Gobblin's copy jobs do: ``CopySource`` → ``UnGzipConverter`` → copy writers →
``CopyDataPublisher``.

A copied file travels as one record of :data:`gobblin_py.connectors.copy.descriptor.SCHEMA` (where it is, where it goes,
its size and modification time, how its bytes are decoded), never as its bytes: the writers stream each file
from its source into the task's staging folder, and the publisher moves what they staged into place through
the runtime's commit sequence.
"""
