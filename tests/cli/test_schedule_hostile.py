"""`gpy schedule` with hostile job names, paths and schedules: every value that reaches a crontab line or a DAG
file is quoted or refused, and two jobs never silently share one DAG."""

from __future__ import annotations

import ast
import resource
import shlex
import subprocess
import sys

from gobblin_py.cli.schedule import dag_owner
from tests.support.cli import run_gpy, run_gpy_here
from tests.support.schedules import job_file

# legal in a file name, and each breaks naive quoting somewhere: a docstring, a Python string, Jinja, the shell, cron
HOSTILE = 'x"""; open("PWNED", "w"); """ \\N{a} {{ ds }} $(touch PWNED) `id` \' 50% \\%'


def cron_command(line: str) -> list[str]:
    """The words the shell gets from a crontab line, after cron's own pass (Vixie cron's ``do_command``): an
    unescaped ``%`` ends the command, ``\\%`` becomes ``%``, and a backslash escapes the next character only."""
    command, kept, escaped = line.split(" ", 5)[5], [], False
    for ch in command:
        if escaped:
            escaped = False
            if ch == "%":
                kept[-1] = "%"
                continue
        elif ch == "%":
            break
        elif ch == "\\":
            escaped = True
        kept.append(ch)
    return shlex.split("".join(kept))


def test_a_line_break_in_a_crontab_value_is_refused_naming_the_job_and_key(tmp_path):
    named = job_file(tmp_path, "Named", "0 0 2 * * ?")
    named.write_text("job.name=Nightly\\n* * * * * touch /tmp/PWNED\nsource.class=FileBasedSource\n"
                     "job.schedule=0 0 2 * * ?\n")
    scheduled = job_file(tmp_path, "Scheduled", "0 0 2 * * ?")
    scheduled.write_text("job.name=Scheduled\nsource.class=FileBasedSource\njob.schedule=0 0 2\\n* * ?\n")
    odd_folder = tmp_path / "a\n* * * * * touch PWNED #"
    odd_path = job_file(odd_folder, "Path", "0 0 2 * * ?")
    good = job_file(tmp_path, "Good", "0 0 2 * * ?")
    result = run_gpy("schedule", str(named), str(scheduled), str(odd_path), str(good), "--crontab")
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stdout == ""
    assert f"{named}: key 'job.name'" in result.stderr and "line break" in result.stderr
    assert f"{scheduled}: key 'job.schedule'" in result.stderr
    assert f"{str(odd_path)!r}: the job file's path holds a line break" in result.stderr
    assert "3 of 4 jobs not scheduled; nothing written" in result.stderr
    assert not list(tmp_path.rglob("PWNED"))


def test_a_hostile_job_path_is_one_crontab_line_that_runs_exactly_that_job(tmp_path):
    hostile = job_file(tmp_path / HOSTILE, "Hostile", "0 0 2 * * ?")
    good = job_file(tmp_path, "Good", "0 30 1 * * ?")
    result = run_gpy("schedule", str(hostile), str(good), "--crontab", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stdout.splitlines() if not line.startswith("#")]
    assert len(lines) == 3 and len(result.stdout.splitlines()) == 6
    assert lines[0] == f'GPY_JOBS_ROOT="{tmp_path}"'
    argv = cron_command(lines[1])
    assert argv[:3] == ["cd", "$GPY_JOBS_ROOT", "&&"]
    assert argv[-5:] == ["run", f"{HOSTILE}/Hostile.pull", "--engine", "spark", "--strict"]
    assert cron_command(lines[2])[-4] == "Good.pull"


def test_a_jobs_root_cron_cannot_hold_is_refused(tmp_path):
    root = tmp_path / 'a"b'
    job = job_file(root, "Good", "0 0 2 * * ?")
    result = run_gpy_here("schedule", str(job), "--crontab", "--jobs-root", str(root))
    assert result.returncode == 2 and result.stdout == ""
    assert "a crontab variable cannot hold a line break or a quote" in result.stderr


