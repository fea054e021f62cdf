"""Google-style docstring sections on the public API of the sampler, target and metric layers (issue 43).

mkdocs.yml declares Google-style docstrings: free text, then ``Args:`` (each parameter, ``name: meaning``) and
``Returns:`` sections; the types are in the signatures. This test walks the source files of ``samplers/``,
``targets/`` (with ``targets/noise/``) and ``reference/metrics/`` with :mod:`ast` (nothing is imported) and checks
every public function and method:

- public: a module-level function, or a method of a public class (a module-level class, or a class inside one,
  whose name has no leading underscore), whose own name has no leading underscore, in any module of these
  packages (an underscore-prefixed module such as ``samplers/_langevin.py`` is shared API of its layer);
- exempt: dunder methods, ``@property`` (and ``cached_property``, setters and deleters: those need only a
  docstring, checked on its own), names starting with ``_`` and functions nested in functions; an
  ``@abc.abstractmethod`` must comply;
- a function taking parameters (``self``/``cls`` of a method aside, ``*args``/``**kwargs`` included) has a
  docstring with an ``Args:`` section that names each of them;
- a function whose body (nested functions, lambdas and classes aside) holds ``return <value>`` (not a bare
  ``return`` or ``return None``), ``yield`` or ``yield from`` has a ``Returns:`` section.

Deterministic; no JAX."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("samplers", "targets", "reference/metrics")

_PROPERTY_DECORATORS = {"property", "cached_property", "setter", "getter", "deleter"}
_SECTION = re.compile(r"^(\s*)(Args|Returns):\s*$", re.MULTILINE)


def _decorator_names(node: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    names = set()
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if isinstance(target, ast.Name):
            names.add(target.id)
        elif isinstance(target, ast.Attribute):
            names.add(target.attr)
    return names


def _parameters(node: ast.FunctionDef | ast.AsyncFunctionDef, method: bool) -> list[str]:
    args = node.args
    positional = [a.arg for a in [*args.posonlyargs, *args.args]]
    if method and "staticmethod" not in _decorator_names(node) and positional:
        positional = positional[1:]  # self or cls
    names = [*positional, *(a.arg for a in args.kwonlyargs)]
    if args.vararg is not None:
        names.append("*" + args.vararg.arg)
    if args.kwarg is not None:
        names.append("**" + args.kwarg.arg)
    return names


def _own_nodes(node: ast.AST):
    """The nodes of ``node``'s body, not descending into nested functions, lambdas or classes."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            continue
        yield child
        yield from _own_nodes(child)


