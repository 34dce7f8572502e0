"""No import cycles among the modules of the Python package (python/qcnsim).

The graph is built statically with :mod:`ast` from the source files, so this test neither imports
qcnsim nor needs its compiled extension. Every import statement counts, at module level and
inside functions alike: an import moved into a function still makes a cycle, it only hides it
until the function runs. Resolution:

* ``import qcnsim.x`` and ``from qcnsim.x import y`` (absolute) and ``from .x import y``,
  ``from ..x import y`` (relative) give an edge to module ``qcnsim.x``;
* ``from . import x`` / ``from qcnsim import x`` give an edge to submodule ``qcnsim.x`` when
  ``x`` is one, else (a function, class or constant of the package's ``__init__``) to the
  package ``qcnsim`` itself;
* ``importlib.import_module("qcnsim.x")`` with a literal name counts too (a computed name
  cannot be followed statically).

The parent packages that Python also initialises on the way to a submodule are not edges: every
module would then depend on ``qcnsim/__init__.py``, and ``qcnsim/__init__.py`` on most modules.
A compiled module (``_core``, known from its ``.pyi`` stub or shared library) is a leaf.
"""

from __future__ import annotations

import ast
from collections import deque
from pathlib import Path
from typing import Dict, List, Optional, Set, Tuple

PKG_NAME = "qcnsim"
PKG_DIR = Path(__file__).resolve().parents[1] / "python" / PKG_NAME

# An edge's origin: (file, line, "module level" or "in a function").
Where = Tuple[Path, int, str]
Graph = Dict[str, Set[str]]


def package_modules(pkg_dir: Path, pkg_name: str) -> Dict[str, Optional[Path]]:
    """Every module of the package: dotted name -> its source file (None for a compiled module
    with no Python source, a leaf of the graph)."""
    mods: Dict[str, Optional[Path]] = {}
    for path in sorted(pkg_dir.rglob("*")):
        rel = path.relative_to(pkg_dir)
        if "__pycache__" in rel.parts or not path.is_file():
            continue
        # A directory of Python files is part of the package only if it and every directory
        # above it (up to pkg_dir) has an __init__.py.
        if any(not (pkg_dir.joinpath(*rel.parts[:i]) / "__init__.py").is_file() for i in range(len(rel.parts))):
            continue
        stem = path.name.split(".", 1)[0]
        if path.suffix == ".py":
            parts = list(rel.parts[:-1]) + ([] if stem == "__init__" else [stem])
            mods[".".join([pkg_name] + parts)] = path
        elif path.suffix in (".pyi", ".so", ".pyd"):
            name = ".".join([pkg_name] + list(rel.parts[:-1]) + [stem])
            mods.setdefault(name, None)
    return mods


def _known(name: str, mods: Dict[str, Optional[Path]]) -> Optional[str]:
    """The longest prefix of dotted ``name`` that is a module of the package."""
    parts = name.split(".")
    for n in range(len(parts), 0, -1):
        candidate = ".".join(parts[:n])
        if candidate in mods:
            return candidate
    return None


