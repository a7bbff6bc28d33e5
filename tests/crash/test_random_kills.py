"""The random campaigns' bookkeeping: where a kill landed, read from a phase log, and the spread check that fails
when the kills miss the tasks or the commits."""

import random

import pytest

from tests.crash.random_kills import Landings, Profile, open_phases, plan

# a run: the lock at 10.0, planning, tasks 10.1-10.5, the commits 10.5-10.9 (two steps), its exit at 11.0
LOG = """enter lock 1 10.000000
leave lock 1 10.010000
enter planning 1 10.020000
leave planning 1 10.090000
enter tasks 1 10.100000
leave tasks 1 10.500000
enter commit.datasets 1 10.500000
enter commit.log 1 10.510000
leave commit.log 1 10.600000
enter commit.fs_rename 1 10.650000
leave commit.fs_rename 1 10.800000
leave commit.datasets 1 10.900000
""".splitlines()


def _landings() -> Landings:
    profile = Profile()
    profile.learn(LOG, ended=11.0)
    return Landings(profile=profile, first_spans={"window": 1.0, "tasks": 0.4, "commits": 0.4})


def test_a_profile_reads_the_window_the_tasks_and_the_commits_from_a_log():
    profile = _landings().profile
    assert {stratum: profile.span(stratum) for stratum in profile.lengths} == \
        pytest.approx({"window": 1.0, "tasks": 0.4, "commits": 0.4})
    assert profile.share("tasks") == pytest.approx(0.4) and profile.share("commits") == pytest.approx(0.4)


def test_open_phases_nest():
    assert open_phases(LOG, 10.7) == {"commit.datasets", "commit.fs_rename"}
    assert open_phases(LOG, 10.62) == {"commit.datasets"}
    assert open_phases(LOG, 10.095) == set()
    assert open_phases(LOG, 9.0) == set()


def test_each_kill_counts_where_it_landed_whatever_it_was_drawn_over():
    landings = _landings()
    landings.record("commits", LOG, 10.7)
    landings.record("tasks", LOG, 10.55)  # drawn over the tasks, the run had left them: counted in its commits
    landings.record("window", LOG, 10.095)  # between planning and the tasks
    landings.record("tasks", LOG, None)  # ended before its instant
    assert (landings.kills, landings.after_lock, landings.tasks, landings.commits, landings.finished) == (3, 3, 0, 2, 1)
    assert landings.per_stratum["tasks"] == {"commits": 1}
    assert landings.per_stratum["window"] == {"between phases": 1}
    assert landings.phases == {"commit.datasets": 2, "commit.log": 1, "commit.fs_rename": 1, "(between phases)": 1}


@pytest.mark.parametrize(("instants", "complaint"), [
    ([9.5, 10.2, 10.3, 10.6, 10.7, 10.8], "after the lock"),  # one before the lock
    ([10.2, 10.3, 10.4, 10.45, 10.6, 10.05], "too few kills in commits"),
    ([10.2, 10.6, 10.7, 10.8, 10.85, 10.05], "too few kills in tasks"),
])
def test_the_spread_check_fails_when_kills_miss_a_phase(instants, complaint):
    landings = _landings()
    for instant in instants:
        landings.record("window", LOG, instant)
    with pytest.raises(AssertionError, match=complaint):
        landings.check_spread()


def test_the_spread_check_passes_a_third_in_each_and_fails_too_many_unkilled_runs():
    landings = _landings()
    for instant in (10.2, 10.3, 10.6, 10.7, 10.05, 10.95):
        landings.record("window", LOG, instant)
    landings.check_spread()
    for _ in range(2):
        landings.record("tasks", LOG, None)
    with pytest.raises(AssertionError, match="ended before their instant"):
        landings.check_spread()


@pytest.mark.parametrize(("kills", "counts"), [(30, (12, 12, 6)), (12, (5, 5, 2)), (9, (4, 4, 1)), (2, (1, 1, 0))])
def test_the_plan_draws_two_fifths_over_the_tasks_and_the_commits_each_stratified(kills, counts, strict=True):
    drawn = plan(kills, random.Random(1))
    assert len(drawn) == kills
    for stratum, count in zip(("tasks", "commits", "window"), counts, strict=True):
        mine = [(k, m) for name, k, m in drawn if name == stratum]
        assert sorted(k for k, _ in mine) == list(range(count)) and {m for _, m in mine} <= {count}


def test_a_killed_run_adds_the_phases_it_finished_to_the_spans():
    profile = _landings().profile
    killed_in_commits = [line for line in LOG if float(line.split()[3]) <= 10.7]  # the log as the kill left it
    profile.learn_phases(killed_in_commits)
    profile.learn_phases([line.replace("10.500000", "10.300000") for line in LOG[:6]])  # quicker tasks, then killed
    assert profile.span("tasks") == pytest.approx(0.2) and len(profile.lengths["tasks"]) == 3
    assert profile.lengths["commits"] == pytest.approx([0.4]) and len(profile.lengths["window"]) == 1
