"""OpenLineage events checked against OpenLineage's JSON schema (spec/OpenLineage.json and the facets' schemas
from the OpenLineage repository, kept in openlineage_spec/): the event, and each facet whose ``_schemaURL`` names
one of the facet schemas kept here."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

SPEC = Path(__file__).parent / "openlineage_spec"


@cache
def _registry() -> Any:
    from referencing import Registry, Resource

    resources = []
    for path in sorted(SPEC.glob("*.json")):
        schema = json.loads(path.read_text())
        resources.append((schema["$id"], Resource.from_contents(schema)))
    return Registry().with_resources(resources)


def _validate(instance: Any, ref: str) -> None:
    from jsonschema import Draft202012Validator

    validator = Draft202012Validator({"$ref": ref}, registry=_registry(),
                                     format_checker=Draft202012Validator.FORMAT_CHECKER)
    validator.validate(instance)


def facets_of(event: dict) -> list[dict]:
    """Every facet of the event: run, job, datasets' and their input/output facets."""
    found = list(event["run"].get("facets", {}).values()) + list(event["job"].get("facets", {}).values())
    for dataset in event.get("inputs", []) + event.get("outputs", []):
        for key in ("facets", "inputFacets", "outputFacets"):
            found.extend(dataset.get(key, {}).values())
    return found


def validate_event(event: dict) -> list[str]:
    """Validate ``event`` (raises jsonschema's ValidationError); returns the facet schemas it was checked against."""
    core = json.loads((SPEC / "OpenLineage.json").read_text())["$id"]
    _validate(event, core)
    checked = []
    known = set(_registry().keys())  # the URIs of the schemas kept here
    for facet in facets_of(event):
        url = facet["_schemaURL"]
        if url.split("#")[0] in known:
            _validate(facet, url)
            checked.append(url.split("#")[0].rsplit("/", 1)[-1])
    return checked
