"""ACMS: indexes code bases into the UKO knowledge graph plus text indexes.

Everything is reached through the kernel's hooks; see ``plugin.py`` for what
this distribution registers.
"""

__version__ = "0.1.0"
