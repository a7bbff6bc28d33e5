"""Running one task: extractor → converter chain → fork → row policies → each branch's writer, the task's
quality policies and its branch commit; task progress, and the worker processes of ``gpy.taskexecutor.processes``."""
