"""Job loading: Gobblin's PullFileLoaderTest and SchedulerUtilsTest cases plus loader rules (spec §1.2-§1.4, §1.11)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gobblin_py.jobconf import ConfigError, JobConfig, load_job, load_jobs, load_sysconfig
from gobblin_py.jobconf.loader import classify, discover_job_files

SYS = {"key1": "sysProps1"}


def job(root: Path, name: str, **kwargs) -> JobConfig:
    kwargs.setdefault("env", {})
    return load_job(root / name, conf_root=root, **kwargs)


# --- PullFileLoaderTest ---------------------------------------------------------------------------------------
def test_1_simple_job_loading(pull_file_loader_tree: Path):
    root = pull_file_loader_tree
    a = job(root, "ajob.pull", load_globals=False)
    assert dict(a) == {"key2": "aValue", "key10": "aValue", "job.config.path": str(root / "ajob.pull")}
    assert len(a) == 3

    b = job(root, "dir1/job.pull", load_globals=False)
    assert (b["key1"], b["key2"], len(b)) == ("jobValue1,jobValue2,jobValue3", "jobValue2", 3)
    assert b["job.config.path"] == str(root / "dir1" / "job.pull")

    c = job(root, "dir1/job.conf", load_globals=False)
    assert (c["key1"], c["key2"], c["key10"], len(c)) == (
        "jobValue1,jobValue2,jobValue3",
        "jobValue2",
        "jobValue2",
        4,
    )
    assert c["job.config.path"] == str(root / "dir1" / "job.conf")


def test_2_job_loading_with_sys_props(pull_file_loader_tree: Path):
    root = pull_file_loader_tree
    a = job(root, "ajob.pull", sysconfig=SYS, load_globals=False)
    assert (a["key1"], a["key2"], a["key10"], len(a)) == ("sysProps1", "aValue", "aValue", 4)

    b = job(root, "dir1/job.pull", sysconfig=SYS, load_globals=False)
    assert (b["key1"], b["key2"], len(b)) == ("jobValue1,jobValue2,jobValue3", "jobValue2", 3)

    c = job(root, "dir1/job.conf", sysconfig={}, load_globals=False)
    assert (c["key1"], c["key2"], c["key10"], len(c)) == ("jobValue1,jobValue2,jobValue3", "jobValue2", "jobValue2", 4)


def test_3_recursive_job_loading(pull_file_loader_tree: Path):
    root = pull_file_loader_tree
    results = load_jobs(root, sysconfig=SYS, env={}, load_globals=False)
    loaded = {os.path.relpath(r.path, root): r for r in results}
    assert sorted(loaded) == ["ajob.pull", "bjob.pull", "dir1/job.conf", "dir1/job.pull", "dir2/badjob.conf"]
    ok = {name: r.config for name, r in loaded.items() if r.ok}
    assert sorted(ok) == ["ajob.pull", "bjob.pull", "dir1/job.conf", "dir1/job.pull"]  # 4 configs
    assert (ok["ajob.pull"]["key1"], ok["ajob.pull"]["key2"], len(ok["ajob.pull"])) == ("sysProps1", "aValue", 4)
    assert (ok["dir1/job.pull"]["key1"], len(ok["dir1/job.pull"])) == ("jobValue1,jobValue2,jobValue3", 3)
    # dir1/job.conf defines key1 itself, so the sys key1 adds no entry: still 4 entries.
    assert (ok["dir1/job.conf"]["key2"], ok["dir1/job.conf"]["key10"], len(ok["dir1/job.conf"])) == (
        "jobValue2",
        "jobValue2",
        4,
    )
    bad = loaded["dir2/badjob.conf"]
    assert not bad.ok and bad.error is not None and bad.error.line == 18


def test_4_job_loading_order(tmp_path: Path):
    for i in range(5, 0, -1):
        path = tmp_path / f"job{i}.conf"
        path.write_text(f"key=job{i}_val\n")
        stamp = 1_700_000_000 + (5 - i)  # job5 written first (oldest) ... job1 last
        os.utime(path, (stamp, stamp))
    results = load_jobs(tmp_path, env={})
    assert [r.config["key"] for r in results if r.config] == [f"job{i}_val" for i in (5, 4, 3, 2, 1)]


def test_5_job_loading_with_sys_props_and_global_props(pull_file_loader_tree: Path):
    root = pull_file_loader_tree
    a = job(root, "ajob.pull", sysconfig=SYS)
    assert dict(a) == {
        "key2": "aValue",
        "key10": "aValue",
        "job.config.path": str(root / "ajob.pull"),
        "key1": "rootValue1",  # root global beats sys
        "key3": "rootValue3",
    }
    b = job(root, "dir1/job.pull", sysconfig=SYS)
    assert {k: b[k] for k in ("key1", "key2", "key2a", "key3", "key4")} == {
        "key1": "jobValue1,jobValue2,jobValue3",
        "key2": "jobValue2",
        "key2a": "jobValue2",  # dir1.configuration's ${key2} resolves against the job file
        "key3": "rootValue3",
        "key4": "dir1Value4",
    }
    assert len(b) == 6 and b["job.config.path"] == str(root / "dir1" / "job.pull")
    c = job(root, "dir1/job.conf", sysconfig={})
    assert {k: c[k] for k in ("key1", "key2", "key2a", "key3", "key4", "key10")} == {
        "key1": "jobValue1,jobValue2,jobValue3",
        "key2": "dir1Value4",  # ${?key4} now resolves (to the global's key4)
        "key2a": "dir1Value4",
        "key3": "rootValue3",
        "key4": "dir1Value4",
        "key10": "jobValue2",
    }
    assert len(c) == 7 and c["job.config.path"] == str(root / "dir1" / "job.conf")


def test_6_recursive_job_loading_with_global_props(pull_file_loader_tree: Path):
    root = pull_file_loader_tree
    results = {os.path.relpath(r.path, root): r for r in load_jobs(root, sysconfig=SYS, env={})}
    assert [name for name, r in results.items() if not r.ok] == ["dir2/badjob.conf"]
    a, b, c = (results[n].config for n in ("ajob.pull", "dir1/job.pull", "dir1/job.conf"))
    assert (a["key1"], a["key3"], len(a)) == ("rootValue1", "rootValue3", 5)
    assert (b["key2a"], b["key4"], len(b)) == ("jobValue2", "dir1Value4", 6)
    assert (c["key2"], c["key2a"], len(c)) == ("dir1Value4", "dir1Value4", 7)


def test_7_json_property_reuse(pull_file_loader_tree: Path):
    root = pull_file_loader_tree
    with_flag = job(root, "bjob.pull", sysconfig={"property.parsing.enablekey": "true"})
    assert with_flag["json.property.key1"] == with_flag["json.property.key"] == '{"name":"shankar","country":"bharat"}'
    without = job(root, "bjob.pull")
    assert without["json.property.key1"] == '{"name":"shankar"'


def test_8_exception_wrapping(pull_file_loader_tree: Path):
    path = pull_file_loader_tree / "dir2" / "badjob.conf"
    with pytest.raises(ConfigError) as info:
        load_job(path, conf_root=pull_file_loader_tree, env={})
    assert f"Failed to parse config file {path} at lineNo:18" in str(info.value)
    assert info.value.line == 18 and info.value.path == str(path)


# --- SchedulerUtilsTest ---------------------------------------------------------------------------------------------
def test_load_generic_job_configs(scheduler_utils_tree: Path):
    root = scheduler_utils_tree
    sys = {"jobconf.fullyQualifiedPath": str(root)}
    results = load_jobs(root, sysconfig=sys, env={})
    assert all(r.ok for r in results) and len(results) == 5
    configs = {os.path.basename(r.path): r.config for r in results}
    t111 = configs["test111.pull"]
    assert {k: t111[k] for k in ("k1", "k2", "k3", "k8", "k9")} == {"k1": "d1", "k2": "a2", "k3": "a3", "k8": "a8", "k9": "a8"}
    assert len(t111) == 7 and t111["jobconf.fullyQualifiedPath"] == str(root)
    t11 = configs["test11.pull"]
    assert ({k: t11[k] for k in ("k1", "k2", "k3", "k6")}, len(t11)) == ({"k1": "c1", "k2": "a2", "k3": "b3", "k6": "a6"}, 6)
    t12 = configs["test12.PULL"]
    assert ({k: t12[k] for k in ("k1", "k2", "k3", "k7")}, len(t12)) == ({"k1": "b1", "k2": "a2", "k3": "a3", "k7": "a7"}, 6)
    t21 = configs["test21.PULL"]
    assert ({k: t21[k] for k in ("k1", "k2", "k5")}, len(t21)) == ({"k1": "a1", "k2": "b2", "k5": "b5"}, 5)


def test_load_generic_job_configs_of_one_common_props_folder(scheduler_utils_tree: Path):
    root = scheduler_utils_tree
    results = load_jobs(root / "test1", conf_root=root, sysconfig={"jobconf.fullyQualifiedPath": str(root)}, env={})
    assert sorted(os.path.basename(r.path) for r in results) == ["test11.pull", "test111.pull", "test12.PULL"]
    t111 = next(r.config for r in results if r.path.endswith("test111.pull"))
    assert t111 is not None and len(t111) == 7 and t111["k3"] == "a3" and t111["k2"] == "a2"


def test_load_generic_job_config(scheduler_utils_tree: Path):
    root = scheduler_utils_tree
    t111 = job(root, "test1/test11/test111.pull", sysconfig={"jobconf.fullyQualifiedPath": str(root)})
    assert len(t111) == 7 and t111["k1"] == "d1" and t111["k9"] == "a8"


# --- classification and discovery -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "name,kind",
    [("a.pull", "props"), ("a.PULL", "props"), ("a.job", "props"), ("a.conf", "hocon"), ("a.JSON", "hocon"),
     ("g.properties", "global-props"), ("g.PROPERTIES", "global-props"), ("g.configuration", "global-hocon"),
     ("t.template", None), ("notes.txt", None), ("pull", None)],
)
def test_classify(name, kind):
    assert classify(name) == kind


def test_custom_job_extensions(tmp_path: Path, write_files):
    write_files(tmp_path, {"a.pull": "x=1\n", "b.jobfile": "y=2\n", "c.conf": "z=3\n"})
    results = load_jobs(tmp_path, sysconfig={"jobconf.extensions": " JobFile , "}, env={})
    assert sorted(os.path.basename(r.path) for r in results) == ["b.jobfile", "c.conf"]


def test_job_extensions_may_not_include_hocon_ones(tmp_path: Path):
    with pytest.raises(ConfigError) as info:
        load_jobs(tmp_path, sysconfig={"jobconf.extensions": "pull,conf"}, env={})
    assert info.value.key == "jobconf.extensions"


def test_unrecognized_extension(tmp_path: Path):
    (tmp_path / "x.template").write_text("a=1\n")
    with pytest.raises(ConfigError) as info:
        load_job(tmp_path / "x.template", env={})
    assert "Cannot load pull file" in str(info.value) and "unrecognized extension" in str(info.value)


def test_missing_job_file_is_a_per_file_error(tmp_path: Path):
    [result] = load_jobs([tmp_path / "nope.pull"], env={})
    assert not result.ok and "not found" in str(result.error)


def test_discovery_is_recursive_and_ignores_globals(tmp_path: Path, write_files):
    write_files(tmp_path, {"g.properties": "a=1\n", "a.pull": "", "d/b.conf": "", "d/e/c.job": "", "d/x.txt": ""})
    for index, name in enumerate(["d/e/c.job", "a.pull", "d/b.conf"]):
        os.utime(tmp_path / name, (1000 + index, 1000 + index))
    assert [os.path.relpath(p, tmp_path) for p, _ in discover_job_files(tmp_path)] == ["d/e/c.job", "a.pull", "d/b.conf"]


def test_equal_mtimes_keep_walk_order(tmp_path: Path, write_files):
    write_files(tmp_path, {"b.pull": "", "a.pull": "", "sub/c.pull": ""})
    for name in ("b.pull", "a.pull", "sub/c.pull"):
        os.utime(tmp_path / name, (1000, 1000))
    assert [os.path.relpath(p, tmp_path) for p, _ in discover_job_files(tmp_path)] == ["a.pull", "b.pull", "sub/c.pull"]


def test_missing_directory_gives_no_jobs(tmp_path: Path):
    assert discover_job_files(tmp_path / "missing") == []


# --- merge chain ------------------------------------------------------------------------------------------------------
def test_more_than_one_global_file_fails_only_that_subtree(tmp_path: Path, write_files):
    write_files(tmp_path, {
        "root.properties": "r=1\n",
        "ok/job.pull": "a=1\n",
        "twice/a.properties": "x=1\n",
        "twice/b.configuration": "y=2\n",
        "twice/job.pull": "b=1\n",
        "twice/deeper/job2.pull": "c=1\n",
    })
    results = {os.path.relpath(r.path, tmp_path): r for r in load_jobs(tmp_path, env={})}
    assert results["ok/job.pull"].ok and results["ok/job.pull"].config["r"] == "1"
    for name in ("twice/job.pull", "twice/deeper/job2.pull"):
        err = results[name].error
        assert err is not None and "more than one global properties file" in str(err)
        assert "a.properties" in str(err) and "b.configuration" in str(err)


def test_nearest_global_wins_and_job_wins_over_globals(tmp_path: Path, write_files):
    write_files(tmp_path, {
        "root.properties": "k=root\nr=root\n",
        "a/a.configuration": 'k=a\nfrom.a=${r}"-a"\n',
        "a/b/b.properties": "k=b\n",
        "a/b/job.pull": "j=job\n",
        "a/b/override.pull": "k=job\n",
    })
    j = job(tmp_path, "a/b/job.pull", sysconfig={"k": "sys", "s": "sys"})
    assert (j["k"], j["r"], j["s"], j["from.a"], j["j"]) == ("b", "root", "sys", "root-a", "job")
    assert job(tmp_path, "a/b/override.pull")["k"] == "job"
    assert list(j)[:2] == ["j", "job.config.path"]  # the job's own keys come first


def test_default_conf_root_is_the_job_folder(tmp_path: Path, write_files):
    write_files(tmp_path, {"root.properties": "r=1\n", "sub/local.properties": "l=1\n", "sub/job.pull": "j=1\n"})
    loaded = load_job(tmp_path / "sub" / "job.pull", env={})
    assert "l" in loaded and "r" not in loaded


def test_job_outside_conf_root_only_gets_sys_config(tmp_path: Path, write_files):
    write_files(tmp_path, {"root/root.properties": "r=1\n", "elsewhere/job.pull": "j=1\n"})
    loaded = load_job(tmp_path / "elsewhere" / "job.pull", conf_root=tmp_path / "root", sysconfig={"s": "1"}, env={})
    assert dict(loaded) == {"j": "1", "job.config.path": str(tmp_path / "elsewhere" / "job.pull"), "s": "1"}
    assert loaded.warnings and "not inside the configuration root" in loaded.warnings[0]


def test_property_parsing_flag_comes_from_the_fallback_only(tmp_path: Path, write_files):
    write_files(tmp_path, {
        "root.properties": "property.parsing.enablekey=true\n",
        "job.pull": "l=a, b\n",
        "sub/sub.properties": "property.parsing.enablekey=false\n",
        "sub/job.pull": "l=a, b\n",
        "self/job.pull": "property.parsing.enablekey=true\nl=a, b\n",
    })
    assert job(tmp_path, "job.pull")["l"] == "a, b"  # root global disables splitting
    assert job(tmp_path, "sub/job.pull")["l"] == "a,b"  # the nearer global re-enables it
    assert load_job(tmp_path / "self" / "job.pull", env={})["l"] == "a,b"  # setting it in the file has no effect


def test_property_parsing_flag_must_be_a_typesafe_boolean(tmp_path: Path):
    (tmp_path / "job.pull").write_text("a=1\n")
    with pytest.raises(ConfigError) as info:
        job(tmp_path, "job.pull", sysconfig={"property.parsing.enablekey": "maybe"})
    assert info.value.key == "property.parsing.enablekey"
    assert job(tmp_path, "job.pull", sysconfig={"property.parsing.enablekey": "yes"})["a"] == "1"


def test_references_to_other_files_stay_literal_in_java_props(tmp_path: Path, write_files):
    write_files(tmp_path, {"root.properties": "shared=x\n", "job.pull": "lit=${shared}\n"})
    loaded = job(tmp_path, "job.pull", sysconfig={"shared": "sys"})
    assert loaded["lit"] == "${shared}" and loaded["shared"] == "x"


def test_hocon_job_sees_everything(tmp_path: Path, write_files):
    write_files(tmp_path, {"root.properties": "shared=x\n", "job.conf": 'a=${shared}"-job"\nh=${HOME}\n'})
    loaded = job(tmp_path, "job.conf", sysconfig={"other": "y"}, env={"HOME": "/h"})
    assert (loaded["a"], loaded["h"]) == ("x-job", "/h")


def test_shape_conflicts_across_files(tmp_path: Path, write_files):
    write_files(tmp_path, {
        "root.properties": "x=global\na.b=2\n",
        "job.pull": "a=1\nx.y=job\n",
    })
    loaded = job(tmp_path, "job.pull", sysconfig={"x.y.z": "sys"})
    assert loaded["a"] == "1" and "a.b" not in loaded
    assert loaded["x.y"] == "job" and "x" not in loaded and "x.y.z" not in loaded


def test_separator_less_line_is_a_key_of_its_own_with_a_warning(tmp_path: Path):
    # java.util.Properties' reading, which Gobblin's command-line launcher and its copy test rely on
    (tmp_path / "copy.pull").write_text("job.name=x\n\nworkunit.retry.enabled-false\nesc\\u0041pe\n")
    loaded = load_job(tmp_path / "copy.pull", env={})
    assert loaded["workunit.retry.enabled-false"] == "" and loaded["escApe"] == "" and "" not in loaded
    [warning, other] = loaded.warnings
    assert "line 3 of copy.pull has no key/value separator (`workunit.retry.enabled-false`)" in warning
    assert "did you mean `workunit.retry.enabled=false`?" in warning  # the suggested fix
    assert "line 4 of copy.pull" in other and "write it as key=value" in other


def test_empty_key_is_an_error(tmp_path: Path):
    (tmp_path / "job.pull").write_text("job.name=x\n=oops\n")
    with pytest.raises(ConfigError) as info:
        load_job(tmp_path / "job.pull", env={})
    assert info.value.line == 2 and "line 2 of job.pull has an empty key (`=oops`)" in str(info.value)


def test_bad_keys_name_the_file_line_and_key(tmp_path: Path):
    (tmp_path / "job.pull").write_text("ok=1\nbad$key=2\n")
    with pytest.raises(ConfigError) as info:
        load_job(tmp_path / "job.pull", env={})
    assert (info.value.line, info.value.key) == (2, "bad$key")
    assert str(info.value).startswith(f"{tmp_path / 'job.pull'}:2: key 'bad$key': ")


def test_unresolved_substitution_fails_one_job_and_the_others_load(tmp_path: Path, write_files):
    write_files(tmp_path, {"a.conf": "x=${missing}\n", "b.pull": "y=1\n"})
    results = {os.path.basename(r.path): r for r in load_jobs(tmp_path, env={})}
    assert results["b.pull"].ok
    err = results["a.conf"].error
    assert err is not None and (err.line, err.key) == (1, "missing")


def test_interpolation_cycle_fails_the_job(tmp_path: Path):
    (tmp_path / "job.pull").write_text("a=${b}\nb=${a}\n")
    with pytest.raises(ConfigError) as info:
        load_job(tmp_path / "job.pull", env={})
    assert info.value.key == "a" and info.value.line == 1


def test_env_and_system_properties(tmp_path: Path):
    (tmp_path / "job.pull").write_text("d=${env:WORK}/x\nu=${sys:user}\n")
    loaded = load_job(tmp_path / "job.pull", env={"WORK": "/w"}, system_properties={"user": "me"})
    assert (loaded["d"], loaded["u"]) == ("/w/x", "me")


# --- system configuration ---------------------------------------------------------------------------------------------
def test_sysconfig_files_overlay_and_jobconf_dir(tmp_path: Path, write_files):
    write_files(tmp_path, {
        "default.properties": "a=default\nb=default\njobconf.dir=/jobs\nref=${b}\n",
        "custom.properties": "b=custom\n",
        "jobs/job.pull": "j=1\n",
    })
    props = load_sysconfig([tmp_path / "default.properties", tmp_path / "custom.properties"], env={})
    assert props == {
        "a": "default",
        "b": "custom",
        "jobconf.dir": "/jobs",
        "ref": "default",  # interpolated inside the default file, before the overlay
        "jobconf.fullyQualifiedPath": "file:///jobs",
    }
    loaded = load_job(tmp_path / "jobs" / "job.pull", sysconfig=tmp_path / "default.properties", env={})
    assert loaded["jobconf.fullyQualifiedPath"] == "file:///jobs" and loaded["j"] == "1"


def test_sysconfig_errors_name_the_file(tmp_path: Path):
    (tmp_path / "gobblin.properties").write_text("ok=1\n=broken\n")
    with pytest.raises(ConfigError) as info:
        load_sysconfig(tmp_path / "gobblin.properties", env={})
    assert info.value.path == str(tmp_path / "gobblin.properties") and info.value.line == 2
    (tmp_path / "gobblin.properties").write_text("ok=1\nbroken\n")  # no separator: a key of its own, warned of
    assert load_sysconfig(tmp_path / "gobblin.properties", env={})["broken"] == ""
    with pytest.raises(ConfigError):
        load_sysconfig(tmp_path / "missing.properties")


def test_sysconfig_bad_key_names_file_and_line(tmp_path: Path):
    (tmp_path / "gobblin.properties").write_text("ok=1\na..b=2\n")
    with pytest.raises(ConfigError) as info:
        load_sysconfig(tmp_path / "gobblin.properties", env={})
    assert (info.value.path, info.value.line, info.value.key) == (str(tmp_path / "gobblin.properties"), 2, "a..b")


# --- JobConfig helpers ----------------------------------------------------------------------------------------------
def test_job_config_helpers():
    cfg = JobConfig("jobs/x.pull", {
        "i": "42", "neg": "-7", "sp": " 5", "big": "3000000000", "b1": "TRUE", "b2": "yes", "b3": " true",
        "l": " a, ,b ,, c ", "e": "",
    })
    assert cfg.get("i") == "42" and cfg.get("nope", "d") == "d" and cfg["i"] == "42"
    assert cfg.get_int("i") == 42 and cfg.get_int("neg") == -7 and cfg.get_int("nope", 3) == 3
    assert cfg.get_long("big") == 3_000_000_000
    for key in ("sp", "big"):
        with pytest.raises(ConfigError) as info:
            cfg.get_int(key)
        assert info.value.key == key and info.value.path == "jobs/x.pull"
    assert (cfg.get_bool("b1"), cfg.get_bool("b2"), cfg.get_bool("b3"), cfg.get_bool("nope", True)) == (True, False, False, True)
    assert cfg.get_list("l") == ["a", "b", "c"] and cfg.get_list("e") == [] and cfg.get_list("nope", ["d"]) == ["d"]
    assert "i" in cfg and len(cfg) == 9 and dict(cfg)["l"] == " a, ,b ,, c "