class _ImportVisitor(ast.NodeVisitor):
    def __init__(self, module: str, is_package: bool, path: Path, mods: Dict[str, Optional[Path]],
                 pkg_name: str) -> None:
        self.module = module
        self.package = module if is_package else module.rpartition(".")[0]
        self.path = path
        self.mods = mods
        self.pkg_name = pkg_name
        self.depth = 0  # how many functions enclose the current node
        self.edges: Dict[str, List[Where]] = {}

    def _add(self, target: Optional[str], node: ast.AST) -> None:
        if target is None or target == self.module:
            return
        where = (self.path, getattr(node, "lineno", 0), "in a function" if self.depth else "module level")
        wheres = self.edges.setdefault(target, [])
        if where not in wheres:  # `from .x import a, b` is one edge from one line
            wheres.append(where)

    def _ours(self, name: str) -> bool:
        return name == self.pkg_name or name.startswith(self.pkg_name + ".")

    def _function(self, node: ast.AST) -> None:
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _function

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if self._ours(alias.name):
                self._add(_known(alias.name, self.mods), node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            base_parts = self.package.split(".")
            if node.level - 1 >= len(base_parts):
                return  # beyond the top of the package: not ours
            base = ".".join(base_parts[: len(base_parts) - (node.level - 1)])
            if node.module:
                base += "." + node.module
        else:
            base = node.module or ""
        if not self._ours(base):
            return
        for alias in node.names:
            sub = f"{base}.{alias.name}"
            self._add(sub if alias.name != "*" and sub in self.mods else _known(base, self.mods), node)

    def visit_Call(self, node: ast.Call) -> None:
        f = node.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
        if (name in ("import_module", "__import__") and node.args and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str) and self._ours(node.args[0].value)):
            self._add(_known(node.args[0].value, self.mods), node)
        self.generic_visit(node)


