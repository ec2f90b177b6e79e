"""Depth-first walks over the trees tests inspect: our document model and marko's
Markdown syntax tree. One definition each, so every test sees the same nodes."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import fields, is_dataclass
from typing import Any


def model_nodes(nodes: Iterable[Any]) -> list[Any]:
    """Every model node in and below ``nodes``, depth first: blocks, list items, table rows
    and cells, inlines (any list-valued dataclass field is followed)."""
    out: list[Any] = []
    for node in nodes:
        out.append(node)
        if is_dataclass(node):
            for field in fields(node):
                value = getattr(node, field.name)
                if isinstance(value, list):
                    out.extend(model_nodes(value))
    return out


def marko_nodes(node: Any) -> Iterator[Any]:
    """``node`` of a marko syntax tree and every element below it, depth first (text held
    as a plain string is not an element)."""
    yield node
    children = getattr(node, "children", None)
    if isinstance(children, list):
        for child in children:
            if not isinstance(child, str):
                yield from marko_nodes(child)
