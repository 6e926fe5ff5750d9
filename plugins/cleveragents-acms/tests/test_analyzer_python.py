"""The Python analyzer on this repository's code, installed third-party code and broken input."""

from __future__ import annotations

import importlib.util
import json
import textwrap
from collections.abc import Iterable
from pathlib import Path

import pytest

from cleveragents.models.uko import (
    DEPTH_FULL,
    DEPTH_MEMBERS,
    DEPTH_NAME,
    DEPTH_OUTLINE,
    DEPTH_SIGNATURES,
    AnalysisResult,
    UKONode,
    node_uri,
)
from cleveragents_acms.analyzers.files import read_text
from cleveragents_acms.analyzers.python import PythonAnalyzer, module_name_for

REPO = Path(__file__).resolve().parents[3]
RESOURCE = "01HZZZZZZZZZZZZZZZZZZZZZZZ"


def analyze(path: Path, relative: str, content: str | None = None) -> AnalysisResult:
    text = content if content is not None else read_text(path)[0]
    return PythonAnalyzer().analyze(path, text, resource_id=RESOURCE, relative_path=relative)


def analyze_source(source: str, relative: str = "pkg/sample.py") -> dict[str, UKONode]:
    result = analyze(Path("/nonexistent") / relative, relative, textwrap.dedent(source))
    assert result.errors == []
    return {n.qualname: n for n in result.nodes}


def resolved(files: dict[str, str]) -> dict[str, UKONode]:
    """The nodes of several files (relative path -> source), by URI, their names resolved
    across them as the indexer resolves a resource's."""
    from cleveragents_acms.indexing.resolve import resolve_edges

    nodes = {
        n.uri: n
        for relative, text in files.items()
        for n in analyze_source(text, relative).values()
    }
    resolve_edges(nodes.values())
    return nodes


def reexports_of(nodes: Iterable[UKONode]) -> list[UKONode]:
    return [n for n in nodes if n.uko_type == "uko-py:ReExport"]


def bindings(reexports: Iterable[UKONode]) -> list[list[list[str]]]:
    """Each re-export's bindings (``[[name, target], …]``), sorted."""
    return sorted(json.loads(n.properties["bindings"]) for n in reexports)


def uri(relative: str, qualname: str = "") -> str:
    return node_uri(RESOURCE, relative, qualname)


def installed(module: str) -> Path:
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin is not None
    return Path(spec.origin)


REGISTRY = "cleveragents-core/src/cleveragents/registry.py"


@pytest.fixture(scope="module")
def registry_nodes() -> dict[str, UKONode]:
    """This repository's own registry module, analyzed."""
    result = analyze(REPO / REGISTRY, REGISTRY)
    assert result.errors == []
    return {n.qualname: n for n in result.nodes}


def test_module_node_of_a_real_file(registry_nodes: dict[str, UKONode]) -> None:
    """The module node has the dotted name, the whole file at depth 9 and a member listing."""
    module = registry_nodes[""]
    source = (REPO / REGISTRY).read_text(encoding="utf-8")
    assert module.uri == uri(REGISTRY)
    assert module.uko_type == "uko-py:Module"
    assert module.name == "cleveragents.registry"
    assert module.parent is None
    assert module.start_line == 1 and module.end_line == len(source.splitlines())
    assert module.renderings[DEPTH_FULL] == source
    assert module.renderings[DEPTH_NAME] == REGISTRY
    assert "classes: Registration, SlotView, Registry" in module.renderings[DEPTH_MEMBERS]
    assert module.properties["docstring"].startswith("The resolved view of what plugins provide")
    assert ("uko:dependsOn", "symbol:cleveragents.errors") in module.edges


def test_classes_methods_signatures_and_docstrings(registry_nodes: dict[str, UKONode]) -> None:
    """Classes and methods carry exact signatures, docstrings and decorators."""
    registry = registry_nodes["Registry"]
    assert registry.uko_type == "uko-py:Class"
    assert registry.properties["docstring"] == "Every registration of every loaded plugin, by slot."
    resolve = registry_nodes["Registry.resolve"]
    assert resolve.uko_type == "uko-py:Method"
    assert resolve.parent == registry.uri
    assert resolve.properties["signature"] == "def resolve(self, slot_key: str, spec: str) -> Any"
    assert resolve.properties["return_type"] == "Any"
    assert resolve.properties["docstring"].startswith("A component by registered name")
    params = json.loads(resolve.properties["parameters"])
    assert [p["name"] for p in params] == ["self", "slot_key", "spec"]
    assert params[1] == {"name": "slot_key", "kind": "positional", "annotation": "str"}
    registration = registry_nodes["Registration"]
    assert registration.properties["decorators"] == "@dataclass"
    assert registry_nodes["Registry.analyzers"].uko_type == "uko-py:Property"
    assert registry_nodes["Registry.analyzers"].properties["kind"] == "property"
    assert registry_nodes["import_reference"].uko_type == "uko-py:Function"
    assert registry_nodes["import_reference"].properties["signature"] == (
        "def import_reference(reference: str) -> Any"
    )


def test_attributes_of_classes_and_modules(registry_nodes: dict[str, UKONode]) -> None:
    """Dataclass fields, ``self.x`` set in ``__init__`` and module constants are attributes."""
    field = registry_nodes["Registration.slot"]
    assert field.uko_type == "uko-py:Attribute"
    assert field.properties["annotation"] == "Slot"
    assert field.renderings[DEPTH_SIGNATURES] == "slot: Slot"
    instance = registry_nodes["SlotView._registrations"]
    assert instance.properties["kind"] == "instance-attribute"
    assert instance.parent == registry_nodes["SlotView"].uri
    assert registry_nodes["__all__"].uko_type == "uko-py:Variable"


def test_inheritance_imports_and_calls_become_edges(registry_nodes: dict[str, UKONode]) -> None:
    """Bases, imports and calls point at local URIs or ``symbol:`` names."""
    slot_view = registry_nodes["SlotView"]
    assert ("uko-oo:inheritsFrom", "symbol:collections.abc.Mapping") in slot_view.edges
    importer = registry_nodes["import.cleveragents.errors"]
    assert importer.uko_type == "uko-py:Import"
    assert (
        importer.name
        == "from cleveragents.errors import NotFoundError, PluginError, ValidationError"
    )
    assert ("uko:dependsOn", "symbol:cleveragents.errors.PluginError") in importer.edges
    resolve = registry_nodes["Registration.resolve"]
    assert ("uko:dependsOn", uri(REGISTRY, "import_reference")) in resolve.edges
    assert ("uko:dependsOn", uri(REGISTRY, "Registration.check")) in resolve.edges
    assert ("uko:dependsOn", "symbol:cleveragents.errors.PluginError") in resolve.edges
    assert not any(t.endswith(("isinstance", "component")) for _, t in resolve.edges)