def import_graph(pkg_dir: Path, pkg_name: str) -> Tuple[Graph, Dict[Tuple[str, str], List[Where]]]:
    """The graph module -> modules it imports (every module is a key), and where each edge comes
    from."""
    mods = package_modules(pkg_dir, pkg_name)
    graph: Graph = {m: set() for m in mods}
    origins: Dict[Tuple[str, str], List[Where]] = {}
    for mod, path in mods.items():
        if path is None:
            continue
        v = _ImportVisitor(mod, path.name == "__init__.py", path, mods, pkg_name)
        v.visit(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
        for target, wheres in v.edges.items():
            graph[mod].add(target)
            origins[(mod, target)] = wheres
    return graph, origins


def _sccs(graph: Graph) -> List[List[str]]:
    """Strongly connected components (Tarjan), each sorted, in a deterministic order."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    on_stack: Set[str] = set()
    stack: List[str] = []
    out: List[List[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def _shortest_cycle_through(graph: Graph, start: str, members: Set[str]) -> List[str]:
    """A shortest cycle [start, ..., start] within ``members`` (breadth-first search)."""
    prev: Dict[str, str] = {}
    queue = deque([start])
    while queue:
        v = queue.popleft()
        for w in sorted(graph.get(v, ())):
            if w == start:
                path = [v]
                while path[-1] != start:
                    path.append(prev[path[-1]])
                return path[::-1] + [start]
            if w in members and w not in prev:
                prev[w] = v
                queue.append(w)
    raise AssertionError(f"{start} is on no cycle")  # not reached for a member of a tangle


def tangles(graph: Graph) -> List[List[str]]:
    """The strongly connected components that hold a cycle."""
    return [c for c in _sccs(graph) if len(c) > 1 or c[0] in graph.get(c[0], ())]


def find_cycles(graph: Graph) -> List[List[str]]:
    """Cycles as [a, b, ..., a], [] if the graph has none. For each tangle (strongly connected
    component with more than one module, or a module importing itself) a shortest cycle through
    each of its modules, without repeats (each written from its first module in sorted order)."""
    found: Set[Tuple[str, ...]] = set()
    for comp in tangles(graph):
        for start in comp:
            ring = _shortest_cycle_through(graph, start, set(comp))[:-1]
            i = ring.index(min(ring))
            ring = ring[i:] + ring[:i]
            found.add(tuple(ring + ring[:1]))
    return [list(c) for c in sorted(found)]


def describe(graph: Graph, origins: Dict[Tuple[str, str], List[Where]], root: Path) -> str:
    lines = []
    for comp in tangles(graph):
        lines.append("  modules that import each other, directly or not: " + ", ".join(comp))
    lines.append("  cycles (a shortest one through each of those modules):")
    cycles = find_cycles(graph)
    for cycle in cycles:
        lines.append("    " + " -> ".join(cycle))
        for a, b in zip(cycle, cycle[1:]):
            for path, line, where in origins.get((a, b), []):
                try:
                    shown = path.relative_to(root)
                except ValueError:
                    shown = path
                lines.append(f"      {a} -> {b}: {shown}:{line} ({where})")
    return "\n".join(lines)


# -- the test ------------------------------------------------------------------------------------

def test_no_import_cycles_in_the_python_package():
    assert (PKG_DIR / "__init__.py").is_file(), f"package not found at {PKG_DIR}"
    graph, origins = import_graph(PKG_DIR, PKG_NAME)
    # Guard against a vacuous pass (wrong directory, a parser that sees no imports).
    assert len(graph) >= 10 and f"{PKG_NAME}.experiments" in graph, sorted(graph)
    assert f"{PKG_NAME}.plot" in graph[f"{PKG_NAME}.reproduce"], graph[f"{PKG_NAME}.reproduce"]
    cycles = find_cycles(graph)
    assert not cycles, (
        f"import cycle(s) among the modules of {PKG_DIR} (module-level and function-level imports "
        "both count; move the shared code to a lower module that imports neither side):\n"
        + describe(graph, origins, PKG_DIR.parents[1])
    )


# -- self-checks: the cycle finder and the import resolution -------------------------------------

def test_cycle_finder_detects_a_synthetic_cycle():
    assert find_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]
    assert find_cycles({"a": {"a"}}) == [["a", "a"]]
    assert find_cycles({"a": {"b", "c"}, "b": {"c"}, "c": set()}) == []
    two = find_cycles({"a": {"b"}, "b": {"a"}, "x": {"y"}, "y": {"z"}, "z": {"x"}, "q": {"a", "x"}})
    assert two == [["a", "b", "a"], ["x", "y", "z", "x"]]


def test_import_resolution_on_a_synthetic_package(tmp_path):
    pkg = tmp_path / "qcnsim"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from .low import helper\nVERSION = '1'\n")
    (pkg / "_core.pyi").write_text("def version() -> str: ...\n")
    (pkg / "low.py").write_text("import os\n\ndef helper():\n    return os.sep\n")
    (pkg / "mid.py").write_text(
        "from . import _core, low\n"           # submodules (one compiled)
        "from .low import helper\n"            # a name from module low
        "def f():\n"
        "    from . import VERSION\n"          # a name of the package's __init__
        "    import qcnsim.top\n"              # absolute, inside a function
        "    return VERSION\n")
    (pkg / "top.py").write_text("import importlib\nfrom qcnsim import mid\n"
                                "importlib.import_module('qcnsim.sub.deep')\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "deep.py").write_text(
        "from .. import low\nfrom ..mid import f\nfrom . import other\n"
        "class C:\n    def m(self):\n        from ..sub import other as o\n        return o\n")
    (pkg / "sub" / "other.py").write_text("from qcnsim.sub import deep\n")
    graph, origins = import_graph(pkg, "qcnsim")
    assert graph == {
        "qcnsim": {"qcnsim.low"},
        "qcnsim._core": set(),
        "qcnsim.low": set(),
        "qcnsim.mid": {"qcnsim._core", "qcnsim.low", "qcnsim", "qcnsim.top"},
        "qcnsim.top": {"qcnsim.mid", "qcnsim.sub.deep"},
        "qcnsim.sub": set(),
        "qcnsim.sub.deep": {"qcnsim.low", "qcnsim.mid", "qcnsim.sub.other"},
        "qcnsim.sub.other": {"qcnsim.sub.deep"},
    }
    assert origins[("qcnsim.mid", "qcnsim.top")] == [(pkg / "mid.py", 5, "in a function")]
    assert origins[("qcnsim.sub.deep", "qcnsim.sub.other")] == [
        (pkg / "sub" / "deep.py", 3, "module level"), (pkg / "sub" / "deep.py", 6, "in a function")]
    assert find_cycles(graph) == [
        ["qcnsim.mid", "qcnsim.top", "qcnsim.mid"],
        ["qcnsim.sub.deep", "qcnsim.sub.other", "qcnsim.sub.deep"],
    ]
