"""``gpy validate`` and ``gpy plugins``."""

from __future__ import annotations

import json
import sys

import click

from gobblin_py.cli.base import check_key_options, conf_options, key_check_options, main
from gobblin_py.sdk.errors import UsageError

# ------------------------------------------------------------------ validate


@main.command("validate")
@click.argument("paths", nargs=-1, type=click.Path())
@conf_options
@click.option("--json", "as_json", is_flag=True, help="Print each job's resolved properties as JSON.")
@key_check_options
@click.option("--explain", "explain_key", metavar="KEY", default=None,
              help="Explain a configuration key: who reads it, its type, default and meaning.")
def validate(paths: tuple[str, ...], conf_root: str | None, sysconfig: str | None, as_json: bool, strict: bool,
             lenient: bool, explain_key: str | None) -> None:
    """Check job files (or folders of them, recursively) as `gpy run` does before any work.

    Every plugin class must resolve and every key parse; reports per file and goes on; exit code 2 when any
    file is wrong. `--explain KEY` describes a key instead.
    """
    if explain_key is not None:
        from gobblin_py.cli.catalog import explain

        text = explain(explain_key)
        click.echo(text)
        sys.exit(0 if "no plugin of gpy declares it" not in text else 2)
    if not paths:
        raise UsageError("name job files or folders to validate (or --explain KEY)")
    from gobblin_py.cli.validate_jobs import validate_paths

    check_key_options(strict, lenient)
    reports = validate_paths(list(paths), conf_root, sysconfig, strict=strict, lenient=lenient)
    if as_json:
        click.echo(json.dumps([r.as_json() for r in reports], indent=2, ensure_ascii=False))
    else:
        for report in reports:
            click.echo(report.render())
        bad = sum(1 for r in reports if not r.ok)
        click.echo(f"{len(reports)} job files, {len(reports) - bad} valid, {bad} with problems")
    sys.exit(2 if any(not r.ok for r in reports) else 0)


# ------------------------------------------------------------------ plugins


@main.command("plugins")
@click.option("--json", "as_json", is_flag=True, help="Print JSON for machines.")
@click.option("--markdown", is_flag=True, help="Print every key table as Markdown, as the docs' Configuration keys pages give them.")
def plugins_command(as_json: bool, markdown: bool) -> None:
    """Every plugin gpy has, with the names a job may use for it (Gobblin's included) and its keys."""
    from gobblin_py.cli import catalog

    if as_json:
        click.echo(json.dumps(catalog.json_listing(), indent=2, ensure_ascii=False))
    elif markdown:
        click.echo(catalog.markdown())
    else:
        click.echo(catalog.text_listing())