def test_renderings_of_a_method(registry_nodes: dict[str, UKONode]) -> None:
    """Depth 4 is signature plus first docstring line; 6 elides bodies; 9 is the exact source."""
    resolve = registry_nodes["Registry.resolve"]
    lines = (REPO / REGISTRY).read_text(encoding="utf-8").splitlines()
    assert resolve.renderings[DEPTH_FULL] == "\n".join(
        lines[resolve.start_line - 1 : resolve.end_line]
    )
    assert resolve.renderings[DEPTH_FULL].lstrip().startswith("def resolve(")
    assert resolve.renderings[DEPTH_SIGNATURES] == (
        "def resolve(self, slot_key: str, spec: str) -> Any:\n"
        '    """A component by registered name, ``"builtin:ClassName"`` or '
        '``"module:ClassName"``."""'
    )
    outline = resolve.renderings[DEPTH_OUTLINE]
    assert "if spec in view:" in outline and "return view[spec]" in outline
    assert "ad_hoc = Registration(" not in outline
    registry = registry_nodes["Registry"]
    assert (
        "    def add(self, registration: Registration) -> None: ..."
        in (registry.renderings[DEPTH_SIGNATURES])
    )
    assert registry.renderings[DEPTH_MEMBERS].startswith("class Registry: _slots, __init__, add")


def test_every_node_has_a_consistent_uri_parent_and_range(
    registry_nodes: dict[str, UKONode],
) -> None:
    """URIs follow ``node_uri``, parents exist and enclose their children's line ranges."""
    by_uri = {n.uri: n for n in registry_nodes.values()}
    for node in registry_nodes.values():
        assert node.uri == uri(REGISTRY, node.qualname)
        assert node.path == REGISTRY and node.resource_id == RESOURCE
        assert node.language == "python"
        assert 1 <= node.start_line <= node.end_line
        if node.parent is not None:
            parent = by_uri[node.parent]
            assert parent.start_line <= node.start_line <= node.end_line <= parent.end_line


def test_third_party_click_core() -> None:
    """click's core module: classes, inheritance inside the module, overloads, enums."""
    result = analyze(installed("click.core"), "click/core.py")
    assert result.errors == []
    nodes = {n.qualname: n for n in result.nodes}
    assert nodes[""].name == "click.core"
    assert nodes["Context"].properties["docstring"].startswith("The context is a special")
    group = nodes["Group"]
    assert group.properties["signature"] == "class Group(Command)"
    assert ("uko-oo:inheritsFrom", nodes["Command"].uri) in group.edges
    assert (
        nodes["Command.make_context"]
        .properties["signature"]
        .startswith("def make_context(self, info_name: str | None, args: list[str]")
    )
    assert (
        nodes["Command.make_context"]
        .properties["docstring"]
        .startswith("This function when given an info name and arguments")
    )
    assert ("uko:dependsOn", nodes["Command.parse_args"].uri) in nodes["Command.make_context"].edges
    assert "Context.invoke~2" in nodes  # typing.overload redefinitions keep distinct URIs
    members = nodes["Context"].renderings[DEPTH_MEMBERS].split(": ", 1)[1].split(", ")
    assert members.count("invoke") == 1  # ... and are listed once
    assert nodes["ParameterSource"].uko_type == "uko-py:Enum"
    assert nodes["Parameter"].uko_type == "uko-py:Protocol"  # an ABC
    assert len({n.uri for n in result.nodes}) == len(result.nodes)


def test_a_packages_top_level_from_imports_are_its_re_exports() -> None:
    """click's ``__init__`` (``from .core import Command as Command``): each of its
    top-level from-imports is a ``uko-py:ReExport`` whose bindings say what the package
    answers for; a function's and ``__future__``'s are none, and of a module's that uses
    the names only what it imports with ``*`` (see the tests below)."""
    result = analyze(installed("click"), "click/__init__.py")
    assert result.errors == []
    reexports = reexports_of(result.nodes)
    found = {tuple(b) for group in bindings(reexports) for b in group}
    assert {
        ("Command", "click.core.Command"),
        ("argument", "click.decorators.argument"),
    } <= found
    assert {n.properties["exported_as"] for n in reexports} == {"click"}
    assert ("annotations", "__future__.annotations") not in found
    source = """
        from .base import Model, helper as h
        from .extra import *
        import os.path as osp

        def load():
            from .late import Late
            return Late, Model, h
    """
    nodes = analyze_source(source, "shop/__init__.py")
    reexports = reexports_of(nodes.values())
    assert bindings(reexports) == [
        [["", "shop.extra"]],
        [["Model", "shop.base.Model"], ["h", "shop.base.helper"]],
    ]
    assert nodes["import.os.path"].uko_type == "uko-py:Import"
    module = analyze_source(source, "shop/views.py")
    assert bindings(reexports_of(module.values())) == [[["", "shop.extra"]]]


def test_a_module_re_exports_what_it_imports_and_names_nowhere_else() -> None:
    """astropy's ``modeling/models.py`` imports ``fix_inputs`` only for its users to
    import it from there: a module's top-level from-import of
    a name its text names nowhere else is a re-export. A name the module uses (in code,
    a comment or a string) is not, nor an import inside a function. Every top-level
    from-import still says what it binds: the re-export all the names of its statement,
    an import whose names the module uses its own (importers of ``kit.routing.Checked``
    reach it all the same)."""
    source = """
        from .requests import _RoutingMixin, Router, helper
        from .checks import Checked

        # helper is documented here
        def route(request):
            from .late import Late
            return Router(request), Late


        def check():
            return "Checked"
    """
    nodes = analyze_source(source, "kit/routing.py")
    reexports = reexports_of(nodes.values())
    assert bindings(reexports) == [
        [
            ["_RoutingMixin", "kit.requests._RoutingMixin"],
            ["Router", "kit.requests.Router"],
            ["helper", "kit.requests.helper"],
        ]
    ]
    assert {n.properties["exported_as"] for n in reexports} == {"kit.routing"}
    used = nodes["import.kit.checks"]
    assert used.uko_type == "uko-py:Import"
    assert json.loads(used.properties["bindings"]) == [["Checked", "kit.checks.Checked"]]
    assert used.properties["exported_as"] == "kit.routing"


def test_a_module_re_exports_what_its_all_lists_or_it_imports_as_itself() -> None:
    """structlog's ``types.py`` (``from .typing import Context, …`` beside ``__all__ =
    ("Context", …)``), as pandas's ``core/api.py`` is where ``pandas.DataFrame`` leads: a module's
    top-level from-import is a re-export of the names ``__all__`` lists (written out in
    any of its forms, before or after the import), of ``a as a`` and of ``*`` (as in
    ``astropy.modeling.models``); the module's other imports and a function's are none."""
    result = analyze(installed("structlog.types"), "structlog/types.py")
    reexports = reexports_of(result.nodes)
    found = {tuple(b) for group in bindings(reexports) for b in group}
    assert ("Context", "structlog.typing.Context") in found and len(found) == 9
    assert {n.properties["exported_as"] for n in reexports} == {"structlog.types"}
    source = """
        __all__ = ["Model"]
        from .base import Model, helper
        from .extra import *
        from .more import Other, Listed as Named, Kept as Kept
        from .late import Late
        __all__ += ["Named"]
        __all__.extend(("Extended",))
        __all__.append("Late")
        from .ext import Extended
        from os import path

        def load():
            from .base import Model
            return Model, helper, Other, path
    """
    nodes = analyze_source(source, "shop/views.py")
    reexports = reexports_of(nodes.values())
    assert bindings(reexports) == [
        [["", "shop.extra"]],
        [["Extended", "shop.ext.Extended"]],
        [["Late", "shop.late.Late"]],
        [["Model", "shop.base.Model"], ["helper", "shop.base.helper"]],
        [["Named", "shop.more.Listed"], ["Kept", "shop.more.Kept"], ["Other", "shop.more.Other"]],
    ]
    assert {n.properties["exported_as"] for n in reexports} == {"shop.views"}
    assert nodes["import.os"].uko_type == "uko-py:Import"
    computed = analyze_source(
        "from .base import Model\n__all__ = base.__all__\nKIND = Model\n", "shop/v.py"
    )
    assert not reexports_of(computed.values())


