"""Old module paths keep working for one release, with a warning naming the new path; gpy's own modules use
only the new ones, and the plugin sdk loads nothing of the runtime or the job-file loader."""

from __future__ import annotations

import importlib
import subprocess
import sys
import warnings

import pytest

from gobblin_py import _moved


def _python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-W", "error::DeprecationWarning", "-c", code], capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize("old, new, name", [
    ("gobblin_py.api", "gobblin_py.sdk.contracts", "Source"),
    ("gobblin_py.errors", "gobblin_py.sdk.errors", "UsageError"),
    ("gobblin_py.config.settings", "gobblin_py.sdk.settings", "Settings"),
    ("gobblin_py.state.watermarks", "gobblin_py.sdk.watermarks", "LongWatermark"),
    ("gobblin_py.fs", "gobblin_py.io.fs", "open_fs"),
    ("gobblin_py.state.store", "gobblin_py.store.store", "FsDatasetStateStore"),
    ("gobblin_py.config.loader", "gobblin_py.jobconf.loader", "load_job"),
    ("gobblin_py.sources.filebased", "gobblin_py.connectors.files.filebased", "FileBasedSource"),
    ("gobblin_py.writers.builder", "gobblin_py.connectors.files.builder", "FsDataWriterBuilder"),
    ("gobblin_py.publishers.base", "gobblin_py.connectors.files.publisher", "BaseDataPublisher"),
    ("gobblin_py.copy.source", "gobblin_py.connectors.copy.source", "CopySource"),
    ("gobblin_py.converters.cast", "gobblin_py.transforms.converters.cast", "TypeCastConverter"),
])
def test_an_old_path_warns_and_is_the_new_module(old, new, name):
    sys.modules.pop(old, None)  # only the old name: a second copy of the new module would split its classes
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = importlib.import_module(old)
    assert module is importlib.import_module(new)
    assert getattr(module, name) is getattr(importlib.import_module(new), name)
    assert any(issubclass(w.category, DeprecationWarning) and new in str(w.message) for w in caught)


def test_every_old_path_still_imports():
    for old, new in _moved.MOVED.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            module = importlib.import_module(old)
        if new is not None:
            assert module is importlib.import_module(new), old


def test_a_name_not_moved_is_not_answered():
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("gobblin_py.no_such_module")


def test_the_package_imports_no_old_path():
    done = _python("import importlib, pkgutil, gobblin_py\n"
                   "for m in pkgutil.walk_packages(gobblin_py.__path__, 'gobblin_py.'):\n"
                   "    if not m.name.startswith('gobblin_py.examples'):\n"
                   "        importlib.import_module(m.name)\n")
    assert done.returncode == 0, done.stderr[-2000:]


def test_the_sdk_loads_no_runtime_loader_or_hocon():
    done = _python("import sys, gobblin_py.sdk, gobblin_py.sdk.contracts, gobblin_py.sdk.settings, "
                   "gobblin_py.sdk.commit, gobblin_py.sdk.states, gobblin_py.sdk.plugins\n"
                   "print('\\n'.join(m for m in sys.modules if m.startswith('gobblin_py')))")
    assert done.returncode == 0, done.stderr[-2000:]
    loaded = done.stdout.split()
    assert loaded and all(m in ("gobblin_py", "gobblin_py._moved") or m.startswith("gobblin_py.sdk")
                          for m in loaded), loaded


def test_a_job_naming_a_class_by_its_old_path_still_runs_it():
    from gobblin_py.connectors.files.filebased import FileBasedSource
    from gobblin_py.sdk.plugins import resolve_class

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        assert resolve_class("gobblin_py.sources.filebased.FileBasedSource", "source.class") is FileBasedSource
        assert resolve_class("gobblin_py.quality.row.RequiredFieldsPolicy").__module__ == \
            "gobblin_py.transforms.quality.row"


def test_a_split_package_keeps_its_old_children_only():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        importlib.import_module("gobblin_py.sources")
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module("gobblin_py.sources.no_such_module")


def test_the_commit_module_that_became_a_package_keeps_its_names_with_a_warning():
    import gobblin_py.runtime.commit as old
    from gobblin_py.runtime.commit import datasets

    with pytest.warns(DeprecationWarning, match="runtime.commit.datasets.commit_dataset"):
        assert old.commit_dataset is datasets.commit_dataset
    with pytest.raises(AttributeError):
        old.no_such_name  # noqa: B018
