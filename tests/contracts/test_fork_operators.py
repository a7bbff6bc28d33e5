"""ForkOperatorContract over the fork operators: the identity fork with one and three branches, and the fork example's
SensitiveDataAwareForkOperator (every record to exactly one of two branches)."""

from __future__ import annotations

from gobblin_py.testing import ForkOperatorContract


class TestIdentityForkOneBranch(ForkOperatorContract):
    fork_operator_class = "org.apache.gobblin.fork.IdentityForkOperator"
    engines = ("local",)


class TestIdentityForkThreeBranches(ForkOperatorContract):
    fork_operator_class = "IdentityForkOperator"
    engines = ("local", "spark")

    def fork_props(self):
        return {"fork.branches": "3", "fork.branch.name.2": "third"}


class TestSensitiveDataAwareForkOperator(ForkOperatorContract):
    fork_operator_class = "gobblin_py.examples.sensitive.SensitiveDataAwareForkOperator"
    engines = ("local",)

    def fork_props(self):
        return {"fork.sensitive.fields": "name"}