def _returns_a_value(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    for child in _own_nodes(node):
        if isinstance(child, ast.Yield | ast.YieldFrom):
            return True
        if isinstance(child, ast.Return) and child.value is not None and not (
                isinstance(child.value, ast.Constant) and child.value.value is None):
            return True
    return False


def _section(docstring: str, name: str) -> str | None:
    """The text of section ``name`` ("Args" or "Returns") of a Google-style docstring, None where it has none."""
    for match in _SECTION.finditer(docstring):
        if match.group(2) != name:
            continue
        indent = len(match.group(1))
        lines = []
        for line in docstring[match.end():].splitlines()[1:]:
            if line.strip() and len(line) - len(line.lstrip()) <= indent:
                break
            lines.append(line)
        return "\n".join(lines)
    return None


def _documented_names(args_section: str) -> set[str]:
    """The parameter names an ``Args:`` section documents: its least indented ``name: text`` lines."""
    lines = [line for line in args_section.splitlines() if line.strip()]
    if not lines:
        return set()
    indent = min(len(line) - len(line.lstrip()) for line in lines)
    names = set()
    for line in lines:
        if len(line) - len(line.lstrip()) == indent:
            match = re.match(r"\s*(\*{0,2}\w+)\s*(\([^)]*\))?\s*:", line)
            if match:
                names.add(match.group(1))
    return names


def _problems(node: ast.FunctionDef | ast.AsyncFunctionDef, method: bool) -> list[str]:
    docstring = ast.get_docstring(node)
    if docstring is None:
        return ["no docstring"]
    problems = []
    parameters = _parameters(node, method)
    if parameters:
        args = _section(docstring, "Args")
        if args is None:
            problems.append("no Args: section")
        else:
            missing = [p for p in parameters if p not in _documented_names(args)]
            if missing:
                problems.append(f"Args: does not name {', '.join(missing)}")
    if _returns_a_value(node) and _section(docstring, "Returns") is None:
        problems.append("no Returns: section")
    return problems


def _public_functions(tree: ast.Module, properties: bool = False):
    """(qualified name, node, is a method) for each public function and method of a module (with
    ``properties``: for each public property instead)."""
    def walk(body, prefix: str, in_class: bool):
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                is_property = bool(_decorator_names(node) & _PROPERTY_DECORATORS)
                if node.name.startswith("_") or is_property != properties:
                    continue
                yield prefix + node.name, node, in_class
            elif isinstance(node, ast.ClassDef):
                if not node.name.startswith("_"):
                    yield from walk(node.body, f"{prefix}{node.name}.", True)
            elif isinstance(node, ast.If | ast.Try):
                # definitions under a module- or class-level ``if``/``try`` are definitions of that level
                for block in (node.body, node.orelse, getattr(node, "finalbody", []),
                              *(handler.body for handler in getattr(node, "handlers", []))):
                    yield from walk(block, prefix, in_class)

    yield from walk(tree.body, "", False)


def _trees():
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            yield path, ast.parse(path.read_text(), filename=str(path))


def offenders() -> list[str]:
    """``path:line name: problem`` for each public function or method of the three packages that lacks a section."""
    found = []
    for path, tree in _trees():
        for name, node, method in _public_functions(tree):
            for problem in _problems(node, method):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} {name}: {problem}")
    return found


def test_the_walk_finds_the_public_api():
    """The walk sees the layers' public functions (a wrong path would make the main test pass vacuously)."""
    counts = {}
    for package in PACKAGES:
        count = 0
        for path in (ROOT / package).rglob("*.py"):
            count += sum(1 for _ in _public_functions(ast.parse(path.read_text())))
        counts[package] = count
    assert all(count >= 20 for count in counts.values()), counts


def test_the_checker_sees_missing_sections():
    """The checks themselves: a missing Args: or Returns: section, an undocumented parameter, an abstract method."""
    source = '''
import abc

def f(x, y):
    """First line.

    Args:
        x: the first.

    Returns:
        x.
    """
    return x

def g():
    """No parameters, nothing returned."""
    return

def _private(x):
    return x

class Public:
    def method(self, a):
        """Text, no sections."""
        yield a

    @abc.abstractmethod
    def abstract(self, b):
        """Text, no sections."""

    @property
    def value(self):
        return 1

    def __len__(self):
        return 0

class _Private:
    def method(self, a):
        return a
'''
    tree = ast.parse(source)
    found = {name: _problems(node, method) for name, node, method in _public_functions(tree)}
    assert found == {
        "f": ["Args: does not name y"],
        "g": [],
        "Public.method": ["no Args: section", "no Returns: section"],
        "Public.abstract": ["no Args: section"],
    }


def test_every_public_function_has_args_and_returns_sections():
    found = offenders()
    assert not found, (f"{len(found)} public functions or methods of {', '.join(PACKAGES)} lack Google-style "
                       "docstring sections (Args: naming each parameter, Returns: where a value is returned):\n"
                       + "\n".join(found))


def test_every_public_property_has_a_docstring():
    """A property needs no sections, only a docstring saying what it returns."""
    found = [f"{path.relative_to(ROOT)}:{node.lineno} {name}" for path, tree in _trees()
             for name, node, _ in _public_functions(tree, properties=True) if ast.get_docstring(node) is None]
    assert not found, "public properties without a docstring:\n" + "\n".join(found)
