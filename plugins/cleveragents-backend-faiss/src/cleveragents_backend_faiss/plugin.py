"""The module named by the ``cleveragents`` entry point ``faiss``: hook implementations only.

It is imported on every ``cleveragents`` run, so it imports nothing heavy:
the backend and the embedders are registered as ``"module:Class"`` strings,
and faiss, numpy and torch are imported only when one of them is first used.
``minilm`` is registered only when its extra is installed, so
``cleveragents plugins list`` never offers an embedder that cannot run.
"""

from __future__ import annotations

from cleveragents import hookimpl
from cleveragents.hookspecs import Register
from cleveragents_backend_faiss.embedders import minilm_installed


@hookimpl
def register_vector_backends(register: Register) -> None:
    register("faiss", "cleveragents_backend_faiss.backend:FaissVectorBackend")


@hookimpl
def register_embedders(register: Register) -> None:
    register("hashing-ngram", "cleveragents_backend_faiss.embedders:HashingNgramEmbedder")
    if minilm_installed():
        register("minilm", "cleveragents_backend_faiss.embedders:MiniLMEmbedder")
