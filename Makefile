# Two commands for a fresh machine: `make run` and `make test` (`make bench` for the benchmarks). They create
# .venv and install gobblin_py with its dev, kafka, sql-fast and metrics extras when the environment is missing or older
# than pyproject.toml.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
GPY := $(VENV)/bin/gpy
STAMP := $(VENV)/.installed
WORK := work

.PHONY: run test install clean docs docs-site bench fuzz

install: $(STAMP)

# The install goes through uv (resolves and unpacks in parallel, byte-compiles on both cores: about half pip's time
# here); where uv cannot be installed or cannot reach the index, pip installs the same set.
EXTRAS := .[dev,kafka,sql-fast,metrics]
$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check 'uv>=0.9' && \
	  $(PY) -m uv pip install --quiet --python $(PY) --compile-bytecode -e '$(EXTRAS)' || \
	  $(PY) -m pip install --quiet --disable-pip-version-check -e '$(EXTRAS)'
	@$(PY) -m compileall -q gobblin_py >/dev/null
	@touch $(STAMP)

# The quickstart job, twice on embedded Spark: the first run pulls the sample orders, the second pulls nothing.
# Then the Kafka example: a local broker, 10,000 sample events, jobs/kafka_to_parquet.pull twice.
run: $(STAMP)
	@rm -rf $(WORK)/quickstart
	$(GPY) run jobs/quickstart.pull
	$(GPY) run jobs/quickstart.pull
	$(GPY) state show jobs/quickstart.pull
	$(GPY) history jobs/quickstart.pull
	@rm -rf $(WORK)/kafka_to_parquet $(WORK)/kafka-broker
	$(PY) scripts/kafka_sample.py demo

# Lint first (a second), then the suite in TEST_WORKERS pytest-xdist workers (the tests that use a server stay in
# that server's worker: tests/server_groups.py), property tests with the Hypothesis profile `ci` (the same examples
# every run: tests/conftest.py) and the crash campaigns at their CI size (tests/crash/sizes.py); the tests marked
# `soak` are left to `make soak`. mypy checks the package while the suite runs, its report printed after the
# suite's (the workers leave a core idle much of the time they wait on servers and subprocesses); either failing
# fails the target. TEST_WORKERS=0 runs the suite in this process.
TEST_WORKERS ?= 2
SUITE := $(PY) -m pytest -n $(TEST_WORKERS) --dist loadgroup --hypothesis-profile=ci -m "not soak"
test: $(STAMP)
	$(PY) -m ruff check gobblin_py
	@$(PY) -m mypy > $(VENV)/mypy.log 2>&1 & types=$$!; \
	  echo "$(PY) -m mypy (beside the suite)"; echo '$(SUITE)'; \
	  $(SUITE); suite=$$?; \
	  wait $$types; typed=$$?; echo "mypy:"; cat $(VENV)/mypy.log; \
	  test $$suite -eq 0 -a $$typed -eq 0

# Before a release: the whole suite with the crash campaigns at their full size (GPY_SOAK=1: more kills, more
# instants in each phase) and ten times the property tests' examples, new ones each run (profile `soak`).
.PHONY: soak
soak: $(STAMP)
	GPY_SOAK=1 $(PY) -m pytest -n $(TEST_WORKERS) --dist loadgroup --hypothesis-profile=soak

# Every benchmark against the peers and the practical limit (under 20 minutes; the first time also installs
# the peers into their own environments under ~/.cache/gobblin_py): prints the table, writes bench/results.md.
# BENCH_ARGS=--quick for a smoke check at small sizes, e.g. BENCH_ARGS="--quick --only files".
bench: $(STAMP)
	$(PY) scripts/bench/run.py $(BENCH_ARGS)

# Every reader (state store, job files, commit log, run history, Kafka messages) fuzzed for 10^6 inputs each
# (about an hour on a loaded 2-core machine, the Kafka target half of it; the suite runs each for 3 s). FUZZ_ARGS="--inputs 100000 --only hocon" for less.
fuzz: $(STAMP)
	$(PY) -m tests.fuzz $(FUZZ_ARGS)

# The docs site's reference pages (docs/reference/: keys, command line, SDK), regenerated from the code (a test
# fails while one is stale), then the site built.
docs: $(STAMP)
	$(PY) scripts/update_docs_reference.py
	$(MAKE) docs-site

# The docs site (mkdocs.yml, docs/) built into site/ with --strict: a broken link or anchor, or a page missing from
# the navigation, fails it. `$(PY) -m http.server -b 127.0.0.1 -d site` serves it at http://127.0.0.1:8000.
docs-site: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict --site-dir site

clean:
	rm -rf $(VENV) $(WORK) .pytest_cache .hypothesis site
