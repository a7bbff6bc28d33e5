"""Everything a plugin may import, and only that: the contracts (Source, Extractor, Converter, ForkOperator, quality
policies, DataWriter and its builder, DataPublisher) and the optional abilities the runtime asks of them,
settings declarations, commit steps and delivery semantics, errors and whether a retry can help, cancellation,
logging, and the state types a plugin sees.

The sdk imports nothing from the runtime, the connectors, the CLI or the job-file loader: ``import
gobblin_py.sdk`` is cheap. Its modules::

    contracts      the plugin base classes              settings       Settings, setting, Scope
    commit         CommitStep, DeliverySettings          errors         UsageError, TransientError, ...
    failures       classify, register_classifier         config_errors  ConfigError
    states         WorkUnit, WorkUnitState, ...          run_states     SourceState, DatasetState
    watermarks     LongWatermark, ...                    schema_meta    what a batch's schema carries
    branches       branch_key, fork_key                  partitioner    WriterPartitioner
    startpoints    StartpointSource, ...                 implied_keys   ImpliesJobKeys
    cluster_tasks  ClusterTasks                          locating       RecordLocating
    interrupts     cancellation                          logs           get_logger
    plugins        resolving plugin names                redact         credentials kept out of output
    job_keys       the runtime's keys a plugin reads     retry          workunit.retry.policy
    retry_budget   a run's bound on retry waiting        packing        worst_fit_decreasing
    joda           Joda-Time date patterns

The runtime's own keys, the crash tests' hooks and each library's error codes live elsewhere: see
docs/architecture/sdk.md.
"""
