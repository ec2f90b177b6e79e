"""Bucket policies: the public-read policy and a semantic comparison of policies."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any


def public_read_policy(bucket: str) -> dict[str, Any]:
    """Anonymous ``s3:GetObject`` on every object of ``bucket`` (listing stays private)."""
    return {
        "Version": "2012-10-17",
        "Statement": [{
            "Effect": "Allow",
            "Principal": {"AWS": ["*"]},
            "Action": ["s3:GetObject"],
            "Resource": [f"arn:aws:s3:::{bucket}/*"],
        }],
    }


def _as_set(value: Any) -> frozenset[str]:
    if value is None:
        return frozenset()
    if isinstance(value, str):
        return frozenset([value])
    return frozenset(str(v) for v in value)


def _statement_key(st: Mapping[str, Any]) -> tuple[Any, ...]:
    principal = st.get("Principal")
    if isinstance(principal, Mapping):
        principal = _as_set(principal.get("AWS"))
    else:
        principal = _as_set(principal)
    return (
        str(st.get("Effect", "")),
        principal,
        _as_set(st.get("Action")),
        _as_set(st.get("Resource")),
        json.dumps(st.get("Condition"), sort_keys=True),
    )


def policy_statements(policy: Mapping[str, Any] | str | None) -> set[tuple[Any, ...]]:
    """Statements of a bucket policy in a normalised, comparable form (strings and one-element
    lists are equal, ``"*"`` equals ``{"AWS": "*"}``, ``Sid`` is ignored)."""
    if not policy:
        return set()
    parsed: Mapping[str, Any] = json.loads(policy) if isinstance(policy, str) else policy
    statements = parsed.get("Statement", [])
    if isinstance(statements, Mapping):
        statements = [statements]
    return {_statement_key(st) for st in statements}


def policies_equal(a: Mapping[str, Any] | str | None, b: Mapping[str, Any] | str | None) -> bool:
    """Semantic comparison of two bucket policies (SeaweedFS normalises ``Action`` to a string)."""
    return policy_statements(a) == policy_statements(b)
