"""Where CleverAgents keeps its data: ``$CLEVERAGENTS_HOME`` (default ``~/.cleveragents``)."""

from __future__ import annotations

import os
import re
from pathlib import Path

__all__ = ["home", "index_dir", "logs_dir", "project_slug"]


def home() -> Path:
    """The data directory; created on demand by the code that writes into it."""
    configured = os.environ.get("CLEVERAGENTS_HOME")
    return Path(configured).expanduser() if configured else Path.home() / ".cleveragents"


def logs_dir() -> Path:
    return home() / "logs"


def project_slug(project: str) -> str:
    """A file-system safe folder name for a (possibly namespaced) project name."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", project)


def index_dir(kind: str, project: str) -> Path:
    """``index/{text,vector,graph}/<project>/`` under the data directory."""
    return home() / "index" / kind / project_slug(project)
