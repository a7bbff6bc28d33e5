"""The docs' Kubernetes recipe, checked where no container engine or cluster runs: the image's Dockerfile
(deploy/kubernetes/Dockerfile) copies files that exist and installs the extras `gpy pack` ships; the job keys
validate and agree with the driver's manifest (deploy/kubernetes/gpy-driver.yaml) on the image, namespace,
ports and the variables that carry the pod's IP and name. `docker build` and `kubectl apply` are not run."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import yaml

from tests.support.cli import run_gpy_here
from tests.support.readme_recipes import job_with, properties

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy" / "kubernetes"


def instructions(dockerfile: Path) -> list[tuple[str, str]]:
    """The Dockerfile's instructions (name, arguments), continuation lines joined, comments left out."""
    joined = re.sub(r"\\\n", " ", "\n".join(line for line in dockerfile.read_text().splitlines()
                                            if not line.lstrip().startswith("#")))
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1]) for line in joined.splitlines() if line.strip()]


def test_the_image_installs_gpy_with_the_extras_the_pack_ships_from_files_that_exist():
    from gobblin_py.runtime.engines.pack_contents import installed, own_extras

    steps = instructions(DEPLOY / "Dockerfile")
    for name, args in steps:
        if name == "COPY":
            *sources, _ = shlex.split(args)
            for source in sources:
                assert (ROOT / source).exists(), f"the Dockerfile copies {source}, which the repository lacks"
    pip = [shlex.split(args) for name, args in steps if name == "RUN" and "pip install" in args]
    assert len(pip) == 1, pip
    local = [word for word in pip[0] if word.startswith(".[")]
    assert len(local) == 1, pip[0]
    extras = set(local[0][2:].rstrip("]").split(","))
    # every extra an executor may need (what `gpy pack` ships for any job), and the driver's metrics
    assert own_extras(installed()) | {"metrics"} == extras
    # PySpark as the base image's Spark: the version the FROM line names
    assert "pyspark==${SPARK_VERSION}" in pip[0]
    assert any(name == "FROM" and "${SPARK_VERSION}" in args for name, args in steps)


def test_the_job_keys_validate_and_match_the_driver_manifest(tmp_path):
    keys = properties("kubernetes")
    documents = {doc["kind"]: doc for doc in yaml.safe_load_all((DEPLOY / "gpy-driver.yaml").read_text())}
    job = documents["Job"]
    pod = job["spec"]["template"]["spec"]
    driver = pod["containers"][0]
    assert keys["spark.kubernetes.container.image"] == driver["image"]
    assert keys["spark.kubernetes.namespace"] == job["metadata"]["namespace"] == documents["Role"]["metadata"]["namespace"]
    assert pod["serviceAccountName"] == documents["ServiceAccount"]["metadata"]["name"]
    assert {int(keys["spark.driver.port"]), int(keys["spark.blockManager.port"])} == \
        {port["containerPort"] for port in driver["ports"]}
    # the driver is reached at its pod's IP, and owns its executor pods by its pod's name
    fields = {env["name"]: env["valueFrom"]["fieldRef"]["fieldPath"] for env in driver["env"]}
    assert keys["spark.driver.host"] == "${env:POD_IP}" and fields["POD_IP"] == "status.podIP"
    assert keys["spark.kubernetes.driver.pod.name"] == "${env:POD_NAME}" and fields["POD_NAME"] == "metadata.name"
    assert keys["spark.driver.bindAddress"] == "0.0.0.0"
    assert keys["gpy.spark.archive"] == "none"  # the image has gpy: nothing to ship
    # the job file the Job runs is where the ConfigMap is mounted
    mount = driver["volumeMounts"][0]["mountPath"]
    assert driver["args"][:2] == ["gpy", "run"] and driver["args"][2].startswith(mount + "/")

    job_file = job_with(keys, tmp_path)
    result = run_gpy_here("validate", "--strict", str(job_file), env={"POD_IP": "10.1.2.3", "POD_NAME": "gpy-orders-x"})
    assert result.returncode == 0, result.stdout + result.stderr