def test_a_call_through_self_to_a_member_the_class_lacks_is_guessed_inherited() -> None:
    """``self.clean()`` and ``cls.make()`` in a class with bases that does not define them
    name the class and the member (the indexer looks along the bases), ``super().save()``
    the member above the class; the module lists the names. A class without bases
    (``object`` is none) guesses nothing, and a chain (``self.items.get()``) is an
    attribute's method, not the class's."""
    source = """
        class Form(Base, Mixin):
            def own(self):
                return 1

            def run(self):
                self.own()
                self.clean()
                self.items.get()
                return self.clean()

            @classmethod
            def build(cls):
                return cls.make()

            def save(self):
                return super().save() + super(Form, self).own()


        class Plain(object):
            def run(self):
                return self.clean()
    """
    nodes = analyze_source(source, "app/forms.py")
    form = uri("app/forms.py", "Form")
    guess = "symbol:inherited:" + form
    assert nodes["Form.run"].edges == [
        ("uko:dependsOn", uri("app/forms.py", "Form.own")),
        ("uko:dependsOn", guess + ".clean"),
    ]
    assert nodes["Form.build"].edges == [("uko:dependsOn", guess + ".make")]
    # ``super()`` looks above the class, even for a member the class defines.
    above = "symbol:inherited:super:" + form
    assert nodes["Form.save"].edges == [
        ("uko:dependsOn", above + ".save"),
        ("uko:dependsOn", above + ".own"),
    ]
    assert nodes["Plain.run"].edges == []
    assert nodes[""].properties["inherited_guesses"] == "clean\nmake\nown\nsave"


def test_a_module_variable_made_by_calling_a_class_uses_that_type() -> None:
    """``apps = Apps()`` and ``register = template.Library()`` use their classes' types
    (what ``apps.get_model`` goes through), as does a class's attribute made so
    (``default = Apps()``); a call of a function (``data = load()``) names none."""
    nodes = analyze_source(
        """
        from django import template


        class Apps:
            default = Apps()


        apps = Apps(installed_apps=None)
        register = template.Library()
        data = load()
        """,
        "app/registry.py",
    )
    assert nodes["apps"].edges == [("uko-code:usesType", uri("app/registry.py", "Apps"))]
    assert nodes["register"].edges == [("uko-code:usesType", "symbol:django.template.Library")]
    assert nodes["data"].edges == []
    assert nodes["Apps.default"].edges == [("uko-code:usesType", uri("app/registry.py", "Apps"))]


def test_a_call_through_a_typed_attribute_is_the_member_of_its_class() -> None:
    """``self.client.get()`` is the member of the attribute's class where the class says
    what the attribute is: ``self.client = Client()``, ``self.cache: Optional[Cache]``, a
    class-level ``store: "Store"`` or ``remote: net.Client``, or ``self.pool = pool`` of
    an ``__init__(self, pool: Pool | None)``; the member may be inherited (``get`` of
    ``Client`` is ``Base``'s). An attribute whose class is not said (``self.data =
    load()``, ``size: int``) names nothing; ``self.client.session.get()`` names
    ``Client.session.get``, which nothing answers (``Client`` has no ``session``)."""
    files = {
        "app/net.py": "class Base:\n    def get(self):\n        return 0\n\n\n"
        "class Client(Base):\n    def close(self):\n        return 1\n\n\n"
        "class Pool:\n    def take(self):\n        return 2\n",
        "app/service.py": textwrap.dedent(
            """
            from typing import Optional

            from app import net
            from app.net import Client, Pool


            class Cache:
                def put(self, key):
                    return key


            class Store:
                def save(self):
                    return 3


            class Service:
                store: "Store"
                remote: net.Client

                def __init__(self, pool: Pool | None, size: int):
                    self.client = Client()
                    self.cache: Optional[Cache] = None
                    self.pool = pool
                    self.size = size
                    self.data = load()

                def run(self):
                    self.client.get()
                    self.cache.put(1)
                    self.store.save()
                    self.pool.take()
                    self.remote.close()
                    self.data.keys()
                    self.client.session.get()
                    return self.size.bit_length()
            """
        ),
    }
    nodes = resolved(files)
    net, service = "app/net.py", "app/service.py"
    assert nodes[uri(service, "Service.run")].edges == [
        ("uko:dependsOn", uri(net, "Base.get")),
        ("uko:dependsOn", uri(service, "Cache.put")),
        ("uko:dependsOn", uri(service, "Store.save")),
        ("uko:dependsOn", uri(net, "Pool.take")),
        ("uko:dependsOn", uri(net, "Client.close")),
        ("uko:dependsOn", "symbol:app.net.Client.session.get"),
        ("uko:references", "symbol:app.net.Client.session"),
    ]


def test_set_up_says_what_class_a_test_s_attribute_is() -> None:
    """``self.factory = RequestFactory()`` in a test's ``setUp`` (any method of ``self``)
    makes ``self.factory.get()`` in the tests ``RequestFactory.get``: a call, and what
    the test exercises. ``__init__``'s word on an attribute comes before the others'."""
    files = {
        "app/client.py": "class RequestFactory:\n    def get(self, path):\n        return path\n"
        "\n\nclass Other:\n    def get(self, path):\n        return 0\n",
        "tests/test_views.py": textwrap.dedent(
            """
            from app.client import Other, RequestFactory


            class ViewTests(TestCase):
                def __init__(self):
                    self.other = Other()

                def setUp(self):
                    self.factory = RequestFactory()
                    self.other = RequestFactory()

                def test_get(self):
                    self.factory.get("/")
                    return self.other.get("/")
            """
        ),
    }
    nodes = resolved(files)
    reached = [uri("app/client.py", "RequestFactory.get"), uri("app/client.py", "Other.get")]
    assert nodes[uri("tests/test_views.py", "ViewTests.test_get")].edges == [
        *(("uko:dependsOn", target) for target in reached),
        *(("uko-code:testsCallable", target) for target in reached),
    ]


