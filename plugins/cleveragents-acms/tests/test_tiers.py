"""ContextTierService: placement, promotion, demotion, LRU eviction, visibility, isolation."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from cleveragents.errors import (
    BudgetExceededError,
    BusinessRuleViolation,
    NotFoundError,
    ValidationError,
)
from cleveragents.storage.database import Database
from cleveragents.testing.factories import make_fragment
from cleveragents_acms.context.tiers import ContextTierService, TierBudget, TieredFragment


@pytest.fixture
def database(tmp_path: Path) -> Iterator[Database]:
    database = Database.for_sqlite_file(tmp_path / "db.sqlite")
    yield database
    database.dispose()


def service(database: Database, tmp_path: Path, **budget: int) -> ContextTierService:
    limits = TierBudget(**budget) if budget else TierBudget()
    return ContextTierService(database, budget_for=lambda _p: limits, cold_dir=tmp_path / "cold")


def entry(
    name: str, tier: str = "warm", project: str = "alpha", tokens: int = 10
) -> TieredFragment:
    fragment = make_fragment(f"uko://r/{name}.py#{name}", f"def {name}(): ...", token_count=tokens)
    return TieredFragment.from_fragment(fragment, project, tier)


def test_store_places_each_fragment_in_its_tier(database: Database, tmp_path: Path) -> None:
    """store() puts hot, warm and cold entries where asked; get() finds each."""
    tiers = service(database, tmp_path)
    for name, tier in (("a", "hot"), ("b", "warm"), ("c", "cold")):
        tiers.store(entry(name, tier))
    found = {e.uko_node.rsplit("#", 1)[1]: e.tier for e in tiers.entries(["alpha"])}
    assert found == {"a": "hot", "b": "warm", "c": "cold"}
    cold = tiers.entries(["alpha"], ("cold",))[0]
    archive = next((tmp_path / "cold").rglob("*.json.gz"))
    assert json.loads(gzip.decompress(archive.read_bytes()))["content"] == cold.content
    got = tiers.get(cold.fragment_id)
    assert got is not None and got.tier == "cold" and got.access_count == 1


def test_promote_and_demote_move_one_tier(database: Database, tmp_path: Path) -> None:
    """cold -> warm -> hot and back; the ends refuse to go further."""
    tiers = service(database, tmp_path)
    item = entry("a", "cold")
    tiers.store(item)
    assert tiers.promote(item.fragment_id).tier == "warm"
    assert tiers.promote(item.fragment_id).tier == "hot"
    with pytest.raises(BusinessRuleViolation, match="already hot"):
        tiers.promote(item.fragment_id)
    assert tiers.demote(item.fragment_id).tier == "warm"
    assert tiers.demote(item.fragment_id).tier == "cold"
    with pytest.raises(BusinessRuleViolation, match="already cold"):
        tiers.demote(item.fragment_id)
    assert not list((tmp_path / "cold").rglob("*.part"))
    with pytest.raises(NotFoundError):
        tiers.promote("01J00000000000000000000000")


def test_demote_with_summary_keeps_the_first_lines(database: Database, tmp_path: Path) -> None:
    tiers = service(database, tmp_path)
    long = TieredFragment.from_fragment(
        make_fragment("uko://r/x.py#x", "\n".join(f"line {i}" for i in range(20))), "alpha", "hot"
    )
    tiers.store(long)
    summary = tiers.demote(long.fragment_id, summarize=True)
    assert summary.content == "line 0\nline 1\nline 2" and summary.metadata["summarized"] == "true"


def test_evict_lru_removes_the_least_recently_used(database: Database, tmp_path: Path) -> None:
    """evict_lru(tier, n) removes exactly n entries, oldest access first."""
    tiers = service(database, tmp_path)
    items = [entry(name) for name in "abcde"]
    for item in items:
        tiers.store(item)
    tiers.get(items[0].fragment_id)  # a becomes the most recently used
    assert tiers.evict_lru("warm", 2) == 2
    left = {e.uko_node.rsplit("#", 1)[1] for e in tiers.entries(["alpha"])}
    assert left == {"a", "d", "e"}
    assert tiers.evict_lru("warm", 10) == 3 and tiers.evict_lru("hot", 1) == 0
    with pytest.raises(ValidationError, match="unknown tier"):
        tiers.evict_lru("lukewarm", 1)
    with pytest.raises(ValidationError):
        tiers.evict_lru("warm", -1)


def test_roles_see_their_tiers_only(database: Database, tmp_path: Path) -> None:
    """strategist: hot+warm+cold; executor: hot+warm; reviewer: hot."""
    tiers = service(database, tmp_path)
    for name, tier in (("h", "hot"), ("w", "warm"), ("c", "cold")):
        tiers.store(entry(name, tier))

    def seen(role: str) -> list[str]:
        return [e.tier for e in tiers.get_for_actor(role, ["alpha"])]

    assert seen("strategist") == ["hot", "warm", "cold"]
    assert seen("executor") == ["hot", "warm"]
    assert seen("reviewer") == ["hot"]
    with pytest.raises(ValidationError, match="unknown role"):
        tiers.get_for_actor("admin", ["alpha"])


def test_projects_are_isolated(database: Database, tmp_path: Path) -> None:
    """An actor sees only the projects it asks for; clear() touches one project."""
    tiers = service(database, tmp_path)
    tiers.store(entry("a", "hot", project="alpha"))
    tiers.store(entry("b", "hot", project="beta"))
    assert [e.project_name for e in tiers.get_for_actor("reviewer", ["alpha"])] == ["alpha"]
    assert len(tiers.get_for_actor("reviewer", ["alpha", "beta"])) == 2
    assert tiers.get_for_actor("reviewer", []) == []
    assert tiers.clear("alpha") == 1
    assert [e.project_name for e in tiers.entries()] == ["beta"]


def test_capacity_pushes_entries_down(database: Database, tmp_path: Path) -> None:
    """Over its budget a tier demotes its least recently used entries; cold evicts them."""
    tiers = service(
        database, tmp_path, hot_max_tokens=25, warm_max_decisions=2, cold_max_decisions=1
    )
    first, second, third = entry("a", "hot"), entry("b", "hot"), entry("c", "hot")
    for item in (first, second, third):
        tiers.store(item)
    tiers_of = {e.uko_node.rsplit("#", 1)[1]: e.tier for e in tiers.entries(["alpha"])}
    assert tiers_of == {"a": "warm", "b": "hot", "c": "hot"}
    for name in "de":
        tiers.store(entry(name, "warm"))
    assert tiers.get_metrics("alpha").populations == {"hot": 2, "warm": 2, "cold": 1}
    with pytest.raises(BudgetExceededError, match="does not fit the hot tier"):
        tiers.store(entry("huge", "hot", tokens=26))


def test_metrics_count_hits_misses_and_populations(database: Database, tmp_path: Path) -> None:
    tiers = service(database, tmp_path)
    hot, cold = entry("h", "hot", tokens=7), entry("c", "cold", tokens=5)
    tiers.store(hot)
    tiers.store(cold)
    tiers.get(hot.fragment_id)
    tiers.get(hot.fragment_id)
    tiers.get(cold.fragment_id)
    assert tiers.get("01J00000000000000000000000") is None
    metrics = tiers.get_metrics()
    assert metrics.hits == {"hot": 2, "warm": 0, "cold": 1} and metrics.misses == 1
    assert metrics.populations == {"hot": 1, "warm": 0, "cold": 1}
    assert metrics.tokens == {"hot": 7, "warm": 0, "cold": 5}
    assert metrics.hit_rate == pytest.approx(0.75)


def test_entries_survive_the_process(database: Database, tmp_path: Path) -> None:
    """A new service (another process) sees hot, warm and cold entries stored before."""
    service(database, tmp_path).store(entry("a", "hot"))
    service(database, tmp_path).store(entry("b", "cold"))
    later = service(database, tmp_path)
    assert sorted(e.tier for e in later.entries(["alpha"])) == ["cold", "hot"]


def test_retention_moves_old_entries(database: Database, tmp_path: Path) -> None:
    """Warm entries past retention-hours go cold; cold ones past retention-days go."""
    tiers = service(database, tmp_path)
    warm, cold = entry("w", "warm"), entry("c", "cold")
    tiers.store(warm)
    tiers.store(cold)
    later = warm.tier_since + timedelta(hours=25)
    assert tiers.apply_retention(later) == {"demoted": 1, "removed": 0}
    assert tiers.apply_retention(later + timedelta(days=91)) == {"demoted": 0, "removed": 2}
    assert tiers.entries() == []


def _project_with_resource(database: Database, project: str) -> str:
    from cleveragents.models.resources import Resource
    from cleveragents.storage.repositories import ProjectRepository, ResourceRepository

    resource = Resource(name=f"{project}-repo", resource_type_name="directory", location="/tmp")
    with database.session() as session:
        ProjectRepository(session).create(project)
        ResourceRepository(session).add(resource)
        ResourceRepository(session).link_to_project(project, resource.resource_id)
    return resource.resource_id


def test_scoped_view_sees_only_its_projects_resources(database: Database, tmp_path: Path) -> None:
    """get_scoped_view(projects) isolates projects; a caller's scope only narrows it."""
    alpha = _project_with_resource(database, "alpha")
    beta = _project_with_resource(database, "beta")
    tiers = service(database, tmp_path)

    def stored(name: str, project: str, resource: str, tier: str = "warm") -> TieredFragment:
        fragment = make_fragment(
            f"uko://r/{name}.py#{name}", f"def {name}(ledger): reconcile ledger {name}",
            resource_id=resource,
        )  # fmt: skip
        item = TieredFragment.from_fragment(fragment, project, tier)
        tiers.store(item)
        return item

    mine = stored("mine", "alpha", alpha, "hot")
    older = stored("older", "alpha", alpha, "cold")
    theirs = stored("theirs", "beta", beta)
    stray = stored("stray", "alpha", beta)  # an alpha entry from a resource alpha lacks

    view = tiers.get_scoped_view(["alpha"])
    assert view.scope == frozenset({alpha})
    assert [e.fragment_id for e in view.entries()] == [mine.fragment_id, older.fragment_id]
    assert view.get(theirs.fragment_id) is None and view.get(stray.fragment_id) is None
    assert view.get(mine.fragment_id) is not None
    hits = view.search("reconcile the ledger")
    assert [h.uko_uri for h in hits] == [mine.uko_node, older.uko_node]  # hot ranks first
    assert hits[0].metadata["tier"] == "hot" and 0 < hits[1].score < hits[0].score <= 1
    assert view.search("reconcile", scope=frozenset({beta})) == []  # narrowed, never widened
    assert view.search("unrelated words") == []

    both = tiers.get_scoped_view(["alpha", "beta"])
    assert {e.fragment_id for e in both.entries()} == {
        mine.fragment_id, older.fragment_id, theirs.fragment_id, stray.fragment_id,
    }  # fmt: skip
    with pytest.raises(NotFoundError):
        tiers.get_scoped_view(["ghost"])
