"""The layout of sessidx's own modules (issue 27), read from their source with `ast`: no import
cycle among them (counting imports inside functions too), no module reading another's private
(`_name`) names, a docstring on each, and the session key's `@host/` form read in keys.py only."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import ROOT

PACKAGE = ROOT / "sessidx"


def modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imports(name: str, path: Path, known: dict[str, Path]) -> tuple[set[str], list[str]]:
    """(the sessidx modules `name` imports, the private names it reads of another module)."""
    tree = ast.parse(path.read_text(), str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets: set[str] = set()
    private: list[str] = []
    aliases: dict[str, str] = {}  # a local name -> the sessidx module it is
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
            if not base.startswith("sessidx"):
                continue
            for alias in node.names:
                full = f"{base}.{alias.name}"
                target = full if full in known else base
                targets.add(target)
                aliases[alias.asname or alias.name] = target
                if target == base and alias.name.startswith("_") and not alias.name.startswith("__") and base != name:
                    private.append(f"{name}: from {base} import {alias.name}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("sessidx"):
                    targets.add(alias.name)
                    aliases[alias.asname or alias.name] = alias.name
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.attr.startswith("_")
                and not node.attr.startswith("__") and aliases.get(node.value.id, name) != name
                and aliases[node.value.id] in known):
            private.append(f"{name}: {aliases[node.value.id]}.{node.attr}")
    return {t for t in targets if t in known and t != name and t != "sessidx"}, private


def graph() -> tuple[dict[str, set[str]], list[str]]:
    known = modules()
    edges, private = {}, []
    for name, path in known.items():
        edges[name], theirs = imports(name, path, known)
        private += theirs
    return edges, private


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycle_among_sessidx_modules():
    edges, _ = graph()
    assert "sessidx.commands" in edges["sessidx.cli"]  # the probe sees the imports inside functions
    assert cycles(edges) == []


def test_the_cycle_probe_can_fail():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_module_reads_another_module_s_private_names():
    _, private = graph()
    assert private == []


def test_the_private_probe_can_fail(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("from sessidx.cli import _parse\nfrom sessidx import commands\ncommands._secret()\n")
    known = {**modules(), "sessidx.probe": probe}
    _, private = imports("sessidx.probe", probe, known)
    assert private == ["sessidx.probe: from sessidx.cli import _parse", "sessidx.probe: sessidx.commands._secret"]


def test_every_module_says_its_job():
    for name, path in modules().items():
        doc = ast.get_docstring(ast.parse(path.read_text()))
        assert doc and len(doc.split()) >= 4, f"{name} has no docstring saying its job"


def test_only_keys_py_reads_the_host_key_form():
    """`@host/app:id` is made and read in keys.py: no other module tests a session key for its
    `@` (an ssh destination's `user@host` is another thing)."""
    for name, path in modules().items():
        for node in ast.walk(ast.parse(path.read_text())):
            if (name != "sessidx.keys" and isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "startswith" and isinstance(node.func.value, ast.Name)
                    and node.func.value.id in ("ident", "key") and node.args
                    and isinstance(node.args[0], ast.Constant) and node.args[0].value == "@"):
                raise AssertionError(f"{name}: {ast.unparse(node)}")
