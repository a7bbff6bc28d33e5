"""Where a job's layered configuration comes from: found from the job file (or --conf-root / GPY_CONF_ROOT),
never from the folder gpy happens to be started in; `gpy validate` lists the files applied, in order."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.support.cli import run_gpy
from tests.support.paths import REPO


def deployment(root: Path) -> Path:
    """A deployment: conf/gobblin.properties names the folders, jobs/.properties the namespace, the job the rest."""
    (root / "conf").mkdir(parents=True)
    (root / "conf" / "gobblin.properties").write_text(
        f"state.store.dir={root}/state\ntask.data.root.dir={root}/work\ndata.publisher.final.dir={root}/out\n")
    (root / "jobs" / "daily").mkdir(parents=True)
    (root / "data").mkdir()
    (root / "jobs" / ".properties").write_text("extract.namespace=shop\n")
    (root / "jobs" / "daily" / "orders.pull").write_text(
        "job.name=Orders\nsource.class=FileBasedSource\n"
        f"source.filebased.data.directory={root}/data\nextract.table.name=orders\n")
    return root / "jobs" / "daily" / "orders.pull"


def validate(job: Path, cwd: Path, *args: str, env: dict | None = None):
    return run_gpy("validate", str(job), *args, cwd=cwd, env=env)


def test_the_same_job_validates_alike_from_any_folder(tmp_path):
    job = deployment(tmp_path / "deploy")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    results = [validate(job, cwd, "--json") for cwd in (tmp_path / "deploy", elsewhere, REPO, job.parent)]
    for result in results:
        assert result.returncode == 0, result.stdout + result.stderr
    reports = [json.loads(r.stdout) for r in results]
    assert all(r == reports[0] for r in reports)
    props = reports[0][0]["properties"]
    assert props["state.store.dir"] == f"{tmp_path}/deploy/state"  # conf/ found walking up from the job


def test_a_job_with_no_conf_above_it_does_not_take_the_working_folders(tmp_path):
    job = tmp_path / "lone" / "orders.pull"
    job.parent.mkdir()
    job.write_text("job.name=Orders\nsource.class=FileBasedSource\nsource.filebased.data.directory=/nonexistent\n")
    from_repo = validate(job, REPO, "--json")  # the repository has conf/gobblin.properties: not this job's
    from_tmp = validate(job, tmp_path, "--json")
    assert from_repo.returncode == from_tmp.returncode == 2
    assert json.loads(from_repo.stdout) == json.loads(from_tmp.stdout)
    assert "state.store.dir" not in json.loads(from_repo.stdout)[0]["properties"]


def test_conf_root_from_the_environment_applies_the_global_files_above_the_job(tmp_path):
    job = deployment(tmp_path / "deploy")
    without = validate(job, tmp_path, "--json")
    assert "extract.namespace" not in json.loads(without.stdout)[0]["properties"]  # jobs/ is above the job's folder
    by_option = validate(job, tmp_path, "--json", "--conf-root", str(tmp_path / "deploy" / "jobs"))
    by_env = validate(job, tmp_path, "--json", env={"GPY_CONF_ROOT": str(tmp_path / "deploy" / "jobs")})
    assert json.loads(by_option.stdout) == json.loads(by_env.stdout)
    assert json.loads(by_env.stdout)[0]["properties"]["extract.namespace"] == "shop"


def test_validate_lists_the_files_applied_in_order(tmp_path):
    job = deployment(tmp_path / "deploy")
    jobs = tmp_path / "deploy" / "jobs"
    applied = [str(tmp_path / "deploy" / "conf" / "gobblin.properties"), str(jobs / ".properties"), str(job)]
    result = validate(job, tmp_path, env={"GPY_CONF_ROOT": str(jobs)})
    assert result.returncode == 0, result.stdout + result.stderr
    lines = [line.split(":", 1)[1].strip() for line in result.stdout.splitlines() if line.strip().startswith("applied")]
    assert [line.split(" (")[0] for line in lines] == applied
    report = json.loads(validate(job, tmp_path, "--json", env={"GPY_CONF_ROOT": str(jobs)}).stdout)[0]
    assert report["applied"] == applied


def test_an_explicit_sysconfig_is_the_one_applied(tmp_path):
    job = deployment(tmp_path / "deploy")
    other = tmp_path / "other.properties"
    other.write_text(f"state.store.dir={tmp_path}/other-state\ntask.data.root.dir={tmp_path}/w\n"
                     f"data.publisher.final.dir={tmp_path}/o\n")
    report = json.loads(validate(job, tmp_path, "--json", "--sysconfig", str(other)).stdout)[0]
    assert report["properties"]["state.store.dir"] == f"{tmp_path}/other-state"
    assert report["applied"][0] == str(other)
    assert os.path.isabs(report["applied"][0])
