"""`gpy validate` over real Gobblin job files and over our own jobs."""

import json

import pytest

from tests.support.cli import run_gpy_here
from tests.support.environment import missing
from tests.support.paths import CORPUS, REPO


@pytest.fixture(scope="module")
def corpus_reports(tmp_path_factory):
    if not CORPUS.is_dir():
        missing(f"the Gobblin job corpus is not beside the repository ({CORPUS})")
    # as Gobblin's launcher scripts do, the deployment names its work folder (several corpus jobs use it)
    work = tmp_path_factory.mktemp("gobblin-work")
    result = run_gpy_here("validate", str(CORPUS), "--json", "--sysconfig", str(REPO / "conf" / "gobblin.properties"),
                     env={"GOBBLIN_WORK_DIR": str(work)})
    assert result.returncode == 2  # some real Gobblin files name classes gpy does not have
    return {r["path"].split("gobblin-jobs/", 1)[1]: r for r in json.loads(result.stdout)}


def test_every_corpus_job_loads_or_fails_naming_the_problem(corpus_reports):
    assert len(corpus_reports) == 38  # every .pull file (the 4 .template files are not jobs)
    for path, report in corpus_reports.items():
        if report["error"]:
            assert path.endswith("copy.pull"), (path, report["error"])
        else:
            assert report["properties"]["job.config.path"].endswith(path)
        assert report["unresolved"] == [], path  # every Gobblin name is recognised as such
        for item in report["unsupported"]:
            key, _, name = item.partition("=")
            assert key and name.startswith(("org.apache.gobblin.", "gobblin.", "org.apache.kafka.")), item


def test_copy_pull_warns_of_its_line_without_separator(corpus_reports):
    report = corpus_reports["gobblin-test-harness/resource/dataManagement/copy/job-props/copy.pull"]
    assert not report["error"]
    assert any("line 39 of copy.pull has no key/value separator" in w for w in report["warnings"]), report["warnings"]


def test_unported_classes_are_listed_per_key(corpus_reports):
    report = corpus_reports["gobblin-example/src/main/resources/google-web-master.pull"]
    assert report["unsupported"] == [
        "source.class=org.apache.gobblin.ingestion.google.webmaster.GoogleWebMasterSourceDaily",
        "writer.partitioner.class=org.apache.gobblin.ingestion.google.webmaster.GoogleWebmasterDayPartitioner",
    ]  # its converters and writer have built-ins
    assert [u["nearest"] for u in report["unported"]] == [None, "TimeBasedWriterPartitioner"]


def test_a_job_file_without_a_source_is_not_valid(corpus_reports):
    report = corpus_reports["gobblin-core/src/main/resources/mysql/table_append.pull"]
    assert any("key 'source.class': is not set" in p for p in report["problems"]), report["problems"]


def test_our_jobs_validate_and_json_shows_resolved_properties():
    result = run_gpy_here("validate", str(REPO / "jobs"), "--json")
    assert result.returncode == 0, result.stdout + result.stderr
    reports = json.loads(result.stdout)
    quickstart = next(r for r in reports if r["path"].endswith("quickstart.pull"))
    props = quickstart["properties"]
    assert props["converter.classes"] == (
        "gobblin_py.transforms.converters.projection.FieldProjectionConverter,gobblin_py.transforms.converters.cast.TypeCastConverter"
    )
    assert props["converter.cast.fields"] == "order_id:int64,customer:int32,ordered_at:timestamp[ms,UTC]"


COMPLETE = ("source.filebased.data.directory=data\ntask.data.root.dir=work\ndata.publisher.final.dir=out\n"
            "state.store.dir=state\n")


def test_validate_goes_on_past_bad_files(tmp_path):
    (tmp_path / "a.pull").write_text("job.name=A\nsource.class=gobblin_py.connectors.files.filebased.FileBasedSource\n" + COMPLETE)
    (tmp_path / "b.pull").write_text("job.name=B\nsource.class=no.such.Source\n")
    (tmp_path / "c.pull").write_text("job.name=C\n=a-line-with-an-empty-key\n")
    result = run_gpy_here("validate", str(tmp_path))
    assert result.returncode == 2
    assert "ok   " in result.stdout and "a.pull" in result.stdout
    assert "source.class=no.such.Source: no such plugin class" in result.stdout
    assert "c.pull:2" in result.stdout
    assert "3 job files, 1 valid, 2 with problems" in result.stdout


def test_json_masks_secrets(tmp_path):
    (tmp_path / "db.pull").write_text(
        "job.name=Db\nsource.class=gobblin_py.connectors.files.filebased.FileBasedSource\n"
        "source.conn.password=hunter2\nsource.conn.username=app\napi.token=abc\n" + COMPLETE
    )
    result = run_gpy_here("validate", str(tmp_path / "db.pull"), "--json")
    assert result.returncode == 0, result.stdout
    props = json.loads(result.stdout)[0]["properties"]
    assert props["source.conn.password"] == "******" and props["api.token"] == "******"
    assert props["source.conn.username"] == "app"
    assert "hunter2" not in result.stdout


def test_unported_classes_come_with_the_nearest_built_in_and_a_hint(tmp_path):
    (tmp_path / "a.pull").write_text(
        "job.name=A\nsource.class=org.apache.gobblin.source.extractor.filebased.TextFileBasedSource\n"
        "converter.classes=gobblin.converter.avro.AvroFieldRetrieverConverter\n"
        "writer.builder.class=org.apache.gobblin.writer.NoSuchBuilder\n")
    result = run_gpy_here("validate", str(tmp_path / "a.pull"))
    assert result.returncode == 2
    lines = result.stdout.splitlines()
    text_source = lines.index("     unsupported: source.class=org.apache.gobblin.source.extractor.filebased.TextFileBasedSource")
    assert lines[text_source + 1].strip().startswith("nearest gpy built-in: FileBasedSource; the file source reads CSV")
    assert "nearest gpy built-in: FieldProjectionConverter; keep fields with converter.projection.fields" in result.stdout
    assert "nearest gpy built-in: none; no gpy equivalent yet" in result.stdout
    report = json.loads(run_gpy_here("validate", str(tmp_path / "a.pull"), "--json").stdout)[0]
    assert report["unported"][0] == {"key": "converter.classes",
                                     "class": "gobblin.converter.avro.AvroFieldRetrieverConverter",
                                     "nearest": "FieldProjectionConverter",
                                     "hint": "keep fields with converter.projection.fields"}