def test_an_attribute_a_base_of_the_module_types_is_known_to_its_subclasses() -> None:
    """``self.client.get()`` in ``Child(Base)``, where ``Base.__init__`` (in the same
    module) sets ``self.client = Client()``, is ``Client.get``, two levels up too. A class
    that sets the attribute itself (``self.client = make()`` in ``setUp``), a base from
    elsewhere before the one that types it, or one between that sets it to what no one
    says, leave it unknown; a base from elsewhere after it does not."""
    files = {
        "app/net.py": "class Client:\n    def get(self):\n        return 0\n",
        "app/views.py": textwrap.dedent(
            """
            from app.net import Client
            from other import External


            class Base:
                def __init__(self):
                    self.client = Client()


            class Child(Base):
                def run(self):
                    return self.client.get()


            class Grandchild(Child):
                def run(self):
                    return self.client.get()


            class Rebinds(Base):
                def setUp(self):
                    self.client = make()

                def run(self):
                    return self.client.get()


            class Untyped(Base):
                def __init__(self):
                    self.client = make()


            class BelowUntyped(Untyped):
                def run(self):
                    return self.client.get()


            class ExternalFirst(External, Base):
                def run(self):
                    return self.client.get()


            class ExternalAfter(Base, External):
                def run(self):
                    return self.client.get()
            """
        ),
    }
    nodes = resolved(files)
    get = [("uko:dependsOn", uri("app/net.py", "Client.get"))]
    edges = {
        name: nodes[uri("app/views.py", f"{name}.run")].edges
        for name in (
            "Child",
            "Grandchild",
            "Rebinds",
            "BelowUntyped",
            "ExternalFirst",
            "ExternalAfter",
        )
    }
    assert edges == {
        "Child": get,
        "Grandchild": get,
        "Rebinds": [],
        "BelowUntyped": [],
        "ExternalFirst": [],
        "ExternalAfter": get,
    }


def test_a_local_name_made_by_calling_a_class_gives_that_class_s_members() -> None:
    """``form = Form(data)`` then ``form.is_valid()`` is the member ``Form`` has or
    inherits, and ``backup: forms.Form = make()`` says its class too. A name also bound
    otherwise (``item = item.copy()``, a loop's) or a parameter names nothing;
    ``form.errors.get()`` names ``Form.errors.get``, which nothing answers here."""
    files = {
        "app/forms.py": "class Base:\n    def is_valid(self):\n        return True\n\n\n"
        "class Form(Base):\n    def save(self):\n        return 1\n",
        "app/views.py": textwrap.dedent(
            """
            from app import forms
            from app.forms import Form


            class Item:
                def copy(self):
                    return self


            def submit(data, other):
                form = Form(data)
                backup: forms.Form = make()
                item = Item()
                item = item.copy()
                other = Form(data)
                for each in range(3):
                    each = Form(data)
                form.is_valid()
                backup.save()
                item.copy()
                other.save()
                each.save()
                return form.errors.get()
            """
        ),
    }
    nodes = resolved(files)
    forms, views = "app/forms.py", "app/views.py"
    assert nodes[uri(views, "submit")].edges == [
        ("uko:dependsOn", uri(forms, "Form")),
        ("uko:dependsOn", "symbol:make"),
        ("uko:dependsOn", uri(views, "Item")),
        ("uko:dependsOn", uri(forms, "Base.is_valid")),
        ("uko:dependsOn", uri(forms, "Form.save")),
        ("uko:dependsOn", "symbol:app.forms.Form.errors.get"),
        ("uko:references", "symbol:app.forms.Form.errors"),
    ]


def test_what_a_call_returns_is_the_class_its_return_annotation_names() -> None:
    """A function's return annotation naming a class is a ``usesType`` edge (``-> Self``
    and ``-> "Client"`` in ``Client``: the class itself). So ``client.get()`` of
    ``client = make_client()``, ``await``-ed or not, in the function's module or another,
    ``self.client.get()`` of ``self.client = make_client()``, a builder's
    ``Client.create().get()`` through a local name or not, ``make_client().get()`` and
    ``Client().get()`` unnamed, and ``self.parent.get()`` of a property annotated
    ``Client`` reach ``Client.get``. A callee with no class in its annotation, a
    parameter, an annotated name (``total: int = count()``), a longer chain
    (``make_client().get().real``) or an attribute made from itself
    (``self.cells = self.cells.copy()``, which looked for its class without end) names
    nothing more; ``self.rows = Rows()`` says more than ``self.rows = self.rows.copy()``,
    and ``self = cls.__new__(cls)`` is still the method's class."""
    files = {
        "app/net.py": textwrap.dedent(
            """
            from typing import Self


            class Client:
                def get(self):
                    return 0

                @classmethod
                def create(cls) -> Self:
                    return cls()

                @property
                def parent(self) -> "Client":
                    return self

                def run(self):
                    return self.parent.get()


            def make_client() -> Client | None:
                return Client()


            def count() -> int:
                return 0


            def here():
                client = make_client()
                return client.get()
            """
        ),
        "app/frame.py": textwrap.dedent(
            """
            class Rows:
                def get(self):
                    return 0

                def copy(self) -> "Rows":
                    return self


            class Frame:
                def __init__(self):
                    self.rows = Rows()
                    self.rows = self.rows.copy()
                    self.cells = self.cells.copy()
                    self.left = self.right.pop()
                    self.right = self.left.pop()

                @classmethod
                def make(cls):
                    self = cls.__new__(cls)
                    return self.run()

                def run(self):
                    return self.rows.get(), self.cells.get(), self.left.get()
            """
        ),
        "app/use.py": textwrap.dedent(
            """
            from app.net import Client, count, make_client


            class User:
                def __init__(self):
                    self.client = make_client()

                def run(self):
                    return self.client.get()


            async def fetch(factory):
                client = await make_client()
                built = Client.create()
                made = factory()
                total: int = count()
                client.get()
                built.get()
                made.get()
                total.bit_length()
                return make_client().get().real()


            def chained():
                return Client().get(), make_client().get(), Client.create().get()
            """
        ),
    }
    nodes = resolved(files)
    net, use = "app/net.py", "app/use.py"
    get = ("uko:dependsOn", uri(net, "Client.get"))
    assert ("uko-code:usesType", uri(net, "Client")) in nodes[uri(net, "make_client")].edges
    for method in ("Client.create", "Client.parent"):
        assert ("uko-code:usesType", uri(net, "Client")) in nodes[uri(net, method)].edges
    assert not any(p == "uko-code:usesType" for p, _ in nodes[uri(net, "count")].edges)
    assert nodes[uri(net, "Client.run")].edges == [get]
    assert nodes[uri(net, "here")].edges == [("uko:dependsOn", uri(net, "make_client")), get]
    assert nodes[uri(use, "User.run")].edges == [get]
    assert nodes[uri(use, "chained")].edges == [
        ("uko:dependsOn", uri(net, "Client")),
        get,
        ("uko:dependsOn", uri(net, "make_client")),
        ("uko:dependsOn", uri(net, "Client.create")),
    ]
    frame = "app/frame.py"
    assert nodes[uri(frame, "Frame.run")].edges == [("uko:dependsOn", uri(frame, "Rows.get"))]
    assert nodes[uri(frame, "Frame.make")].edges == [("uko:dependsOn", uri(frame, "Frame.run"))]
    assert nodes[uri(use, "fetch")].edges == [
        ("uko:dependsOn", uri(net, "make_client")),
        ("uko:dependsOn", uri(net, "Client.create")),
        ("uko:dependsOn", uri(net, "count")),
        get,
    ]


