"""Gobblin's ``FlakyKafkaProducer``: a producer that fails sends on purpose, to test a job's failure handling.

A job names it in ``writer.kafka.producerClass``; which sends fail is Gobblin's ``ErrorManager`` rule, read from the
producer's configuration: ``flaky.errorType`` RANDOM (the default: each send fails with probability ½), NTH (every
``flaky.errorEvery``-th send), REGEX (every message whose text ``flaky.regexPattern`` finds) or ALL. A failed send
never reaches the broker and counts as an undelivered message against ``writer.kafka.failureAllowancePercentage``.
One difference: Gobblin's producer asks its rule twice per send, so its NTH fails every (N/2)-th send; gpy asks once.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gobblin_py.sdk.settings import Context, Scope, Settings, setting

P = "writer.kafka.producerConfig.flaky."
ERROR_TYPES = ("RANDOM", "NTH", "REGEX", "ALL", "random", "nth", "regex", "all")


@dataclass(frozen=True)
class FlakySettings(Settings):
    """The keys of :class:`FlakyKafkaProducer` (Gobblin's ``ErrorManager``), inside the producer's configuration."""

    error_type: str = setting(P + "errorType", default="RANDOM", choices=ERROR_TYPES, scope=Scope.BRANCH,
                              doc="which sends fail: RANDOM (half of them), NTH, REGEX or ALL")
    error_every: int = setting(P + "errorEvery", default=5, minimum=1, scope=Scope.BRANCH,
                               doc="with NTH: every how many sends one fails")
    regex_pattern: str | None = setting(P + "regexPattern", scope=Scope.BRANCH,
                                        doc="with REGEX: a send fails when this finds a match in the message's text")

    def check(self) -> list:
        from gobblin_py.sdk.config_errors import ConfigError

        if self.error_type.upper() == "REGEX" and not self.regex_pattern:
            return [ConfigError("flaky.errorType=REGEX needs a pattern", key=P + "regexPattern",
                                hint="the regular expression of the messages to fail")]
        return []


class FlakyKafkaProducer:
    """Gobblin's test producer that fails sends on purpose (see the module)."""

    settings_class = FlakySettings

    @staticmethod
    def rule(state: Any, branches: int = 1, branch: int = 0) -> Callable[[bytes | None], bool]:
        """Whether the next send of a message (its value) fails."""
        settings = FlakySettings.load(state, Context(branches=branches, branch=branch))
        kind = settings.error_type.upper()
        if kind == "ALL":
            return lambda value: True
        if kind == "RANDOM":
            draw = random.Random()
            return lambda value: draw.random() < 0.5
        if kind == "REGEX":
            pattern = re.compile(settings.regex_pattern or "")
            return lambda value: pattern.search((value or b"").decode("utf-8", "replace")) is not None
        count = [0]

        def nth(value: bytes | None) -> bool:
            count[0] += 1
            return count[0] % settings.error_every == 0

        return nth


class FailingSends:
    """A producer whose sends fail when ``fails(value)`` says so: the delivery callback hears of the failure at once."""

    def __init__(self, producer: Any, fails: Callable[[bytes | None], bool],
                 on_delivery: Callable[[Any, Any], None]) -> None:
        self.producer, self.fails, self.on_delivery = producer, fails, on_delivery

    def produce(self, topic: str, value: bytes | None = None, key: bytes | None = None) -> None:
        if self.fails(value):
            self.on_delivery(f"send failed on purpose ({FlakyKafkaProducer.__name__})", None)
        else:
            self.producer.produce(topic, value=value, key=key)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.producer, name)
