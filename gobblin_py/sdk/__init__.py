"""Everything a plugin may import: the contracts (Source, Extractor, Converter, ForkOperator, quality policies,
DataWriter and its builder, DataPublisher), settings declarations and scopes, commit steps and delivery
semantics, errors, cancellation, logging, and the state types a plugin sees.

The sdk imports nothing from the runtime, the connectors, the CLI or the job-file loader: ``import
gobblin_py.sdk`` is cheap. Its modules::

    gobblin_py.sdk.contracts   the plugin base classes          gobblin_py.sdk.settings    Settings, setting, Scope
    gobblin_py.sdk.commit      CommitStep, DeliverySettings     gobblin_py.sdk.errors      UsageError, ...
    gobblin_py.sdk.states      WorkUnit, WorkUnitState, ...     gobblin_py.sdk.watermarks  LongWatermark, ...
    gobblin_py.sdk.run_states  SourceState, DatasetState        gobblin_py.sdk.branches    branch_key, fork_key
    gobblin_py.sdk.interrupts  cancellation                     gobblin_py.sdk.logs        get_logger
    gobblin_py.sdk.plugins     resolving plugin names           gobblin_py.sdk.job_settings  the job's own keys
"""