def test_a_hostile_job_path_makes_a_dag_file_that_compiles_and_names_it_exactly(tmp_path):
    hostile = job_file(tmp_path / HOSTILE, "Hostile", "0 0 2 * * ?")
    result = run_gpy("schedule", str(hostile), "--airflow", str(tmp_path / "dags"), "--gpy", shlex.join(["gpy", HOSTILE]),
                     cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    written = tmp_path / "dags" / "gpy_Hostile.py"
    source = written.read_text()
    code = compile(source, str(written), "exec")  # a SyntaxError before: the path's backslashes in the docstring
    tree = ast.parse(source)
    assert HOSTILE not in ast.get_docstring(tree)  # the path only as a repr'd argument, never pasted raw
    call = tree.body[-1].value
    assert call.func.id == "gpy_job_dag"
    args = {k.arg: ast.literal_eval(k.value) for k in call.keywords}
    assert args["job_file"] == f"{HOSTILE}/Hostile.pull" and shlex.split(args["gpy"]) == ["gpy", HOSTILE]
    assert code.co_consts  # compiled, and nothing ran: the docstring's quotes did not end it
    assert not list(tmp_path.rglob("PWNED"))


def test_two_jobs_that_map_to_one_dag_id_are_refused_naming_both(tmp_path):
    first = job_file(tmp_path / "a", "Orders Daily", "0 0 2 * * ?")
    second = job_file(tmp_path / "b", "Orders_Daily", "0 0 3 * * ?")
    together = run_gpy("schedule", str(first), str(second), "--airflow", str(tmp_path / "dags"))
    assert together.returncode == 2
    assert str(first) in together.stderr and str(second) in together.stderr and "gpy_Orders_Daily" in together.stderr
    assert not (tmp_path / "dags").exists() or not list((tmp_path / "dags").iterdir())

    # one at a time, into one DAGs folder: the second must not replace the first's DAG
    assert run_gpy("schedule", str(first), "--airflow", str(tmp_path / "dags")).returncode == 0
    dag = tmp_path / "dags" / "gpy_Orders_Daily.py"
    before = dag.read_text()
    again = run_gpy("schedule", str(second), "--airflow", str(tmp_path / "dags"))
    assert again.returncode == 2, again.stdout + again.stderr
    assert str(first) in again.stderr and str(second) in again.stderr and str(dag) in again.stderr
    assert dag.read_text() == before
    # the same job again rewrites its own DAG (a changed schedule)
    first.write_text(first.read_text().replace("0 0 2 * * ?", "0 0 4 * * ?"))
    rewritten = run_gpy("schedule", str(first), "--airflow", str(tmp_path / "dags"))
    assert rewritten.returncode == 0, rewritten.stderr
    assert "schedule='0 4 * * *'" in dag.read_text()


def test_a_file_in_the_dags_folder_not_written_by_gpy_schedule_is_never_replaced(tmp_path):
    job = job_file(tmp_path, "Mine", "0 0 2 * * ?")
    dags = tmp_path / "dags"
    dags.mkdir()
    (dags / "gpy_Mine.py").write_text("# someone's own DAG\n")
    result = run_gpy("schedule", str(job), "--airflow", str(dags))
    assert result.returncode == 2
    assert f"{dags / 'gpy_Mine.py'}" in result.stderr and "not written by gpy schedule" in result.stderr
    assert (dags / "gpy_Mine.py").read_text() == "# someone's own DAG\n"



def test_a_job_name_too_long_for_a_dag_is_refused_before_anything_is_written(tmp_path):
    short = job_file(tmp_path, "Short", "0 0 2 * * ?")
    long = job_file(tmp_path, "B" * 248, "0 0 2 * * ?")  # DAG id gpy_BBB…: 252 characters
    unnamed = tmp_path / f"{'c' * 250}.pull"  # no job.name: the DAG is named after the file
    unnamed.write_text("source.class=FileBasedSource\njob.schedule=0 0 3 * * ?\n")
    dags = tmp_path / "dags"
    result = run_gpy_here("schedule", str(short), str(long), str(unnamed), "--airflow", str(dags))
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"{long}: key 'job.name' makes a name too long: DAG id gpy_BBB" in result.stderr
    assert f"{unnamed}: its file name (job.name is not set) makes a name too long" in result.stderr
    assert "is 252 characters, and Airflow takes at most 250; give the job a job.name of at most 246" in result.stderr
    assert "2 of 3 jobs not scheduled; nothing written" in result.stderr
    assert not dags.exists()  # not even the short job's DAG, nor a temporary file

    longest = job_file(tmp_path / "ok", "B" * 246, "0 0 2 * * ?")
    written = run_gpy_here("schedule", str(longest), "--airflow", str(dags))
    assert written.returncode == 0, written.stderr
    [dag] = dags.iterdir()
    assert dag.name == f"gpy_{'B' * 246}.py" and dag_owner(dag) == str(longest)


def test_a_dag_file_that_cannot_be_written_leaves_every_dag_file_as_it_was(tmp_path):
    """The disk refuses the second job's DAG file (its size is over the process's file size limit, as a full
    disk would): the first job's DAG file, already there, is not replaced either, and no temporary file stays."""
    short = job_file(tmp_path, "Short", "0 0 2 * * ?")
    deep = job_file(tmp_path / ("d" * 200) / ("e" * 200) / ("f" * 200), "Deep", "0 0 3 * * ?")
    dags = tmp_path / "dags"
    assert run_gpy_here("schedule", str(short), "--airflow", str(dags), cwd=tmp_path).returncode == 0
    before = (dags / "gpy_Short.py").read_text()
    short.write_text(short.read_text().replace("0 0 2 * * ?", "0 0 4 * * ?"))

    def small_files() -> None:  # room for the short job's DAG, not for the deep one's (its path is 600 bytes longer)
        resource.setrlimit(resource.RLIMIT_FSIZE, (len(before.encode()) + 300, resource.RLIM_INFINITY))

    result = subprocess.run([sys.executable, "-m", "gobblin_py.cli", "schedule", str(short), str(deep),
                             "--airflow", str(dags)], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                            preexec_fn=small_files)
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"--airflow: cannot write {dags / 'gpy_Deep.py'}: File too large; no DAG file was written or replaced" \
        in result.stderr
    assert sorted(p.name for p in dags.iterdir()) == ["gpy_Short.py"]
    assert (dags / "gpy_Short.py").read_text() == before