def test_what_a_call_returns_is_read_from_the_returns_of_a_function_with_no_annotation() -> None:
    """With no return annotation, a function returns the class all its ``return``
    statements give, as an annotation would name it: a method's ``return self`` (or
    ``type(self)()``, ``self.__class__()``), a class method's ``return cls(...)``, also
    through a local name, ``return Pipeline(...)`` and a local name made by one, and
    what another function of the module returns (``return self.clone()``),
    a bare ``return None`` beside them. A generator, a static method's first parameter,
    two classes or a value that is no class's name nothing; here and from another
    module, ``Pipeline().fit(data).predict()`` reaches ``Pipeline.predict``."""
    files = {
        "app/est.py": textwrap.dedent(
            """
            class Pipeline:
                def fit(self, data):
                    self.data = data
                    return self

                def predict(self):
                    return 0

                @classmethod
                def build(cls, steps):
                    if not steps:
                        return None
                    return cls(steps)

                @staticmethod
                def plain(self):
                    return self

                def clone(self):
                    other = Pipeline()
                    return other

                def rows(self):
                    yield self
                    return self

                def either(self, flag):
                    if flag:
                        return self
                    return Other()

                def scored(self):
                    return self.predict()

                def fresh(self):
                    return type(self)()

                def again(self):
                    return self.__class__()

                @classmethod
                def made(cls):
                    made = cls()
                    return made

                def rebuilt(self, again):
                    if again:
                        return self.clone()
                    return self

                def chained(self):
                    copy = self.rebuilt(True)
                    return copy


            class Other:
                def predict(self):
                    return 1


            def make_pipeline(*steps):
                return Pipeline(steps)


            def make_twice():
                return make_pipeline()


            def here():
                return make_pipeline().predict(), Pipeline.build([1]).predict()
            """
        ),
        "app/use.py": textwrap.dedent(
            """
            from app.est import Pipeline, make_pipeline


            def run(data):
                model = make_pipeline()
                model.predict()
                Pipeline().fit(data).predict()


            def nothing(data):
                Pipeline().either(1).predict()
                Pipeline().rows().predict()
                Pipeline.plain(data).predict()
                Pipeline().scored().predict()
            """
        ),
    }
    nodes = resolved(files)
    est, use = "app/est.py", "app/use.py"
    typed = {
        name
        for name in (
            *("fit", "build", "plain", "clone", "rows", "either", "scored"),
            *("fresh", "again", "made", "rebuilt", "chained"),
        )
        if ("uko-code:usesType", uri(est, "Pipeline")) in nodes[uri(est, f"Pipeline.{name}")].edges
    }
    assert typed == {"fit", "build", "clone", "fresh", "again", "made", "rebuilt", "chained"}
    # What another function of the module returns, once it says: ``make_twice``.
    assert ("uko-code:usesType", uri(est, "Pipeline")) in nodes[uri(est, "make_twice")].edges
    assert nodes[uri(est, "Pipeline.fit")].properties["returns"] == "Pipeline"
    assert ("uko-code:usesType", uri(est, "Pipeline")) in nodes[uri(est, "make_pipeline")].edges
    predict = ("uko:dependsOn", uri(est, "Pipeline.predict"))
    assert predict in nodes[uri(est, "here")].edges
    assert nodes[uri(use, "run")].edges == [
        ("uko:dependsOn", uri(est, "make_pipeline")),
        predict,
        ("uko:dependsOn", uri(est, "Pipeline")),
        ("uko:dependsOn", uri(est, "Pipeline.fit")),
    ]
    assert predict not in nodes[uri(use, "nothing")].edges
    assert ("uko:dependsOn", uri(est, "Other.predict")) not in nodes[uri(use, "nothing")].edges


def test_a_class_under_another_name_gives_its_members() -> None:
    """A module's ``Matrix = MutableMatrix`` and ``MutableMatrix = MutableDenseMatrix``
    (SymPy's) are the class under other names: a ``usesType`` edge to what each names,
    the name as written in its ``alias`` property, and ``m.det()`` of ``m =
    Matrix(...)``, ``Matrix.det`` and ``Matrix(...).det()`` elsewhere reach
    ``MutableDenseMatrix.det`` through both. A lowercase value (``default = config``) is
    no alias."""
    files = {
        "app/dense.py": textwrap.dedent(
            """
            class MutableDenseMatrix:
                def det(self):
                    return 0


            Frozen = Fixed = MutableDenseMatrix
            """
        ),
        "app/matrices.py": textwrap.dedent(
            """
            from app.dense import MutableDenseMatrix

            MutableMatrix = MutableDenseMatrix
            Matrix = MutableMatrix
            config = object()
            default = config
            """
        ),
        "app/use.py": textwrap.dedent(
            """
            from app.dense import Fixed
            from app.matrices import Matrix


            def run():
                m = Matrix([1])
                return m.det(), Matrix.det(m), Matrix([2]).det(), Fixed.det(m)
            """
        ),
    }
    nodes = resolved(files)
    dense, matrices = "app/dense.py", "app/matrices.py"
    det = ("uko:dependsOn", uri(dense, "MutableDenseMatrix.det"))
    used = ("uko-code:usesType", uri(matrices, "MutableMatrix"))
    assert nodes[uri(matrices, "Matrix")].edges == [used]
    assert nodes[uri(matrices, "Matrix")].properties["alias"] == "MutableMatrix"
    for name in ("Frozen", "Fixed"):
        assert nodes[uri(dense, name)].edges == [
            ("uko-code:usesType", uri(dense, "MutableDenseMatrix"))
        ]
    assert "alias" not in nodes[uri(matrices, "default")].properties
    assert nodes[uri("app/use.py", "run")].edges == [
        ("uko:dependsOn", uri(matrices, "Matrix")),
        det,
    ]


def test_an_annotated_parameter_gives_the_members_of_its_class() -> None:
    """``client: Client`` makes ``client.get()`` the class's ``get``, whether the class is
    this module's, imported, imported only for type checking, written as a string,
    optional (``Optional[Client]``, ``Client | None``, ``Union[Client, None]``), in
    ``Annotated[Client, …]`` (FastAPI's dependencies) or the method's own (``Self``);
    an inherited member is found along the bases, and a function returning its
    parameter returns its class. A parameter bound again in the body, a ``TypeVar``,
    ``Any``, a union of two classes and the method's own first parameter give nothing
    of it."""
    files = {
        "app/clients.py": textwrap.dedent(
            """
            class Base:
                def close(self):
                    pass


            class Client(Base):
                def get(self):
                    return 1
            """
        ),
        "app/use.py": textwrap.dedent(
            """
            from __future__ import annotations

            from typing import TYPE_CHECKING, Annotated, Any, Optional, Self, TypeVar, Union

            from app.clients import Client

            if TYPE_CHECKING:
                from app.clients import Base

            T = TypeVar("T")


            class Pool:
                def add(self, other: Self, client: "Client") -> None:
                    other.drain()
                    client.get()

                def drain(self):
                    pass


            def fetch(client: Optional[Client], base: Base | None, *, closing: Client):
                client.get()
                base.close()
                closing.close()


            def typed(maybe: Union[None, Client], given: Annotated["Base", "a dependency"]):
                maybe.get()
                given.close()


            def given(client: Client):
                return client


            def chained():
                return given(Client()).get()


            def unknown(client: Client, value: T, either: Client | Pool, anything: Any):
                client = make()
                client.get()
                value.get()
                either.get()
                anything.get()


            def two(one: Union[Client, Pool]):
                one.get()
            """
        ),
    }
    nodes = resolved(files)
    clients, use = "app/clients.py", "app/use.py"
    get = ("uko:dependsOn", uri(clients, "Client.get"))
    close = ("uko:dependsOn", uri(clients, "Base.close"))

    def calls(name: str) -> list[str]:
        return [t for p, t in nodes[uri(use, name)].edges if p == "uko:dependsOn"]

    assert calls("Pool.add") == [uri(use, "Pool.drain"), get[1]]
    assert calls("fetch") == [get[1], close[1]]
    assert calls("typed") == [get[1], close[1]]
    assert calls("two") == []
    assert nodes[uri(use, "given")].properties["returns"] == "Client"
    assert get[1] in calls("chained")
    assert get[1] not in calls("unknown")
    assert calls("unknown") == ["symbol:make"]


