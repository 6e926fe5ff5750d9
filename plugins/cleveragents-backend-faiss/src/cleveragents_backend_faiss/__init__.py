"""cleveragents-backend-faiss: a FAISS vector backend and offline embedders.

Read :mod:`cleveragents_backend_faiss.plugin` for what is registered, and
:mod:`cleveragents_backend_faiss.backend` for the index and its files.
"""

__version__ = "0.1.0"
