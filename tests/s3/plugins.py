"""Plugins of the S3 tests."""

from __future__ import annotations

import os
import time

from gobblin_py.sdk.contracts import Converter


class GateConverter(Converter):
    """Holds the task at its first batch until the file ``test.gate.file`` exists (at most two minutes), so a
    test decides when a run that holds its lock may go on."""

    def convert_schema(self, schema, state):
        self.gate = state.get_prop("test.gate.file")
        return schema

    def convert_batch(self, batch, state):
        deadline = time.monotonic() + 120
        while not os.path.exists(self.gate):
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.gate} never appeared")
            time.sleep(0.02)
        return batch
