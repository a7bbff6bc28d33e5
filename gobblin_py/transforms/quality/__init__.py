"""Quality checkers: row-level policies filter or fail rows, task-level policies judge a branch's output."""
