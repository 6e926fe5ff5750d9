"""Alembic environment of the CleverAgents schema, driven from Python.

:class:`cleveragents.storage.database.Database` builds the Alembic
configuration in code and hands ``env.py`` an open connection, so no
``alembic.ini`` is needed at run time. Revisions are linear and named
``NNNN_<slug>.py`` with revision id ``"NNNN"``; the schema version a database
reports is that id. A migration may add to the schema but never drops data.
"""
