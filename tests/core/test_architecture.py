"""The map is true: docs/architecture.md's table of packages matches the tree, no module
passes 500 lines, no page imports a repository, and the packages' import graph (top
level, and web's own sub-packages) has no cycle. The layers themselves are
import-linter's contract (pyproject.toml, ``make lint``)."""

from __future__ import annotations

import re
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "anonbox"
MAP = ROOT / "docs" / "architecture.md"
MAX_LINES = 500

# A row of the map's table: | `account/` | `router` `service` ... | what it is |
_ROW = re.compile(r"^\| `(?P<package>[\w/]+)/` \| (?P<files>(?:`\w+` ?)+) \|", re.M)


def _mapped() -> dict[str, set[str]]:
    return {
        m["package"]: set(re.findall(r"`(\w+)`", m["files"]))
        for m in _ROW.finditer(MAP.read_text())
    }


def _packages() -> set[str]:
    return {
        str(init.parent.relative_to(SRC))
        for init in SRC.rglob("__init__.py")
        if init.parent != SRC and "migrations" not in init.parts
    }


def test_the_map_lists_every_package_with_files_it_has() -> None:
    mapped = _mapped()
    assert mapped.keys() == _packages()
    for package, files in mapped.items():
        missing = {f for f in files if not (SRC / package / f"{f}.py").is_file()}
        assert not missing, f"the map says {package}/ has {sorted(missing)}"


def test_the_map_names_every_module_of_a_domain() -> None:
    """Not only what it has: a module the map leaves out is a module it does not explain."""
    for package, files in _mapped().items():
        present = {p.stem for p in (SRC / package).glob("*.py") if p.stem != "__init__"}
        assert present <= files, f"{package}/ has {sorted(present - files)} off the map"


def test_no_module_passes_500_lines() -> None:
    long = {
        str(p.relative_to(SRC)): n
        for p in SRC.rglob("*.py")
        if (n := len(p.read_text().splitlines())) > MAX_LINES
    }
    assert not long


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("anonbox", cache_dir=None)


def test_no_page_imports_a_repository(graph: grimp.ImportGraph) -> None:
    pages = graph.find_descendants("anonbox.web")
    found = {
        (page, imported)
        for page in pages
        for imported in graph.find_modules_directly_imported_by(page)
        if imported.rsplit(".", 1)[-1] == "repository"
    }
    assert not found


def _cycle(graph: grimp.ImportGraph, nodes: list[str]) -> list[str] | None:
    """A cycle among ``nodes`` (packages or modules, each standing for all below it)."""

    def node_of(module: str) -> str | None:
        owners = [n for n in nodes if module == n or module.startswith(n + ".")]
        return max(owners, key=len) if owners else None

    edges: dict[str, set[str]] = {n: set() for n in nodes}
    for module in graph.modules:
        source = node_of(module)
        for imported in graph.find_modules_directly_imported_by(module):
            target = node_of(imported)
            if source and target and source != target:
                edges[source].add(target)
    state: dict[str, int] = {}  # 1 on the path, 2 done

    def visit(node: str, path: list[str]) -> list[str] | None:
        state[node] = 1
        for after in sorted(edges[node]):
            if state.get(after) == 1:
                return [*path[path.index(after) :], after] if after in path else [node, after]
            if after not in state and (found := visit(after, [*path, after])):
                return found
        state[node] = 2
        return None

    for node in nodes:
        if node not in state and (found := visit(node, [node])):
            return found
    return None


def test_no_cycle_between_packages(graph: grimp.ImportGraph) -> None:
    top = sorted(m for m in graph.find_children("anonbox"))
    assert "anonbox.identity" in top
    assert "anonbox.account" in top
    assert _cycle(graph, top) is None


def test_no_cycle_between_webs_sub_packages(graph: grimp.ImportGraph) -> None:
    web = sorted(graph.find_children("anonbox.web"))
    assert {"anonbox.web.infra", "anonbox.web.pages", "anonbox.web.cards"} <= set(web)
    assert _cycle(graph, web) is None


def test_the_cycle_check_finds_a_cycle() -> None:
    copy = grimp.build_graph("anonbox", cache_dir=None)
    copy.add_import(importer="anonbox.core.settings", imported="anonbox.messages.service")
    assert _cycle(copy, sorted(copy.find_children("anonbox"))) is not None


def test_the_trusted_proxies_are_read_in_one_place() -> None:
    """Settings → ``wiring``'s one ``ClientAddresses``; everything else asks it (the
    ``ClientAddress`` dependency, the posting object, the app's state)."""
    readers = sorted(
        str(path.relative_to(SRC))
        for path in SRC.rglob("*.py")
        if "trusted_proxies" in path.read_text()
    )
    assert readers == ["core/settings.py", "wiring.py"]
