"""Plugin resolution: Gobblin names, dotted paths, entry points, helpful failures."""

import sys

import pytest

from gobblin_py.sdk import plugins
from gobblin_py.sdk.errors import UsageError
from gobblin_py.sdk.plugins import PluginError, check_plugins, plugin_refs, resolve_class
from gobblin_py.connectors.files.publisher import BaseDataPublisher


@pytest.mark.parametrize("name", [
    "org.apache.gobblin.publisher.BaseDataPublisher", "gobblin.publisher.BaseDataPublisher",
    "gobblin_py.connectors.files.publisher.BaseDataPublisher", "gobblin_py.connectors.files.publisher:BaseDataPublisher",
])
def test_gobblin_names_and_dotted_paths_resolve(name):
    assert resolve_class(name, "data.publisher.type") is BaseDataPublisher


def test_unported_gobblin_class_is_named_as_such():
    with pytest.raises(PluginError) as err:
        resolve_class("org.apache.gobblin.zuora.ZuoraSource", "source.class")
    assert err.value.unsupported
    assert "source.class=org.apache.gobblin.zuora.ZuoraSource: Gobblin class with no gobblin_py equivalent" in str(err.value)


def test_unknown_name_lists_what_was_tried_and_closest_matches():
    with pytest.raises(PluginError) as err:
        resolve_class("gobblin_py.connectors.files.filebased.FileBasedSorce", "source.class")
    message = str(err.value)
    assert "tried" in message and "entry points of group gobblin_py.plugins" in message and "dotted path" in message
    assert "gobblin_py.connectors.files.filebased.FileBasedSource" in err.value.suggestions
    assert err.value.exit_code == 2


def test_non_class_is_refused():
    with pytest.raises(UsageError, match="not a class"):
        resolve_class("os.path.join")


def test_entry_point_plugins(tmp_path, monkeypatch):
    dist = tmp_path / "myplug-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: myplug\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[gobblin_py.plugins]\nshop-orders = myplug_mod:OrdersSource\n")
    (tmp_path / "myplug_mod.py").write_text("class OrdersSource:\n    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    plugins._entry_points.cache_clear()
    try:
        cls = resolve_class("shop-orders", "source.class")
        assert cls.__name__ == "OrdersSource" and cls.__module__ == "myplug_mod"
    finally:
        plugins._entry_points.cache_clear()
        sys.modules.pop("myplug_mod", None)


def test_plugin_refs_cover_lists_and_branch_suffixes():
    props = {
        "source.class": "a.B",
        "converter.classes": "c.D, e.F",
        "converter.classes.0": "g.H",
        "writer.builder.class.1": "i.J",
        "qualitychecker.task.policies": "k.L",
        "unrelated.key": "x.Y",
    }
    refs = {(r.key, r.name) for r in plugin_refs(props)}
    assert refs == {("source.class", "a.B"), ("converter.classes", "c.D"), ("converter.classes", "e.F"),
                    ("converter.classes.0", "g.H"), ("writer.builder.class.1", "i.J"),
                    ("qualitychecker.task.policies", "k.L")}
    problems = check_plugins({"source.class": "gobblin_py.connectors.files.filebased.FileBasedSource", "converter.classes": "nope.X"})
    assert len(problems) == 1 and "converter.classes=nope.X" in str(problems[0])
