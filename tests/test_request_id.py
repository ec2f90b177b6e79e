"""One request, one id: the X-Request-Id of an error response is the id in every log line
of that request (Tornado re-runs ``set_default_headers`` from ``send_error()``)."""

from __future__ import annotations

import json
import logging
from types import SimpleNamespace

import pytest
import tornado.web

from tornado_app.http import BaseHandler, log_request
from tornado_app.logs import JsonFormatter
from tornado_app.metrics import Metrics
from tornado_app.settings import Settings


class FailingHandler(BaseHandler):
    """Logs a line, then fails the way a bug would: an uncaught exception (500)."""

    def get(self) -> None:
        logging.getLogger("tornado_app.test").warning("about to fail")
        raise RuntimeError("boom")


@pytest.fixture
def app():
    services = SimpleNamespace(settings=Settings(), metrics=Metrics())
    return tornado.web.Application([(r"/fail", FailingHandler)], services=services,
                                   log_function=log_request)


def _json_lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


@pytest.mark.parametrize("sent", [None, "caller-id-42"])
async def test_an_error_response_carries_the_id_of_its_log_lines(http_server_client, caplog,
                                                                 sent):
    caplog.set_level(logging.INFO)
    caplog.handler.setFormatter(JsonFormatter())  # formats at emit time, in the request's context
    headers = {"X-Request-Id": sent} if sent else {}
    response = await http_server_client.fetch("/fail", headers=headers, raise_error=False)
    assert response.code == 500
    request_id = response.headers["X-Request-Id"]
    if sent:
        assert request_id == sent
    lines = _json_lines(caplog.text)
    messages = {line["msg"] for line in lines}
    assert {"about to fail", "request"} <= messages
    assert any(line["msg"].startswith("Uncaught exception") for line in lines)
    assert {line["request_id"] for line in lines} == {request_id}
