"""Which folders are datasets, and which time folders a run takes."""

from __future__ import annotations

from datetime import datetime, timezone

from gobblin_py.connectors.compaction.finder import DatasetFinder
from gobblin_py.connectors.compaction.settings import CompactionSettings, period_seconds

NOW = int(datetime(2017, 4, 5, 0, 0, tzinfo=timezone.utc).timestamp() * 1000)


def _settings(tmp_path, **keys: str) -> CompactionSettings:
    return CompactionSettings.load({"compaction.input.dir": str(tmp_path), "compaction.dest.dir": str(tmp_path / "out"),
                                    "compaction.timezone": "UTC", **{k.replace("__", "."): v for k, v in keys.items()}})


def test_pattern_datasets_leave_out_hidden_folders_and_those_outside_the_time_window(tmp_path):
    for hour in ("2017/04/03/10", "2017/04/03/.11.gpy-new", "2017/04/04/23", "2017/03/01/00", "2017/04/03/_x"):
        (tmp_path / "A" / "B" / "minutely" / hour).mkdir(parents=True)
    settings = _settings(tmp_path, gobblin__dataset__pattern=f"{tmp_path}/*/*/minutely/*/*/*/*",
                         compaction__input__subdir="minutely", compaction__dest__subdir="hourly")
    found = DatasetFinder(settings, NOW).find()  # 3 days to 1 day ago: 2017-04-02 00:00 … 2017-04-04 00:00
    assert [(d.name, d.time) for d in found] == [("A/B", "2017/04/03/10")]
    assert found[0].dest == f"{tmp_path}/out/A/B/hourly/2017/04/03/10"
    assert found[0].dest_late == f"{tmp_path}/out/A/B/hourly_late/2017/04/03/10"


def test_the_legacy_finder_blacklists_whitelists_and_caps_the_datasets(tmp_path):
    for topic in ("PageViewEvent", "Secret", "Other"):
        for day in ("02", "03"):
            (tmp_path / topic / "hourly" / "2017" / "04" / day).mkdir(parents=True)
    settings = _settings(tmp_path, compaction__blacklist="Sec.*", compaction__whitelist="Page.*,Other",
                         compaction__datasets__max__count="3")
    found = DatasetFinder(settings, NOW).find()
    assert [(d.name, d.time) for d in found] == [("Other", "2017/04/02"), ("PageViewEvent", "2017/04/02"),
                                                 ("Other", "2017/04/03")]
    assert found[0].input_late == f"{tmp_path}/Other/hourly_late/2017/04/02"


def test_periods_read_months_days_hours_and_minutes():
    assert period_seconds("1d2h") == 26 * 3600
    assert period_seconds("1m") == 30 * 86400  # m is a month, as in Gobblin
    assert period_seconds("30min") == 1800