def test_a_call_through_an_attribute_reaches_the_member_of_the_attribute_s_class() -> None:
    """A class's attribute whose statement says its class (``session: Session``,
    ``self.engine = Engine()``, ``self.client = client`` of an annotated ``__init__``
    parameter) has a ``usesType`` edge to it and an ``instance_of`` property; through
    it, ``store.session.query()`` of ``store: Store`` (or ``store = Store()``),
    ``self.store.session.query()`` and ``Store.session.query`` reach ``Session.query``,
    also for an attribute a base class gives. The function also references the
    attribute read. A longer chain, or an attribute made by a call, gives nothing."""
    files = {
        "app/db.py": textwrap.dedent(
            """
            class Session:
                def query(self):
                    return 1
            """
        ),
        "app/store.py": textwrap.dedent(
            """
            from app.db import Session


            class Base:
                shared: Session


            class Store(Base):
                session: Session

                def __init__(self, other: Session):
                    self.other = other
                    self.made = make_session()
            """
        ),
        "app/use.py": textwrap.dedent(
            """
            from app.store import Store


            def run(store: Store):
                store.session.query()


            def local():
                store = Store(None)
                store.other.query()
                Store.session.query()


            def inherited(store: Store):
                store.shared.query()


            def nothing(store: Store):
                store.made.query()
                store.session.query.__doc__.strip()


            class Service:
                def __init__(self, store: Store):
                    self.store = store

                def go(self):
                    self.store.session.query()
            """
        ),
    }
    nodes = resolved(files)
    db, store, use = "app/db.py", "app/store.py", "app/use.py"
    query = uri(db, "Session.query")
    session = nodes[uri(store, "Store.session")]
    assert session.edges == [("uko-code:usesType", uri(db, "Session"))]
    assert session.properties["instance_of"] == "Session"
    assert nodes[uri(store, "Store.other")].properties["instance_of"] == "Session"
    assert "instance_of" not in nodes[uri(store, "Store.made")].properties

    def edges(name: str) -> list[tuple[str, str]]:
        return [(p, t) for p, t in nodes[uri(use, name)].edges if t.startswith("https://")]

    assert edges("run") == [
        ("uko:references", uri(store, "Store")),
        ("uko:dependsOn", query),
        ("uko:references", uri(store, "Store.session")),
    ]
    assert ("uko:dependsOn", query) in edges("local")
    assert ("uko:references", uri(store, "Store.other")) in edges("local")
    assert edges("inherited")[1:] == [
        ("uko:dependsOn", query),
        ("uko:references", uri(store, "Base.shared")),
    ]
    assert ("uko:dependsOn", query) in edges("Service.go")
    assert ("uko:references", uri(store, "Store.session")) in edges("Service.go")
    assert ("uko:dependsOn", query) not in edges("nothing")


def test_a_name_in_the_body_of_an_isinstance_test_is_of_that_class() -> None:
    """``if isinstance(shape, Square): shape.side()`` reaches ``Square.side`` (also an
    ``elif``'s class, from another module, with what it inherits), only in that body:
    after it, a body that binds the name again, and a tuple of classes give nothing."""
    files = {
        "app/shapes.py": textwrap.dedent(
            """
            class Shape:
                def area(self):
                    return 0


            class Square(Shape):
                def side(self):
                    return 1
            """
        ),
        "app/use.py": textwrap.dedent(
            """
            from app.shapes import Shape, Square


            class Circle:
                def radius(self):
                    return 2


            def measure(shape, other):
                if isinstance(shape, Circle):
                    shape.radius()
                elif isinstance(shape, Square):
                    shape.side()
                    shape.area()
                other.area()
                if isinstance(other, Square):
                    other = make()
                    other.side()
                if isinstance(other, (Square, Shape)):
                    other.area()
            """
        ),
    }
    nodes = resolved(files)
    shapes, use = "app/shapes.py", "app/use.py"
    assert nodes[uri(use, "measure")].edges == [
        ("uko:dependsOn", uri(use, "Circle.radius")),
        ("uko:dependsOn", uri(shapes, "Square.side")),
        ("uko:dependsOn", uri(shapes, "Shape.area")),
        ("uko:dependsOn", "symbol:make"),
    ]


def test_what_a_with_statement_binds_is_what_enter_returns() -> None:
    """``with Session() as s`` calls ``Session.__enter__`` and binds what it returns
    (``return self``: the session), so ``s.query()`` is ``Session.query``, also for an
    ``__enter__`` a subclass inherits or a class of another module, and ``async with``
    through ``__aenter__``. An ``__enter__`` returning something else, a name bound
    again, and a context a function makes give nothing of it."""
    files = {
        "app/db.py": textwrap.dedent(
            """
            class Session:
                def __enter__(self):
                    return self

                def __exit__(self, *exc):
                    return None

                def query(self):
                    return 1


            class Scoped(Session):
                pass


            class Opaque:
                def __enter__(self):
                    return object()

                def query(self):
                    return 2
            """
        ),
        "app/use.py": textwrap.dedent(
            """
            from app.db import Opaque, Scoped, Session


            class Conn:
                async def __aenter__(self):
                    return self

                def send(self):
                    return 3


            def run():
                with Session() as s:
                    s.query()


            def scoped():
                with Scoped() as t:
                    t.query()


            async def talk():
                async with Conn() as c:
                    c.send()


            def nothing(make):
                with Opaque() as o:
                    o.query()
                with make() as m:
                    m.query()
                with Session() as again:
                    again = None
                    again.query()
            """
        ),
    }
    nodes = resolved(files)
    db, use = "app/db.py", "app/use.py"

    def calls(name: str) -> list[str]:
        return [t for p, t in nodes[uri(use, name)].edges if p == "uko:dependsOn"]

    enter, query = uri(db, "Session.__enter__"), uri(db, "Session.query")
    assert calls("run") == [uri(db, "Session"), enter, query]
    assert calls("scoped") == [uri(db, "Scoped"), enter, query]
    assert calls("talk") == [uri(use, "Conn"), uri(use, "Conn.__aenter__"), uri(use, "Conn.send")]
    assert not any(t.endswith(".query") and t.startswith("https://") for t in calls("nothing"))


