"""The ``cleveragents`` command line: core groups plus whatever plugins register."""
