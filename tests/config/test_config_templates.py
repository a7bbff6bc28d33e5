"""Job templates: job.template, gobblin.template.uri(s), inheritance, required attributes (spec §1.12)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gobblin_py.jobconf import ConfigError, load_job
from gobblin_py.jobconf import job_templates as templates_module

# gobblin-runtime/src/test/resources/templates/distcp-ng.template (license header omitted)
DISTCP_NG = """job.name=GobblinDatabaseCopyTest
job.description=Gobblin job for copy
type=hadoopJava
job.class=org.apache.gobblin.azkaban.AzkabanJobLauncher
extract.namespace=org.apache.gobblin.copy
data.publisher.type=org.apache.gobblin.data.management.copy.publisher.CopyDataPublisher
source.class=org.apache.gobblin.data.management.copy.CopySource
writer.builder.class=org.apache.gobblin.data.management.copy.writer.FileAwareInputStreamDataWriterBuilder
converter.classes=org.apache.gobblin.converter.IdentityConverter
gobblin.dataset.profile.class=org.apache.gobblin.data.management.copy.hive.HiveDatasetFinder
task.maxretries=0
workunit.retry.enabled=false
distcp.persist.dir=/tmp/distcp-persist-dir
gobblin.template.required_attributes="data.publisher.final.dir,gobblin.dataset.pattern"
"""

WIKIPEDIA = """gobblin.template.required_attributes="titles"
job.name=PullFromWikipedia
source.page.titles=${titles}
wikipedia.api.rooturl="https://en.wikipedia.org/w/api.php"
"""


def load(root: Path, name: str, **kwargs):
    kwargs.setdefault("env", {})
    return load_job(root / name, conf_root=root, **kwargs)


def test_scheduler_utils_template_load(tmp_path: Path, write_files):
    write_files(tmp_path, {
        "templates/distcp-ng.template": DISTCP_NG,
        "templated.pull": "job.template=templates/distcp-ng.template\n"
        "data.publisher.final.dir=some_dir\ngobblin.dataset.pattern=pattern\n",
    })
    job = load(tmp_path, "templated.pull")
    assert job["gobblin.dataset.pattern"] == "pattern"
    assert job["job.name"] == "GobblinDatabaseCopyTest"
    assert job["data.publisher.final.dir"] == "some_dir"
    assert job["task.maxretries"] == "0"
    # the resolved config keeps the template keys as ordinary keys
    assert job["job.template"] == "templates/distcp-ng.template"
    assert job["gobblin.template.required_attributes"] == "data.publisher.final.dir,gobblin.dataset.pattern"
    assert list(job)[:3] == ["job.template", "data.publisher.final.dir", "gobblin.dataset.pattern"]


def test_required_attribute_is_enforced(tmp_path: Path, write_files):
    write_files(tmp_path, {
        "templates/distcp-ng.template": DISTCP_NG,
        "templated.pull": "job.template=resource:///templates/distcp-ng.template\ndata.publisher.final.dir=d\n",
    })
    with pytest.raises(ConfigError) as info:
        load(tmp_path, "templated.pull")
    err = info.value
    assert err.key == "gobblin.dataset.pattern" and err.path == str(tmp_path / "templated.pull")
    assert "resource:///templates/distcp-ng.template" in str(err) and "required attribute" in str(err)


def test_required_attribute_may_come_from_globals_or_sys(tmp_path: Path, write_files):
    write_files(tmp_path, {
        "wikipedia.template": WIKIPEDIA,
        "root.properties": "titles=LinkedIn\n",
        "job.pull": "job.template=wikipedia.template\n",
    })
    assert load(tmp_path, "job.pull")["source.page.titles"] == "LinkedIn"


def test_template_substitutions_see_user_values(tmp_path: Path, write_files):
    write_files(tmp_path, {
        "wikipedia.template": WIKIPEDIA,
        "job.pull": "job.template=wikipedia.template\ntitles=NASA,LinkedIn\n",
    })
    job = load(tmp_path, "job.pull")
    assert job["source.page.titles"] == "NASA,LinkedIn" and job["job.name"] == "PullFromWikipedia"


def test_unresolved_template_substitution_names_the_template_line(tmp_path: Path, write_files):
    write_files(tmp_path, {
        "t.template": "a=1\nb=${undefined.thing}\n",
        "job.pull": "job.template=t.template\n",
    })
    with pytest.raises(ConfigError) as info:
        load(tmp_path, "job.pull")
    err = info.value
    assert (err.path, err.line, err.key) == (str(tmp_path / "t.template"), 2, "undefined.thing")


def test_precedence_user_over_template_over_super_templates(tmp_path: Path, write_files):
    write_files(tmp_path, {
        "templates/base1.template": "k=base1\nshared=base1\nonly1=1\n",
        "templates/base2.template": "k=base2\nshared=base2\nonly2=2\n",
        "templates/child.template": 'gobblin.template.inherit="templates/base1.template,templates/base2.template"\n'
        "k=child\nc=${k}\n",
        "job.pull": "job.template=templates/child.template\nuser=1\n",
        "override.pull": "job.template=templates/child.template\nk=user\n",
    })
    job = load(tmp_path, "job.pull")
    assert (job["k"], job["shared"], job["only1"], job["only2"], job["user"], job["c"]) == (
        "child", "base2", "1", "2", "1", "child",
    )
    override = load(tmp_path, "override.pull")
    assert (override["k"], override["c"]) == ("user", "user")


def test_inherit_as_hocon_list(tmp_path: Path, write_files):
    write_files(tmp_path, {
        "a.template": 'gobblin.template.inherit=["b.template"]\na=1\nwho=a\n',
        "b.template": "b=2\nwho=b\n",
        "job.pull": "job.template=a.template\n",
    })
    job = load(tmp_path, "job.pull")
    assert (job["a"], job["b"], job["who"]) == ("1", "2", "a")


def test_an_inheritance_loop_is_refused_naming_the_chain(tmp_path: Path, write_files):
    write_files(tmp_path, {
        "a.template": 'gobblin.template.inherit=["b.template"]\na=1\n',
        "b.template": 'gobblin.template.inherit="a.template"\nb=2\n',
        "c.template": 'gobblin.template.inherit="c.template"\nc=3\n',
        "loop.pull": "job.template=a.template\n",
        "self.pull": "gobblin.template.uri=c.template\n",
    })
    with pytest.raises(ConfigError) as info:
        load(tmp_path, "loop.pull")
    a, b = str(tmp_path / "a.template"), str(tmp_path / "b.template")
    assert f"template inheritance loop: {a} -> {b} -> {a}" in str(info.value)
    with pytest.raises(ConfigError, match="template inheritance loop: .*c.template -> .*c.template"):
        load(tmp_path, "self.pull")


def test_a_template_inherited_twice_without_a_loop_is_used_once(tmp_path: Path, write_files):
    write_files(tmp_path, {
        "base.template": "base=1\nwho=base\n",
        "left.template": 'gobblin.template.inherit="base.template"\nleft=1\n',
        "top.template": 'gobblin.template.inherit="left.template,base.template"\ntop=1\n',
        "job.pull": "job.template=top.template\n",
    })
    job = load(tmp_path, "job.pull")
    assert (job["base"], job["left"], job["top"], job["who"]) == ("1", "1", "1", "base")


def test_required_attributes_are_collected_transitively_minus_defined_ones(tmp_path: Path, write_files):
    write_files(tmp_path, {
        "base.template": 'gobblin.template.required_attributes="need.base,given.by.child"\n',
        "child.template": 'gobblin.template.inherit="base.template"\n'
        'gobblin.template.required_attributes="need.child"\ngiven.by.child=yes\n',
        "ok.pull": "job.template=child.template\nneed.base=1\nneed.child=2\n",
        "missing.pull": "job.template=child.template\nneed.child=2\n",
        "object.pull": "job.template=child.template\nneed.child.x=2\nneed.base=1\n",
    })
    assert load(tmp_path, "ok.pull")["given.by.child"] == "yes"
    assert load(tmp_path, "object.pull")["need.child.x"] == "2"  # a sub-key counts (typesafe hasPath)
    with pytest.raises(ConfigError) as info:
        load(tmp_path, "missing.pull")
    assert info.value.key == "need.base"


def test_template_found_in_conf_root(tmp_path: Path, write_files):
    write_files(tmp_path, {
        "templates/t.template": "from.template=1\n",
        "jobs/team/job.pull": "job.template=templates/t.template\n",
    })
    job = load_job(tmp_path / "jobs" / "team" / "job.pull", conf_root=tmp_path, env={})
    assert job["from.template"] == "1"


def test_packaged_template_directory(tmp_path: Path, write_files, monkeypatch):
    packaged = tmp_path / "pkg" / "templates"
    write_files(packaged, {"hello.template": "job.name=HelloWorld\n"})
    write_files(tmp_path, {"jobs/a.pull": "job.template=templates/hello.template\n", "jobs/b.pull": "job.template=hello.template\n"})
    monkeypatch.setattr(templates_module, "PACKAGED_TEMPLATE_DIR", packaged)
    assert load(tmp_path / "jobs", "a.pull")["job.name"] == "HelloWorld"
    assert load(tmp_path / "jobs", "b.pull")["job.name"] == "HelloWorld"


def test_missing_template_and_class_templates_are_errors(tmp_path: Path, write_files):
    write_files(tmp_path, {
        "missing.pull": "job.template=templates/nope.template\n",
        "class.pull": "job.template=class://org.apache.gobblin.SomeTemplate\n",
    })
    with pytest.raises(ConfigError) as info:
        load(tmp_path, "missing.pull")
    assert info.value.key == "job.template" and "nope.template" in str(info.value)
    with pytest.raises(ConfigError) as info:
        load(tmp_path, "class.pull")
    assert info.value.key == "job.template" and "not supported" in str(info.value)


def test_gobblin_template_uri(tmp_path: Path, write_files):
    write_files(tmp_path, {
        "hello.template": "job.name=HelloWorld\njob.group=samples\nwork=${gobblin.workDir}/out\n",
        "job.pull": "gobblin.template.uri=hello.template\njob.group=mine\ngobblin.workDir=/w\n",
    })
    job = load(tmp_path, "job.pull")
    assert (job["job.name"], job["job.group"], job["work"]) == ("HelloWorld", "mine", "/w/out")


def test_gobblin_template_uris_later_templates_win(tmp_path: Path, write_files):
    write_files(tmp_path, {
        "one.template": "k=one\nonly.one=1\n",
        "two.template": "k=two\nonly.two=2\n",
        "job.pull": "gobblin.template.uris=one.template, two.template\n",
    })
    job = load(tmp_path, "job.pull")
    assert (job["k"], job["only.one"], job["only.two"]) == ("two", "1", "2")


def test_job_template_then_gobblin_template_uri(tmp_path: Path, write_files):
    write_files(tmp_path, {
        "first.template": "gobblin.template.uri=second.template\nfrom.first=1\n",
        "second.template": "from.second=2\nfrom.first=overridden\n",
        "job.pull": "job.template=first.template\n",
    })
    job = load(tmp_path, "job.pull")
    assert (job["from.first"], job["from.second"]) == ("1", "2")


def test_secure_template_keeps_only_overridable_user_keys(tmp_path: Path, write_files):
    write_files(tmp_path, {
        "secure.template": 'gobblin.template.isSecure=true\n'
        'gobblin.template.secure.overridableProperties="a, c"\na=template\nb=template\n',
        "job.pull": "job.template=secure.template\na=user\nb=user\nc=user\n",
    })
    job = load(tmp_path, "job.pull")
    assert (job["a"], job["b"], job["c"]) == ("user", "template", "user")
    assert "job.template" not in job  # filtered out like every non-overridable user key


def test_hocon_job_with_template(tmp_path: Path, write_files):
    write_files(tmp_path, {
        "wikipedia.template": WIKIPEDIA,
        "job.conf": 'job.template = "wikipedia.template"\ntitles = "A,B"\n',
    })
    assert load(tmp_path, "job.conf")["source.page.titles"] == "A,B"
