"""Every third-party package the product code imports is declared in ``pyproject.toml``.

A package that arrives only as another's dependency can vanish with that package's next
release; declaring it (with the tested version) keeps a fresh machine on what CI ran.
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PRODUCT = ("tornado_app", "render_pool", "store")
OWN = set(PRODUCT) | {"bench", "tests"}


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _declared() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    specs = list(project["dependencies"])
    for extra in project.get("optional-dependencies", {}).values():
        specs.extend(extra)
    return {_normalise(re.split(r"[=<>!~\[; ]", spec, maxsplit=1)[0]) for spec in specs}


def _imported_top_levels() -> dict[str, str]:
    """Top-level module -> a file importing it, over the product packages."""
    found: dict[str, str] = {}
    for package in PRODUCT:
        for path in sorted((ROOT / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
            for node in ast.walk(tree):
                names: list[str] = []
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                for name in names:
                    found.setdefault(name.split(".")[0], str(path.relative_to(ROOT)))
    return found


def test_every_imported_distribution_is_declared() -> None:
    declared = _declared()
    owners = packages_distributions()
    missing = []
    for module, where in sorted(_imported_top_levels().items()):
        if module in OWN or module in sys.stdlib_module_names or module == "__future__":
            continue
        dists = {_normalise(d) for d in owners.get(module, [])}
        assert dists, f"{module} (imported by {where}) belongs to no installed distribution"
        if not dists & declared:
            missing.append(f"{module} ({', '.join(sorted(dists))}) imported by {where}")
    assert not missing, "imported but not declared in pyproject.toml: " + "; ".join(missing)
