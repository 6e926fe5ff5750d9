"""``cleveragents vector``: maintain a project's vector index (present when a vector plugin is)."""

from __future__ import annotations

import sys

import click

from cleveragents.cli.context import App, pass_app
from cleveragents.cli.output import emit_json

__all__ = ["vector"]


@click.group()
def vector() -> None:
    """Vector index maintenance: rebuild after changing the embedder."""


@vector.command("rebuild")
@click.option("--project", "project", required=True, help="Project whose vectors to rebuild.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@pass_app
def rebuild(app: App, project: str, as_json: bool) -> None:
    """Re-embed every current node of PROJECT with the configured embedder.

    Needed after changing `index.embedding.provider`, or when the vector index
    was found corrupt; the text and graph indexes are not touched.
    """
    from cleveragents.errors import ConfigurationError
    from cleveragents_acms.indexing.project_index import NO_BACKEND, ProjectIndex
    from cleveragents_acms.indexing.runner import service_for
    from cleveragents_acms.indexing.vectors import open_vector_index, rebuild_from_nodes

    service = service_for(app)
    indexes = service.list_indexes(project)
    if not indexes:
        from cleveragents.errors import NotFoundError

        raise NotFoundError(
            f"project '{project}' has no index: run `cleveragents index PATH --project {project}`"
        )
    vectors = open_vector_index(app.registry, app.config, project, reset=True)
    if vectors is None:
        if app.config.get("index.vector.backend") == NO_BACKEND:
            raise ConfigurationError(
                f'the vector index is turned off (index.vector.backend = "{NO_BACKEND}")'
            )
        raise ConfigurationError(
            "no vector backend or embedder is installed (pip install cleveragents-backend-faiss)"
        )
    index = ProjectIndex.open(project, app.registry, app.config, create=False)
    ids = [metadata.resource_id for metadata in indexes]
    try:
        with click.progressbar(
            length=sum(index.nodes.count(resource_id) for resource_id in ids),
            label=f"embedding project {project}",
            file=sys.stderr,
        ) as bar:

            def progress(done: int, _total: int) -> None:
                bar.update(done - bar.pos)

            added = rebuild_from_nodes(vectors, index.nodes, ids, progress=progress)
    finally:
        index.close()
        vectors.close()
    result = {
        "project": project,
        "vectors": added,
        "embedder": vectors.embedder_name,
        "dimension": int(vectors.embedder.dimension),
    }
    if as_json:
        emit_json(result)
    else:
        click.echo(
            f"Rebuilt {added} vectors for project {project} with {vectors.embedder_name} "
            f"({result['dimension']} dimensions)"
        )