def test_inherited_members_follow_python_s_method_resolution_order() -> None:
    """A diamond, ``D(B, C)`` with ``B(A)`` and ``C(A)``, ``A`` and ``C`` defining
    ``save``: C3 orders D, B, C, A, so ``self.save()`` in ``D`` is ``C``'s (depth first
    would find ``A``'s), and ``super().save()`` in ``C`` is ``A``'s; ``self.gone()`` that
    no class defines is no edge."""
    files = {
        "app/a.py": "class A:\n    def save(self):\n        return 0\n",
        "app/b.py": "from app.a import A\n\n\nclass B(A):\n    pass\n",
        "app/c.py": "from app.a import A\n\n\nclass C(A):\n    def save(self):\n"
        "        return super().save()\n",
        "app/d.py": "from app.b import B\nfrom app.c import C\n\n\nclass D(B, C):\n"
        "    def run(self):\n        self.gone()\n        return self.save()\n",
    }
    nodes = resolved(files)
    assert nodes[uri("app/d.py", "D.run")].edges == [("uko:dependsOn", uri("app/c.py", "C.save"))]
    # ``super().save()`` in ``C``: above ``C`` in its own order, ``A``'s.
    assert nodes[uri("app/c.py", "C.save")].edges == [("uko:dependsOn", uri("app/a.py", "A.save"))]


def test_inherited_members_through_a_cycle_of_bases_or_a_deep_chain_end() -> None:
    """Bases that name each other (``A(B)``, ``B(A)``: an error Python reports at import,
    which an index of the source still meets) and a chain deeper than the resolver
    follows leave the guesses they cannot settle unresolved instead of looping."""
    from cleveragents_acms.indexing.inheritance import INHERITANCE_DEPTH

    files = {
        "app/a.py": "from app.b import B\n\n\nclass A(B):\n    def run(self):\n"
        "        return self.step()\n",
        "app/b.py": "from app.a import A\n\n\nclass B(A):\n    def step(self):\n"
        "        return self.other()\n",
    }
    chain = ["class C0:\n    def deep(self):\n        return 0\n"]
    chain += [f"class C{i}(C{i - 1}):\n    pass\n" for i in range(1, INHERITANCE_DEPTH + 3)]
    last = INHERITANCE_DEPTH + 2
    chain.append(f"class Leaf(C{last}):\n    def run(self):\n        return self.deep()\n")
    files["app/chain.py"] = "\n\n".join(chain)
    nodes = resolved(files)
    assert nodes[uri("app/a.py", "A.run")].edges == [("uko:dependsOn", uri("app/b.py", "B.step"))]
    assert nodes[uri("app/b.py", "B.step")].edges == []
    assert nodes[uri("app/chain.py", "Leaf.run")].edges == []  # too deep to follow


def test_third_party_pathspec_with_tab_indentation() -> None:
    """pathspec (indented with tabs): methods, classmethod overloads, docstrings."""
    result = analyze(installed("pathspec.pathspec"), "pathspec/pathspec.py")
    assert result.errors == []
    nodes = {n.qualname: n for n in result.nodes}
    match_file = nodes["PathSpec.match_file"]
    assert match_file.properties["signature"].startswith("def match_file(self, file: StrPath")
    assert match_file.properties["docstring"].startswith("Matches the file to this path-spec.")
    assert nodes["PathSpec.from_lines"].properties["kind"] == "classmethod"
    assert match_file.renderings[DEPTH_FULL].startswith("\tdef match_file(")


SAMPLE = '''\
"""Parsing of requests."""

from __future__ import annotations

import json as j
from . import codecs
from .models import Request, Response
from ..util import helpers

LIMIT: int = 10
A, B = 1, 2


def parse(data: bytes, *, strict: bool = False) -> Request:
    """Parse one request.

    Raises on bad input.
    """
    payload = j.loads(data)
    if strict:
        validate(payload)
    return Request(payload)


def validate(payload):
    helpers.check(payload)
    codecs.decode(payload)
    unknown_function(payload)
    payload.items()


class Parser(Base, metaclass=Meta):
    """Stateful parser."""

    kind = "http"

    def __init__(self, name: str = "café") -> None:
        self.name = name
        self.count: int = 0

    @staticmethod
    def create() -> Parser:
        return Parser()

    async def feed(self, chunk: bytes, /, *rest: bytes, **options: str) -> None:
        """Feed bytes."""
        self.reset()
        async with lock:
            for item in rest:
                parse(item)

    def reset(self):
        def inner(x):
            return parse(x)

        return inner


if TYPE_CHECKING:
    from typing import Protocol

    class Sink(Protocol):
        def write(self, data: bytes) -> int: ...
'''


def test_a_module_with_every_kind_of_definition() -> None:
    """Imports (relative ones resolved), constants, async methods, nested functions, protocols."""
    nodes = analyze_source(SAMPLE, "src/web/http/parser.py")
    rel = "src/web/http/parser.py"
    assert nodes[""].name == "web.http.parser"
    assert nodes["import.web.http.models"].edges == [
        ("uko:dependsOn", "symbol:web.http.models.Request"),
        ("uko:dependsOn", "symbol:web.http.models.Response"),
    ]
    assert ("uko:dependsOn", "symbol:web.util.helpers") in nodes["import.web.util"].edges
    assert nodes["LIMIT"].properties["annotation"] == "int"
    assert {"A", "B"} <= set(nodes)
    parse = nodes["parse"]
    assert parse.properties["signature"] == (
        "def parse(data: bytes, *, strict: bool = False) -> Request"
    )
    assert parse.properties["docstring"] == "Parse one request.\n\nRaises on bad input."
    assert parse.renderings[DEPTH_SIGNATURES] == (
        'def parse(data: bytes, *, strict: bool = False) -> Request:\n    """Parse one request."""'
    )
    assert parse.edges == [
        ("uko:references", "symbol:web.http.models.Request"),
        ("uko-code:usesType", "symbol:web.http.models.Request"),  # what it returns
        ("uko:dependsOn", "symbol:json.loads"),
        ("uko:dependsOn", uri(rel, "validate")),
        ("uko:dependsOn", "symbol:web.http.models.Request"),
    ]
    validate = nodes["validate"]
    assert ("uko:dependsOn", "symbol:web.util.helpers.check") in validate.edges
    assert ("uko:dependsOn", "symbol:web.http.codecs.decode") in validate.edges
    assert ("uko:dependsOn", "symbol:unknown_function") in validate.edges
    assert not any("items" in target for _, target in validate.edges)
    parser = nodes["Parser"]
    assert parser.properties["signature"] == "class Parser(Base, metaclass=Meta)"
    assert ("uko-oo:inheritsFrom", "symbol:Base") in parser.edges
    assert ("uko:dependsOn", "symbol:Meta") in parser.edges
    assert nodes["Parser.__init__"].properties["signature"] == (
        'def __init__(self, name: str = "café") -> None'
    )
    assert nodes["Parser.name"].properties["kind"] == "instance-attribute"
    assert nodes["Parser.count"].properties["annotation"] == "int"
    assert nodes["Parser.kind"].properties["kind"] == "attribute"
    assert nodes["Parser.create"].properties["kind"] == "staticmethod"
    assert ("uko:dependsOn", uri(rel, "Parser")) in nodes["Parser.create"].edges
    feed = nodes["Parser.feed"]
    assert feed.properties["signature"] == (
        "async def feed(self, chunk: bytes, /, *rest: bytes, **options: str) -> None"
    )
    assert feed.properties["is_async"] == "true"
    assert ("uko:dependsOn", uri(rel, "Parser.reset")) in feed.edges
    assert ("uko:dependsOn", uri(rel, "parse")) in feed.edges
    inner = nodes["Parser.reset.inner"]
    assert inner.parent == nodes["Parser.reset"].uri
    assert inner.edges == [
        ("uko-code:usesType", "symbol:web.http.models.Request"),  # what ``parse`` returns
        ("uko:dependsOn", uri(rel, "parse")),
    ]
    assert nodes["Sink"].uko_type == "uko-py:Protocol"
    assert nodes["Sink.write"].properties["signature"] == "def write(self, data: bytes) -> int"


