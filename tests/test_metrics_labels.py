"""Labels of ``/metrics`` that a caller can influence stay a fixed, small set: made-up methods,
paths and form values do not add series (issue 20: 42,000 requests with random methods grew
the exposition from 75 KB to 7.9 MB)."""

from __future__ import annotations

import dataclasses
import random
import re
import string

import pytest
from tornado.httpclient import AsyncHTTPClient

from tests.conftest import post_form
from tornado_app.app import make_app
from tornado_app.metrics import KNOWN_METHODS, method_label

OPERATOR = "operator-token-for-metrics-label-tests"
SERIES = re.compile(r'^http_requests_total\{(.*)\} ([0-9.e+]+)$', re.M)


@pytest.fixture
def app(docs_services):
    docs_services.settings = dataclasses.replace(docs_services.settings,
                                                 docs_api_token=OPERATOR)
    return make_app(docs_services)


def _labels(text: str) -> list[dict[str, str]]:
    return [dict(re.findall(r'(\w+)="([^"]*)"', m.group(1))) for m in SERIES.finditer(text)]


def test_method_label_keeps_standard_methods_only() -> None:
    for method in KNOWN_METHODS:
        assert method_label(method) == method
    for odd in ("FOO", "get", "PROPFIND", "", None, "X" * 500):
        assert method_label(odd) == "OTHER"


async def test_random_methods_paths_and_targets_add_no_series(api, http_server_client):
    client = AsyncHTTPClient()
    rng = random.Random(20)
    base = http_server_client.get_url("")

    async def odd_request(i: int) -> int:
        method = "".join(rng.choice(string.ascii_uppercase) for _ in range(12))
        path = "/" + "".join(rng.choice(string.ascii_lowercase) for _ in range(10)) + f"/{i}"
        resp = await client.fetch(base + path, method=method, raise_error=False,
                                  allow_nonstandard_methods=True, body=None)
        return resp.code

    for i in range(5):  # the first of each series exists once; then it only counts
        await odd_request(i)
    for target in ("docx", "pdf", "a" * 40, "../../x"):
        await post_form(api, "/md/convert", {"markdown_text": "# T", "target": target})
    before = (await api.call("GET", "/metrics", token=OPERATOR)).raw.decode()
    codes = {await odd_request(i) for i in range(5, 305)}
    for i in range(30):
        await post_form(api, "/md/convert", {"markdown_text": "# T", "target": f"fmt{i}"})
        await post_form(api, "/api/convert", {"to_formats": f"fmt{i}"},
                        {"file": ("f.docx", b"PK\x03\x04")})
    after = (await api.call("GET", "/metrics", token=OPERATOR)).raw.decode()

    assert codes <= {404, 405}
    series = _labels(after)
    assert {s["method"] for s in series} <= KNOWN_METHODS | {"OTHER"}
    other = [s for s in series if s["method"] == "OTHER"]
    assert {s["route"] for s in other} == {"NotFoundHandler"}
    assert {s["route"] for s in series} <= {"NotFoundHandler", "MetricsHandler",
                                            "MarkdownConvertHandler", "ConvertHandler"}
    counted = sum(float(m.group(2)) for m in SERIES.finditer(after)
                  if 'method="OTHER"' in m.group(1))
    assert counted == 305
    formats = set(re.findall(r'conversions_total\{format="([^"]*)"', after))
    assert not any(f.startswith("fmt") or len(f) > 20 for f in formats), formats
    # the exposition did not grow with the made-up values (only counts and the latency
    # histogram buckets of the routes already seen change)
    assert len(after.splitlines()) <= len(before.splitlines()) + 40, \
        (len(before.splitlines()), len(after.splitlines()))
