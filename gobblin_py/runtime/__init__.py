"""The job runtime: the launcher (``launcher.py``) and dry runs, over four layers — ``plan`` (checks before any
work), ``commit`` (publishing and state, exactly once), ``engines`` (where tasks run) and ``execute`` (one task).
It finds sources, converters, writers and publishers as plugins, by name."""
