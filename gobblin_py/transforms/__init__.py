"""gpy's built-in transforms: converters, fork operators and quality policies (row and task). Each imports only
the sdk, io and formats; the runtime finds them as plugins."""
