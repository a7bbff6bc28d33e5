"""Helpers the test modules share: job builders, CLI runners, paths, ports, the environment rule.

A test module imports its helpers from here (or takes them as conftest fixtures), never from another test module
(tests/test_suite_shape.py checks it)."""
