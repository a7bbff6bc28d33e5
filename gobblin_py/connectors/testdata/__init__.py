"""Data for examples, demos and load tests: Gobblin's test sources (a synthetic record generator, Avro files read
as text) and the console writer that prints what a job writes."""
