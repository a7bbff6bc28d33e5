"""Committing a run's datasets: each dataset's publisher steps and new state logged as one commit sequence and
run (exactly once), an earlier run's unfinished commits finished first, the run's history and summary, and the
crash points the crash tests kill runs at."""
