"""The credentials of the suite's local S3 server (moto)."""

from __future__ import annotations

ACCESS_KEY = "gpy-test-access"
SECRET_KEY = "gpy-test-secret-c0ffee"  # tests check it is never printed nor stored
