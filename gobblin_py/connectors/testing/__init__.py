"""Gobblin's test sources and the console writer."""
