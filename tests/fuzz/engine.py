"""A small mutation fuzzer: seeds from real files, mutated byte-wise and with each format's tokens.

A target is a function of the input bytes that runs one reader; it returns normally or raises an error the
target allows (the project's clear errors). Anything else it raises is a crash, and so is an input that runs
longer than ``hang_seconds`` (a SIGALRM interrupts it). Inputs that end in an outcome not seen before (a new
error message's shape) join the pool that later inputs are mutated from: cheap feedback without coverage.

Deterministic for a given seed, so a CI run explores the same inputs every time; `make fuzz` runs far more.
"""

from __future__ import annotations

import os
import random
import re
import signal
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from types import FrameType

import gobblin_py

INTERESTING = [b"\x00", b"\xff", b"\x7f", b"\x80", b"\x8f", b"\x88", b"\x8c", b"\x87", b"\xff\xff\xff\xff",
               b"\x7f\xff\xff\xff", b"\x80\x00\x00\x00", b"\x00\x00\x00\x00", b"\x00\x00\x00\x01",
               b"\x00\x00\x10\x00", b"\xfe\xff\xff\xff", b"\x8c\x7f\xff\xff\xff\xff\xff\xff\xff"]
_POOL_LIMIT = 512
_MAX_INPUT = 1 << 16
_PRODUCT = os.path.dirname(os.path.abspath(gobblin_py.__file__)) + os.sep


class Hang(BaseException):
    """The target ran longer than the fuzzer allows one input (not an Exception: the target's handlers miss it)."""


@dataclass(frozen=True)
class Target:
    """One reader under fuzz: ``run(data)`` reads ``data``; ``allowed`` are the errors it may raise."""

    name: str
    run: Callable[[bytes], object]
    seeds: Sequence[bytes]
    allowed: tuple[type[BaseException], ...]
    tokens: Sequence[bytes] = ()
    check: Callable[[bytes, BaseException], str | None] | None = None  # a complaint about an allowed error


@dataclass
class Crash:
    """The first input that raised one kind of unexpected error (by exception type and place)."""

    signature: str
    data: bytes
    trace: str
    count: int = 1


@dataclass
class Report:
    """What a fuzz run did."""

    target: str
    inputs: int = 0
    seconds: float = 0.0
    crashes: dict[str, Crash] = field(default_factory=dict)
    outcomes: int = 0

    def describe(self) -> str:
        lines = [f"{self.target}: {len(self.crashes)} crash(es) in {self.inputs} inputs"]
        for crash in self.crashes.values():
            lines.append(f"--- {crash.signature} ({crash.count}x), input {crash.data[:400]!r}\n{crash.trace}")
        return "\n".join(lines)


def mutate(rng: random.Random, data: bytes, pool: Sequence[bytes], tokens: Sequence[bytes]) -> bytes:
    """``data`` with one to four random edits."""
    buf = bytearray(data)
    for _ in range(rng.choice((1, 1, 2, 3, 4))):
        op = rng.randrange(10)
        at = rng.randrange(len(buf) + 1)
        if op == 0 and buf:  # flip a bit
            i = rng.randrange(len(buf))
            buf[i] ^= 1 << rng.randrange(8)
        elif op == 1 and buf:  # a random byte
            buf[rng.randrange(len(buf))] = rng.randrange(256)
        elif op == 2:  # an interesting value, inserted or written over
            value = rng.choice(INTERESTING)
            buf[at:at + (len(value) if rng.random() < 0.5 else 0)] = value
        elif op == 3 and buf:  # delete a range
            buf[at:at + rng.randrange(1, 17)] = b""
        elif op == 4 and buf:  # duplicate a range
            start = rng.randrange(len(buf))
            buf[at:at] = buf[start:start + rng.randrange(1, 33)]
        elif op == 5:  # truncate
            del buf[at:]
        elif op in (6, 7) and tokens:  # a token of the format
            buf[at:at] = rng.choice(tokens)
        elif op == 8 and pool:  # splice with another input
            other = rng.choice(pool)
            cut = rng.randrange(len(other) + 1)
            buf[at:] = other[cut:]
        else:  # random bytes
            buf[at:at] = rng.randbytes(rng.randrange(1, 9))
    return bytes(buf[:_MAX_INPUT])


def _signature(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    # the innermost frame in the product, else the innermost one
    inner = next((f for f in reversed(frames) if f.filename.startswith(_PRODUCT)), frames[-1] if frames else None)
    where = f"{os.path.basename(inner.filename)}:{inner.lineno}" if inner else "?"
    return f"{type(exc).__name__} at {where}"


def _outcome(exc: BaseException | None) -> str:
    if exc is None:
        return "ok"
    return type(exc).__name__ + ":" + re.sub(r"[0-9]+|'[^']*'|\"[^\"]*\"", "#", str(exc))[:80]


def _alarm(signum: int, frame: FrameType | None) -> None:
    raise Hang()


def fuzz(target: Target, inputs: int, seconds: float | None = None, seed: int = 0,
         hang_seconds: float = 5.0) -> Report:
    """Run ``target`` on up to ``inputs`` inputs (and for at most ``seconds``): the seeds, then mutations."""
    rng = random.Random(seed)
    pool = list(target.seeds)
    seen: set[str] = set()
    report = Report(target.name)
    started = time.perf_counter()
    deadline = None if seconds is None else started + seconds
    previous = signal.signal(signal.SIGALRM, _alarm)
    try:
        while report.inputs < inputs:
            if report.inputs < len(target.seeds):
                data = target.seeds[report.inputs]
            else:
                data = mutate(rng, rng.choice(pool), pool, target.tokens)
            report.inputs += 1
            error: BaseException | None = None
            signal.setitimer(signal.ITIMER_REAL, hang_seconds)
            try:
                target.run(data)
            except target.allowed as exc:
                error = exc
                complaint = target.check(data, exc) if target.check else None
                if complaint:
                    _record(report, f"unclear {type(exc).__name__}: {complaint}", data, exc)
            except Hang as exc:
                _record(report, f"hang (over {hang_seconds} s)", data, exc)
                error = exc
            except Exception as exc:  # noqa: BLE001 - anything else is what the fuzzer is looking for
                _record(report, _signature(exc), data, exc)
                error = exc
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            outcome = _outcome(error)
            if outcome not in seen:
                seen.add(outcome)
                if len(pool) < _POOL_LIMIT:
                    pool.append(data)
            if deadline is not None and report.inputs % 16 == 0 and time.perf_counter() > deadline:
                break
    finally:
        signal.signal(signal.SIGALRM, previous)
    report.seconds = time.perf_counter() - started
    report.outcomes = len(seen)
    return report


def _record(report: Report, signature: str, data: bytes, exc: BaseException) -> None:
    crash = report.crashes.get(signature)
    if crash is None:
        trace = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)[-6:])
        report.crashes[signature] = Crash(signature, data, trace)
    else:
        crash.count += 1
        if len(data) < len(crash.data):  # keep the shortest input that shows it
            crash.data = data
