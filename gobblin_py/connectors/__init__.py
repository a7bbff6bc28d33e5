"""gpy's built-in connectors, one package per kind of system: files, sql (JDBC databases), kafka, copy (Gobblin's
file copy) and testing (the test sources and the console writer). Each imports only the sdk, io, formats and
store; ``files`` also holds the file writer machinery the others build on. The runtime finds them as plugins.
"""
