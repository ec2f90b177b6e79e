"""Settings are declared once (tornado_app/settings.py): every field is reachable from its
environment variable, a bad value stops start-up naming the variable and the accepted form,
and docs/configuration.md is the document generated from the declarations."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tornado_app.settings import Settings, Spec, markdown, specs

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "configuration.md"


def test_the_configuration_document_is_generated_from_the_settings():
    assert DOC.read_text(encoding="utf-8") == markdown(), (
        "docs/configuration.md is stale: run `just config-doc`")
    for _, spec in specs():
        if spec.documented:
            assert f"| `{spec.env}` |" in DOC.read_text(encoding="utf-8")


@pytest.mark.slow
def test_the_generator_command_prints_the_document():
    """``python -m tornado_app.settings --markdown`` (what ``just config-doc`` runs)."""
    printed = subprocess.run([sys.executable, "-m", "tornado_app.settings", "--markdown"],
                             cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert printed == markdown()
    for _, spec in specs():
        if spec.documented:
            assert f"| `{spec.env}` |" in printed


def test_timeouts_accept_fractions_and_units():
    s = Settings.from_env({"JOB_TIMEOUT_SECONDS": "1.5", "PDF_RENDER_TIMEOUT": "2.5",
                           "OFFICE_TIMEOUT_SECONDS": "90s", "WEBHOOK_RETRY_SECONDS": "1.5h",
                           "SESSION_TTL_SECONDS": "1d", "HASH_WAIT_SECONDS": "500ms",
                           "FETCH_TIMEOUT_SECONDS": "2m"})
    assert (s.job_timeout_seconds, s.pdf_render_timeout, s.office_timeout_seconds) == (1.5, 2.5, 90)
    assert (s.webhook_retry_seconds, s.session_ttl_seconds) == (5400, 86400)
    assert (s.hash_wait_seconds, s.fetch_timeout_seconds) == (0.5, 120)
    assert isinstance(s.session_ttl_seconds, int)  # a Redis lifetime stays whole seconds
    with pytest.raises(SystemExit, match=r"SESSION_TTL_SECONDS must be a whole number of "
                                         r"seconds .*, got '1\.5'"):
        Settings.from_env({"SESSION_TTL_SECONDS": "1.5"})


def test_sizes_accept_binary_units_in_the_settings_own_unit():
    s = Settings.from_env({"MAX_UPLOAD_BYTES": "20M", "POOL_WORKER_MEMORY_MB": "2G",
                           "ARGON2_MEMORY_KIB": "64MiB", "MAX_JSON_BODY_BYTES": "131072",
                           "FETCH_MAX_BYTES": "1.5M"})
    assert (s.max_upload_bytes, s.worker_memory_mb, s.argon2_memory_kib) == (
        20 * 1024 * 1024, 2048, 65536)
    assert (s.max_json_body_bytes, s.fetch_max_bytes) == (131072, 1536 * 1024)
    with pytest.raises(SystemExit, match=r"POOL_WORKER_MEMORY_MB must be a whole number of "
                                         r"MiB or with a binary unit"):
        Settings.from_env({"POOL_WORKER_MEMORY_MB": "100K"})  # not a whole MiB


def _bad(spec: Spec) -> str | None:
    """A value the spec cannot read (None: every text is accepted)."""
    return {"int": "2.5x", "duration": "1 day", "size": "12 parsecs", "bool": "perhaps",
            "choice": "other", "list": "not an address"}.get(spec.kind)


def test_every_bad_value_names_the_variable_and_the_accepted_form():
    checked = 0
    for f, spec in specs():
        bad = _bad(spec)
        if bad is None or (spec.kind == "list" and spec.env != "TRUSTED_PROXIES"):
            continue  # free text, or lists of names (any name is one)
        with pytest.raises(SystemExit) as refused:
            Settings.from_env({spec.env: bad})
        default = getattr(Settings(), f.name)
        form = spec.accepted(isinstance(default, int) and not isinstance(default, bool))
        assert str(refused.value) == f"{spec.env} must be {form}, got {bad!r}", f.name
        checked += 1
    assert checked == sum(spec.kind in ("int", "duration", "size", "bool", "choice")
                          for _, spec in specs()) + 1


def test_values_outside_the_bounds_stop_start_up_or_move_to_the_bound():
    for f, spec in specs():
        if spec.low is None or spec.kind not in ("int", "duration", "size"):
            continue
        below = str(int(spec.low) - 1) if spec.kind != "duration" or spec.low >= 1 else "-1"
        if spec.clamp:
            assert getattr(Settings.from_env({spec.env: below}), f.name) == spec.low, f.name
        else:
            with pytest.raises(SystemExit, match=f"^{spec.env} must be .*{spec.bounds()}"):
                Settings.from_env({spec.env: below})
    assert Settings.from_env({"PRESIGN_EXPIRY_SECONDS": "30d"}).presign_expiry_seconds == 604800
    with pytest.raises(SystemExit, match="HASH_THREAD_NICE must be a whole number from 0 to 19"):
        Settings.from_env({"HASH_THREAD_NICE": "20"})


def test_weaker_password_hashing_than_owasp_stops_start_up():
    assert Settings.from_env({"ARGON2_MEMORY_KIB": "12M", "ARGON2_TIME_COST": "3"})
    with pytest.raises(SystemExit, match="ARGON2_MEMORY_KIB=12288 with ARGON2_TIME_COST=2 is "
                                         "weaker than OWASP"):
        Settings.from_env({"ARGON2_MEMORY_KIB": "12M"})


def _other(spec: Spec, default: Any) -> str:
    """A valid value of the spec that differs from its default."""
    if spec.kind == "bool":
        return "false" if default else "true"
    if spec.kind == "choice":
        return next(c for c in spec.choices if c != default)
    if spec.kind == "list":
        return "10.0.0.0/8" if spec.separators != "," else "x.example"
    if spec.kind == "path":
        return "/srv/elsewhere"
    if spec.kind == "custom":  # each custom setting's own form
        return {"PUBLIC_BASE_URL": "https://docs.example.test"}.get(
            spec.env, "ACME:/srv/acme;/srv/operator")
    if spec.kind == "text":
        return "something-else"
    number = int(default) + 1
    return str(number if spec.high is None else min(number, int(spec.high) - 1))


def test_every_field_is_reachable_from_its_variable():
    names = [spec.env for _, spec in specs() if spec.documented]
    assert len(names) == len(set(names))
    defaults = Settings()
    for f, spec in specs():
        assert isinstance(f.metadata.get("spec"), Spec), f"{f.name} has no setting spec"
        changed = Settings.from_env({spec.env: _other(spec, getattr(defaults, f.name))})
        assert getattr(changed, f.name) != getattr(Settings.from_env({}), f.name), f.name


def test_secrets_are_masked_and_left_out_of_the_repr():
    s = Settings.from_env({"S3_SECRET_KEY": "sk-value", "DOCS_API_TOKEN": "tok-value",
                           "WEBHOOK_SECRET": "wh-value", "S3_ACCESS_KEY": "ak-value",
                           "MONGO_URL": "mongodb://user:pw@db:27017"})
    view = s.public_view()
    assert {view[k] for k in ("s3_secret_key", "docs_api_token", "webhook_secret",
                              "s3_access_key")} == {"****"}
    assert view["mongo_url"] == "mongodb://****@db:27017"
    assert not any(v in repr(s) for v in ("sk-value", "tok-value", "wh-value", "ak-value"))


def test_credentials_in_url_queries_are_masked_in_the_logged_settings():
    s = Settings.from_env({"REDIS_URL": "redis://cache:6379/0?password=pw-value&db=1",
                           "MONGO_URL": "mongodb://u:pw2@db/?authSource=admin&tlsCertificateKeyFilePassword=kp"})
    view = s.public_view()
    assert view["redis_url"] == "redis://cache:6379/0?password=****&db=1"
    assert view["mongo_url"] == ("mongodb://****@db/?authSource=admin"
                                 "&tlsCertificateKeyFilePassword=****")
    assert not any(v in str(view) for v in ("pw-value", "pw2", "=kp"))


def test_the_image_count_of_a_markdown_document_is_a_setting():
    from tornado_app.documents.markdown import gather_images

    svc = SimpleNamespace(settings=Settings.from_env({"MARKDOWN_IMAGES_MAX_COUNT": "2"}))
    sources = ["ftp://a/1.png", "ftp://a/2.png", "ftp://a/3.png"]  # refused without a fetch
    fetched, refused = asyncio.run(gather_images(svc, sources, Path("/nonexistent")))
    assert fetched == {}
    assert refused["ftp://a/3.png"] == "more than 2 images"
    assert refused["ftp://a/1.png"] == "only http(s) images are fetched"


def test_archive_limits_are_settings():
    import io
    import zipfile

    from render_pool.errors import UnsafeArchive
    from tornado_app.documents.batches.batch_service import process_archive

    async def run(fn, *args):  # the storage's worker thread, inline
        return fn(*args)

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for i in range(3):
            zf.writestr(f"{i}.md", "# hi\n")
    for env, limit in (({"ARCHIVE_MAX_ENTRIES": "2"}, "entries"),
                       ({"ARCHIVE_MAX_UNPACKED_BYTES": "8"}, "unpacked")):
        svc = SimpleNamespace(settings=Settings.from_env(env), storage=SimpleNamespace(io=run))
        with pytest.raises(UnsafeArchive, match=limit):
            asyncio.run(process_archive(svc, "c1", buf.getvalue(), "a.zip"))


async def test_audit_retention_is_a_setting_and_a_change_applies_at_the_next_start(mongo_server):
    import uuid

    from store import indexes, mongo

    client, db = mongo.connect(mongo_server.url, f"t_retention_{uuid.uuid4().hex[:10]}")
    try:
        for env, seconds in (({}, 90 * 86400), ({"AUDIT_RETENTION_SECONDS": "30d"}, 30 * 86400)):
            await indexes.ensure_indexes(db, Settings.from_env(env).audit_retention_seconds)
            info = await db.audit.index_information()
            assert info["time_ttl"]["expireAfterSeconds"] == seconds
    finally:
        await client.drop_database(db.name)
        client.close()


def test_the_ocr_engine_the_settings_accept_is_the_one_the_pool_workers_use():
    """``OCR_ENGINE`` is read once, by the settings at start-up; the pool's workers run the
    engine the settings read (handed over through ``render_pool.engine.config``)."""
    from render_pool.engine import config as engine_config
    from render_pool.engine.ocr import tesseract
    from tornado_app.documents.setup import engine_config_from_settings

    for value in ("cli", " cli", "CLI ", "api", " Api ", ""):
        settings = Settings.from_env({"OCR_ENGINE": value})
        with engine_config.configured(**engine_config_from_settings(settings)):
            assert engine_config.current().ocr_engine == settings.ocr_engine, repr(value)
            if settings.ocr_engine == "cli":
                assert tesseract.engine_name() == "cli", repr(value)
    with pytest.raises(SystemExit, match="OCR_ENGINE"):
        Settings.from_env({"OCR_ENGINE": "tesserocr"})
