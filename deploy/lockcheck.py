"""The image's Python packages come from requirements.lock, but only those the service runs.

The lock pins the test and tool packages too (pytest, ruff, schemathesis...), which have no
place in a production image. So the image installs the project's runtime dependencies and its
``embedded`` extra with the lock as pip *constraints*, then checks that every installed
distribution is pinned in the lock at exactly that version: the image never holds a version
the test suite did not run with.

    python3 lockcheck.py requirements pyproject.toml   # print the runtime requirement lines
    /opt/venv/bin/python lockcheck.py verify requirements.lock
"""

from __future__ import annotations

import re
import sys
import tomllib
from importlib import metadata
from pathlib import Path

# Installed by venv itself, not by the lock; the project is installed from source.
NOT_LOCKED = {"pip", "setuptools", "wheel", "docservice"}


def normalize(name: str) -> str:
    """PEP 503 name normalisation (``PyYAML`` and ``pyyaml`` are one project)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def runtime_requirements(pyproject: Path) -> list[str]:
    """The project's dependencies plus its ``embedded`` extra, as written in pyproject.toml."""
    project = tomllib.loads(pyproject.read_text())["project"]
    return [*project["dependencies"], *project["optional-dependencies"]["embedded"]]


def lock_pins(lock: Path) -> dict[str, str]:
    """``name == version`` lines of the lock, by normalised name."""
    pins = {}
    for line in lock.read_text().splitlines():
        line = line.split("#", 1)[0].split(";", 1)[0].strip()  # drop comments and markers
        if "==" in line:
            name, version = line.split("==", 1)
            pins[normalize(name)] = version.strip()
    return pins


def unlocked(lock: Path) -> list[str]:
    """Installed distributions that the lock does not pin at their installed version."""
    pins = lock_pins(lock)
    problems = []
    for dist in metadata.distributions():
        name = normalize(dist.metadata["Name"])
        if name in NOT_LOCKED:
            continue
        if pins.get(name) != dist.version:
            problems.append(f"{name}=={dist.version} (lock: {pins.get(name, 'absent')})")
    return sorted(problems)


def main(argv: list[str]) -> int:
    """Command line: ``requirements PYPROJECT`` or ``verify LOCK``."""
    if len(argv) == 3 and argv[1] == "requirements":
        print("\n".join(runtime_requirements(Path(argv[2]))))
        return 0
    if len(argv) == 3 and argv[1] == "verify":
        problems = unlocked(Path(argv[2]))
        for problem in problems:
            print(f"not pinned by the lock: {problem}", file=sys.stderr)
        return 1 if problems else 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