def test_tests_are_linked_to_the_callables_they_call(tmp_path: Path) -> None:
    """A ``test_*`` function in a test file is a TestFunction with testsCallable edges."""
    source = textwrap.dedent(
        """\
        from mypkg.parser import parse, Parser

        def helper():
            return 1

        def test_parse_reads_a_request():
            assert parse(b"x") == helper()

        class TestParser:
            def test_feed(self):
                Parser().feed(b"")

        class ParserTests(unittest.TestCase):  # unittest collects TestCase subclasses
            def test_reset(self):
                Parser().reset()

        class FeedingTests(ParserTestBase):
            def test_feed_twice(self):
                parse(b"xx")

        class Factory:  # a helper class: its test-named method is not collected
            def test_data(self):
                return parse(b"")
        """
    )
    result = analyze(tmp_path / "tests" / "test_parser.py", "tests/test_parser.py", source)
    nodes = {n.qualname: n for n in result.nodes}
    test = nodes["test_parse_reads_a_request"]
    assert test.uko_type == "uko-py:TestFunction"
    assert ("uko-code:testsCallable", "symbol:mypkg.parser.parse") in test.edges
    assert ("uko-code:testsCallable", uri("tests/test_parser.py", "helper")) in test.edges
    assert ("uko-code:testsCallable", "symbol:mypkg.parser.Parser") in nodes[
        "TestParser.test_feed"
    ].edges
    assert ("uko-code:testsCallable", "symbol:mypkg.parser.Parser") in nodes[
        "ParserTests.test_reset"
    ].edges
    assert nodes["FeedingTests.test_feed_twice"].uko_type == "uko-py:TestFunction"
    assert nodes["Factory.test_data"].uko_type == "uko-py:Method"
    assert nodes["helper"].uko_type == "uko-py:Function"
    same_name_elsewhere = analyze(tmp_path / "src" / "tools.py", "src/tools.py", source)
    assert all(n.uko_type != "uko-py:TestFunction" for n in same_name_elsewhere.nodes)


def test_a_syntax_error_still_yields_nodes_and_an_error() -> None:
    """Broken code gets a module with its source and ``def``/``class`` lines, plus the error."""
    source = textwrap.dedent(
        """\
        import os

        class Broken:
            def ok(self):
                return 1

            def bad(self)
                return 2

        def after():
            pass
        """
    )
    result = analyze(Path("broken.py"), "pkg/broken.py", source)
    assert len(result.errors) == 1
    assert result.errors[0].startswith("pkg/broken.py:7:") and "SyntaxError" in result.errors[0]
    nodes = {n.qualname: n for n in result.nodes}
    assert nodes[""].renderings[DEPTH_FULL] == source
    assert nodes["Broken"].uko_type == "uko-py:Class"
    assert nodes["Broken.ok"].uko_type == "uko-py:Method"
    assert nodes["Broken.ok"].parent == nodes["Broken"].uri
    assert (nodes["Broken.ok"].start_line, nodes["Broken.ok"].end_line) == (4, 5)
    assert nodes["Broken"].end_line == 8
    assert nodes["after"].renderings[DEPTH_FULL] == "def after():\n    pass"


def test_invalid_utf8_and_null_bytes_do_not_raise(tmp_path: Path) -> None:
    """Undecodable bytes are replaced and reported by reading; NUL bytes fall back to lines."""
    path = tmp_path / "latin.py"
    path.write_bytes(b'NAME = "caf\xe9"\n\ndef greet():\n    return NAME\n')
    text, errors = read_text(path)
    assert errors and "invalid UTF-8" in errors[0]
    result = analyze(path, "latin.py", text)
    assert result.errors == []
    nodes = {n.qualname: n for n in result.nodes}
    assert nodes["NAME"].renderings[DEPTH_SIGNATURES] == 'NAME = "caf\ufffd"'
    assert ("uko:dependsOn", uri("latin.py", "NAME")) not in nodes["greet"].edges
    nul = analyze(tmp_path / "nul.py", "nul.py", "def f():\n    return '\x00'\n")
    assert nul.errors and "nul.py" in nul.errors[0]
    assert [n.qualname for n in nul.nodes] == ["", "f"]


def test_deeply_nested_code_does_not_raise() -> None:
    """Pathological nesting is reported instead of crashing the indexer."""
    source = "x = " + "(" * 300 + "1" + ")" * 300 + "\n"
    result = analyze(Path("deep.py"), "deep.py", source)
    assert result.nodes[0].qualname == ""


def test_supports() -> None:
    """Python files by suffix, and scripts by their ``#!`` line."""
    analyzer = PythonAnalyzer()
    assert analyzer.supports(Path("a.py"), b"")
    assert analyzer.supports(Path("stubs/a.pyi"), b"")
    assert analyzer.supports(Path("bin/tool"), b"#!/usr/bin/env python3\nprint(1)\n")
    assert not analyzer.supports(Path("bin/tool"), b"#!/bin/sh\n")
    assert not analyzer.supports(Path("a.md"), b"")


@pytest.mark.parametrize(
    ("relative", "expected"),
    [
        ("cleveragents-core/src/cleveragents/registry.py", "cleveragents.registry"),
        ("src/pkg/__init__.py", "pkg"),
        ("click/core.py", "click.core"),
        ("plugins/cleveragents-acms/tests/test_files.py", "tests.test_files"),
        ("setup.py", "setup"),
    ],
)
def test_module_names(relative: str, expected: str) -> None:
    """Dotted module names come from the path, below ``src/`` when there is one."""
    assert module_name_for(None, relative) == expected


def test_packages_are_found_on_disk(tmp_path: Path) -> None:
    """Without ``src/``, enclosing folders with ``__init__.py`` make the package name."""
    (tmp_path / "proj" / "app" / "sub").mkdir(parents=True)
    (tmp_path / "proj" / "app" / "__init__.py").write_text("")
    (tmp_path / "proj" / "app" / "sub" / "__init__.py").write_text("")
    module = tmp_path / "proj" / "app" / "sub" / "views.py"
    module.write_text("x = 1\n")
    assert module_name_for(module, "proj/app/sub/views.py") == "app.sub.views"
    # A nested package's __init__ is named from the top package too, so its relative
    # imports name the right modules; also when the top package is the resource's root
    # folder (the resource is proj/), as Django's django/db/models/__init__.py.
    nested = tmp_path / "proj" / "app" / "sub" / "__init__.py"
    nested.write_text("from .views import x\nfrom .. import helpers\n")
    assert module_name_for(nested, "proj/app/sub/__init__.py") == "app.sub"
    assert module_name_for(nested, "app/sub/__init__.py") == "app.sub"
    imports = analyze(nested, "app/sub/__init__.py", nested.read_text())
    targets = {target for node in imports.nodes for _, target in node.edges}
    assert {"symbol:app.sub.views.x", "symbol:app.helpers"} <= targets
    package = analyze(tmp_path / "proj" / "app" / "__init__.py", "proj/app/__init__.py", "")
    assert package.nodes[0].uko_type == "uko-py:Package"
    assert package.nodes[0].name == "app"
