"""LibreOffice cannot read the server's files or say where it runs (issue 30, item 1).

Canary files (a PNG of random pixels, a one-page PDF, a text file, an ODT and an ODS, each
carrying a unique word) lie outside any conversion job: in a folder of their own and in a
fake ``DATA_DIR``. Each hostile input of ``tests/office_link_fixtures.py`` points
LibreOffice at them (RTF ``INCLUDEPICTURE``/``INCLUDETEXT``, ODF pictures by ``file:///``,
absolute or ``../`` path, linked OLE objects, sections and sheets, fill, page and paragraph
background images, bullet images, Calc's ``INFO``/``CELL``/``WEBSERVICE``/``DDE`` and
external references, file-name fields). Nothing of a canary (its bytes, its word, its
folder), the kernel's release or a job folder may come back: through the whole reader, with
the sandbox alone (links left in), and with the link neutralising alone (no sandbox).

On the code before this change, the RTF ``INCLUDEPICTURE`` and ODP picture inputs returned
the canary PNG byte for byte (and the PDF as a PNG of its page), and the Calc ``INFO`` /
``CELL`` and file-name field inputs returned the kernel (``Linux 6.18``) and the job path.
"""

from __future__ import annotations

import io
import os
import re
import subprocess
import zipfile
from pathlib import Path

import pytest

from render_pool.engine import config as engine_config
from render_pool.engine.formats import ReadRequest
from render_pool.engine.jobs import ConvertOptions, convert_document
from render_pool.engine.model import Document, Image, Paragraph, Resource, Text, plain_text
from render_pool.engine.office import links as office_links
from render_pool.engine.office import output as office_output
from render_pool.engine.office import reader as office_lo
from render_pool.engine.office import rtf_links
from render_pool.engine.office import sandbox as office_sandbox
from render_pool.errors import ConversionFailed
from tests.office_fixtures import has_libreoffice, soffice_convert
from tests.office_link_fixtures import Canary, _cell, hostile_inputs, odf, random_png
from tornado_app.documents.setup import engine_config_from_settings
from tornado_app.settings import Settings

needs_lo = pytest.mark.skipif(not has_libreoffice(), reason="LibreOffice (soffice) not installed")
SANDBOXED = ReadRequest(office_timeout=60)  # LibreOffice's time limit in these tests
HOSTILE = sorted(hostile_inputs(Canary(Path("/x"), "w", *[Path("/x")] * 5)))
# the forms that reached the canary or the machine before the change
MAIN_FORMS = ("rtf INCLUDEPICTURE png", "rtf INCLUDEPICTURE pdf", "odp image", "odp image pdf",
              "odt image file uri", "odt image relative", "ods INFO CELL", "odt file-name field")


def machine_words() -> list[str]:
    """What names this machine in a converted text: the kernel as ``INFO`` shows it, and
    job folders as the host and the sandbox see them."""
    u = os.uname()
    return [u.release, f"{u.sysname} {'.'.join(u.release.split('.')[:2])}",
            "docservice-lo-job", office_sandbox.JOB, office_sandbox.PROFILE]


@pytest.fixture(scope="module")
def canaries(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Canary]:
    root = tmp_path_factory.mktemp("outside-the-job")
    return {"outside": Canary.make(root / "canary"),
            "data_dir": Canary.make(root / "data" / "tmp" / "canary")}


def assert_nothing_of(canary: Canary, content: str, images: list[bytes]) -> None:
    png = canary.png.read_bytes()
    assert not canary.secrets_in(content), content
    for word in machine_words():
        assert word not in content, (word, content)
    assert png not in images
    assert not images, [len(i) for i in images]  # the inputs hold no picture of their own


# ------------------------------------------------------------------ whole reader (slow)
@pytest.mark.slow
@needs_lo
@pytest.mark.parametrize("name", HOSTILE)
def test_no_hostile_input_reaches_a_file_outside_its_job(canaries, name, monkeypatch):
    monkeypatch.setenv("DATA_DIR", str(canaries["data_dir"].root.parents[1]))
    _, data = hostile_inputs(canaries["outside"])[name]
    out = convert_document(data, "markdown", options=ConvertOptions(read=SANDBOXED),
                           for_upload=True)
    assert_nothing_of(canaries["outside"], out.content, [i.data for i in out.images])
    assert any("LibreOffice" in n for n in out.notes)  # a fact, not a problem: a note
    assert any("removed before LibreOffice" in w for w in out.warnings), out.warnings


@pytest.mark.slow
@needs_lo
@pytest.mark.parametrize("name", MAIN_FORMS)
def test_nothing_of_a_canary_in_data_dir_comes_back_embedded(canaries, name, monkeypatch):
    """The same through the HTML export with images embedded as data URIs."""
    canary = canaries["data_dir"]
    monkeypatch.setenv("DATA_DIR", str(canary.root.parents[1]))
    _, data = hostile_inputs(canary)[name]
    out = convert_document(data, "html", options=ConvertOptions(read=SANDBOXED, images="embed"))
    assert "data:image" not in out.content
    assert_nothing_of(canary, out.content, [])


@pytest.mark.slow
@needs_lo
@pytest.mark.parametrize("name", HOSTILE)
def test_the_sandbox_alone_keeps_the_canary_out(canaries, name):
    """Links left in (no neutralising): LibreOffice follows them and finds nothing."""
    canary = canaries["outside"]
    kind, data = hostile_inputs(canary)[name]
    ooxml, _ = office_lo.run_libreoffice(data, kind, 60, sandboxed=True)
    parts = zipfile.ZipFile(io.BytesIO(ooxml))
    blob = b"".join(parts.read(n) for n in parts.namelist())
    assert canary.png.read_bytes() not in blob
    assert canary.word.encode() not in blob
    assert os.uname().release.encode() not in blob
    assert b"docservice-lo-job" not in blob
    assert not [n for n in parts.namelist() if "/media/" in n]


@pytest.mark.slow
@needs_lo
@pytest.mark.parametrize("name", HOSTILE)
def test_the_neutralising_alone_keeps_the_canary_out(canaries, name):
    """No sandbox: LibreOffice could read the canary, but is never asked to."""
    canary = canaries["outside"]
    kind, data = hostile_inputs(canary)[name]
    prepared = office_links.prepare(data, kind)
    assert str(canary.root).encode() not in prepared.data
    ooxml, _ = office_lo.run_libreoffice(prepared.data, kind, 60, sandboxed=False)
    parts = zipfile.ZipFile(io.BytesIO(ooxml))
    blob = b"".join(parts.read(n) for n in parts.namelist())
    for secret in (canary.png.read_bytes(), canary.word.encode(), str(canary.root).encode(),
                   os.uname().release.encode(), b"docservice-lo-job"):
        assert secret not in blob, secret[:40]


@pytest.mark.slow
@needs_lo
def test_a_legacy_sheet_does_not_name_the_machine(tmp_path):
    """XLS cannot be rewritten before LibreOffice opens it: the sandbox hides the kernel
    and the output check the job folder."""
    source = tmp_path / "info.ods"
    source.write_bytes(odf("ods", '<table:table table:name="S"><table:table-row>'
                                  + _cell("INFO(&quot;osversion&quot;)")
                                  + _cell("CELL(&quot;filename&quot;)")
                                  + "</table:table-row></table:table>"))
    soffice_convert([source], "xls", tmp_path, tmp_path / "profile")
    out = convert_document((tmp_path / "info.xls").read_bytes(), "markdown",
                           options=ConvertOptions(read=SANDBOXED))
    for word in machine_words():
        assert word not in out.content, (word, out.content)


@pytest.mark.slow
def test_the_sandbox_sees_only_its_job_and_profile(tmp_path, canaries):
    """What a process in the sandbox can see: no canary, no DATA_DIR, no checkout, no
    home, no network but loopback, uid 65534, no kernel version."""
    job, profile = tmp_path / "job", tmp_path / "profile"
    job.mkdir()
    profile.mkdir()
    (job / "input.txt").write_text("mine")
    here = Path(__file__).resolve().parents[1]
    script = (f"ls -A /; id -u; cat {office_sandbox.JOB}/input.txt; echo; "
              f"cat {canaries['outside'].txt} {canaries['data_dir'].txt} {here}/README.md "
              f"{Path.home()}/.bashrc /etc/passwd /etc/shadow; "
              "cat /proc/net/dev; cat /proc/version; cat /proc/sys/kernel/osrelease; "
              f"touch /usr/x {office_sandbox.JOB}/written; echo done")
    cmd = office_sandbox.wrap(["/bin/sh", "-c", script], job, profile)
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=30, check=False)
    out = done.stdout
    lines = out.splitlines()
    entries = set(lines[:lines.index("65534")])  # ls /, then the uid: 65534, not 0
    assert entries <= {"bin", "sbin", "lib", "lib32", "lib64", "libx32", "usr", "etc", "var",
                       "proc", "dev", "tmp", "lo-job", "lo-profile"}, entries
    assert "mine" in out and "done" in out
    assert canaries["outside"].word not in out and canaries["data_dir"].word not in out
    assert "docservice" not in out and "root:" not in out
    interfaces = re.findall(r"^\s*(\w+):", out, re.M)
    assert interfaces == ["lo"], interfaces
    assert os.uname().release not in out
    assert (job / "written").exists() and not Path("/usr/x").exists()


# ------------------------------------------------------------------ fail closed (fast)
def from_settings(env: dict[str, str]):
    """This process's engines configured as a pool worker of the service is, from ``env``."""
    return engine_config.configured(**engine_config_from_settings(Settings.from_env(env)))


def test_without_a_sandbox_libreoffice_formats_are_refused_and_nothing_starts(monkeypatch):
    monkeypatch.setattr(office_sandbox, "bwrap_path", lambda: None)
    monkeypatch.setattr(office_sandbox, "_works", False)

    def no_process(*args, **kwargs):
        raise AssertionError("LibreOffice was started")

    monkeypatch.setattr(office_lo.subprocess, "Popen", no_process)
    data = odf("odt", "<text:p>Hello.</text:p>")
    with engine_config.configured(), pytest.raises(ConversionFailed, match="sandbox") as refused:
        office_lo.read_lo_text(data)  # a worker nobody configured
    assert refused.value.code == 50001
    assert "OFFICE_SANDBOX=off" in refused.value.message
    for value in ("", " required "):
        with from_settings({"OFFICE_SANDBOX": value}), pytest.raises(ConversionFailed,
                                                                      match="sandbox"):
            office_lo.read_lo_text(data)
    for value in ("of", "disabled", "0", "none"):  # only "off" opens it; these stop start-up
        with pytest.raises(SystemExit, match="OFFICE_SANDBOX"):
            Settings.from_env({"OFFICE_SANDBOX": value})
        with pytest.raises(ValueError, match="office_sandbox"):
            engine_config.configure(office_sandbox=value)
    assert engine_config.current().office_sandbox == "required"


def test_office_sandbox_off_runs_libreoffice_without_it(monkeypatch):
    monkeypatch.setattr(office_sandbox, "bwrap_path", lambda: None)
    seen: list[bool] = []

    def fake_run(data, kind, timeout, *, sandboxed):
        seen.append(sandboxed)
        raise ConversionFailed("stop here")

    monkeypatch.setattr(office_lo, "run_libreoffice", fake_run)
    with from_settings({"OFFICE_SANDBOX": "off"}), pytest.raises(ConversionFailed,
                                                                  match="stop here"):
        office_lo.read_lo_text(odf("odt", "<text:p>Hello.</text:p>"))
    assert seen == [False]


def test_the_setting_and_the_workers_read_office_sandbox_alike():
    assert Settings.from_env({}).office_sandbox == "required"
    for value in ("off", " Off ", "required", ""):
        env = {"OFFICE_SANDBOX": value}
        with from_settings(env):
            assert office_sandbox.mode() == Settings.from_env(env).office_sandbox, value
    with pytest.raises(SystemExit, match="OFFICE_SANDBOX"):
        Settings.from_env({"OFFICE_SANDBOX": "no"})


def test_the_sandbox_mounts_nothing_of_the_service(tmp_path, monkeypatch):
    monkeypatch.setattr(office_sandbox, "bwrap_path", lambda: "/usr/bin/bwrap")
    cmd = office_sandbox.wrap(["/usr/bin/soffice"], tmp_path / "job", tmp_path / "profile")
    sources = {cmd[i + 1] for i, a in enumerate(cmd) if a.endswith("bind") or a.endswith("-try")}
    allowed = {"/usr", "/dev/null", str(tmp_path / "job"), str(tmp_path / "profile"),
               *office_sandbox._RO_FILES, *(f"/{d}" for d in office_sandbox._TOP_LEVEL)}
    assert sources <= allowed, sources - allowed
    for flag in ("--unshare-all", "--unshare-user", "--die-with-parent", "--clearenv",
                 "--disable-userns"):
        assert flag in cmd
    assert "--share-net" not in cmd
    assert cmd[cmd.index("--uid") + 1] == "65534"


# ------------------------------------------------------------------ neutralising (fast)
@pytest.mark.parametrize("name", [n for n in HOSTILE if n.startswith(("odt", "ods", "odp"))])
def test_odf_links_out_of_the_package_are_removed(canaries, name):
    canary = canaries["outside"]
    kind, data = hostile_inputs(canary)[name]
    prepared = office_links.prepare(data, kind)
    package = zipfile.ZipFile(io.BytesIO(prepared.data))
    xml = b"".join(package.read(n) for n in package.namelist() if n.endswith(".xml"))
    assert str(canary.root).lstrip("/").encode() not in xml  # absolute or ../ form
    assert not re.search(rb"INFO\(|CELL\(|WEBSERVICE\(|DDE\(|text:file-name|file:", xml)
    assert prepared.neutralised >= 1


def test_odf_package_members_cached_values_and_hyperlinks_stay():
    png = random_png()
    body = ('<text:p><draw:frame text:anchor-type="as-char" svg:width="1cm" svg:height="1cm">'
            '<draw:image xlink:href="Pictures/p.png"/></draw:frame>'
            '<text:a xlink:href="https://example.com/x">a link</text:a> '
            '<text:file-name text:display="full">report.odt</text:file-name></text:p>')
    prepared = office_links.prepare(odf("odt", body, members={"Pictures/p.png": png}), "odt")
    content = zipfile.ZipFile(io.BytesIO(prepared.data)).read("content.xml").decode()
    assert 'xlink:href="Pictures/p.png"' in content
    assert 'xlink:href="https://example.com/x"' in content
    assert "report.odt" in content and "file-name" not in content
    assert office_links.digest(png) in prepared.pictures
    sheet = odf("ods", '<table:table table:name="S"><table:table-row><table:table-cell '
                       'table:formula="of:=INFO(&quot;system&quot;)" office:value-type="string" '
                       'office:string-value="cached"><text:p>cached</text:p></table:table-cell>'
                       '<table:table-cell table:formula="of:=1+2" office:value-type="float" '
                       'office:value="3"/></table:table-row></table:table>')
    content = zipfile.ZipFile(io.BytesIO(office_links.prepare(sheet, "ods").data)).read(
        "content.xml").decode()
    assert "INFO" not in content and "cached" in content and "of:=1+2" in content


def test_a_package_with_a_broken_part_answers_40003():
    from render_pool.errors import CorruptDocument

    source = zipfile.ZipFile(io.BytesIO(odf("odt", "<text:p>x</text:p>")))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as broken:
        for name in source.namelist():
            body = source.read(name)
            broken.writestr(name, body.replace(b"</office:document-content>", b"")
                            if name == "content.xml" else body)
    with pytest.raises(CorruptDocument, match="not well-formed") as refused:
        office_links.prepare(out.getvalue(), "odt")
    assert refused.value.code == 40003


@pytest.mark.parametrize("instruction", [
    'INCLUDEPICTURE "/etc/x.png"', 'includepicture "/etc/x.png" \\\\d', 'INCLUDETEXT "/etc/x"',
    'IMPORT "/etc/x.png"', 'LINK Excel.Sheet.8 "/etc/x.xls" "" \\\\a', 'DDEAUTO x "y"',
    'DDE x "y"', 'FILENAME \\\\p', '{\\b INCLUDE}PICTURE "/etc/x.png"',
    "\\'49NCLUDEPICTURE \"/etc/x.png\"", '\\u73?NCLUDETEXT "/etc/x"',
    '{\\*\\foo PAGE }INCLUDEPICTURE "/etc/x.png"', 'PAGE {\\*\\x INCLUDETEXT}',
])
def test_rtf_fields_that_read_files_become_their_result(instruction):
    rtf = ("{\\rtf1\\ansi Before {\\field{\\*\\fldinst " + instruction
           + "}{\\fldrslt {\\i shown}}} after.\\par}").encode()
    clean, count = rtf_links.neutralise_rtf(rtf)
    assert count == 1 and b"fldinst" not in clean and b"/etc/x" not in clean
    assert b"{{\\i shown}}" in clean and clean.startswith(b"{\\rtf1") and clean.endswith(b"}")


@pytest.mark.parametrize("instruction", ['HYPERLINK "https://example.com/a"', " PAGE ",
                                         'TOC \\\\o "1-3"', "DATE \\\\@ \"d MMMM yyyy\""])
def test_rtf_fields_that_read_nothing_stay(instruction):
    rtf = ("{\\rtf1\\ansi {\\field{\\*\\fldinst " + instruction + "}{\\fldrslt x}}\\par}").encode()
    assert rtf_links.neutralise_rtf(rtf) == (rtf, 0)


@pytest.mark.parametrize("rtf", [
    b'{\\rtf1 {\\field{\\rtlch\\fcs1 \\fldinst INCLUDEPICTURE "/etc/x.png"}{\\fldrslt y}}}',
    b'{\\rtf1 {\\*\\fldinst INCLUDETEXT "/etc/x"} after\\par}',
    b'{\\rtf1 {\\field{\\*\\fldinst INCLUDEPICTURE "/etc/x.png"',  # cut short
    b'{\\rtf1 {\\field{\\*\\FLDINST INCLUDEPICTURE "/etc/x.png"}{\\fldrslt y}}}',
])
def test_rtf_instructions_are_found_wherever_their_word_stands(rtf):
    """LibreOffice switches to the instruction wherever ``\\fldinst`` stands in its group,
    outside a field too, and reads a file cut short to its end."""
    clean, count = rtf_links.neutralise_rtf(rtf)
    assert count == 1 and b"/etc/x" not in clean, clean


def test_rtf_linked_objects_and_picture_links_are_removed():
    png = random_png()
    rtf = ("{\\rtf1\\ansi {\\object\\objautlink{\\*\\objclass Package}{\\*\\objdata 0102}"
           "{\\result {\\i cached}}} {\\shp{\\*\\shpinst{\\sp{\\sn pibName}{\\sv /etc/x.png}}"
           "{\\sp{\\sn pibFlags}{\\sv 10}}{\\sp{\\sn fillColor}{\\sv 255}}}}"
           "{\\*\\template /etc/normal.dot}"
           "{\\pict\\pngblip " + png.hex() + "}"
           "{\\field{\\*\\fldinst INCLUDEPICTURE \"x\"}{\\fldrslt {\\pict\\pngblip\\bin4 {{{{}}}"
           " end\\par}").encode()
    prepared = office_links.prepare(rtf, "rtf")
    assert b"objautlink" not in prepared.data and b"{{\\i cached}}" in prepared.data
    assert b"pibName" not in prepared.data and b"pibFlags" not in prepared.data
    assert b"fillColor" in prepared.data and b"template" not in prepared.data
    assert b"INCLUDEPICTURE" not in prepared.data and b"\\bin4 {{{{" in prepared.data
    assert office_links.digest(png) in prepared.pictures
    assert prepared.neutralised == 5


# ------------------------------------------------------------------ output check (fast)
def test_the_output_check_drops_foreign_images_and_names_of_the_machine():
    own, foreign = random_png(), random_png()
    doc = Document(blocks=[Paragraph([
        Image("media/own.png", alt="own"), Image("media/foreign.png", alt="foreign picture"),
        Image("file:///srv/secret.png", alt=""),
        Text(f"kernel {os.uname().release}, file:///lo-job/input.ods and "
             "/tmp/docservice-lo-job-abc/input.odt; Linux is fine")])],
        resources={"media/own.png": Resource(own, "image/png"),
                   "media/foreign.png": Resource(foreign, "image/png")})
    prepared = office_links.Prepared(b"", pictures={office_links.digest(own)})
    office_output.check(doc, prepared, ["/tmp/docservice-lo-job-abc"])
    assert list(doc.resources) == ["media/own.png"]
    text = plain_text(doc.blocks)
    assert "foreign picture" in text and "Linux is fine" in text
    for word in machine_words():
        assert word not in text, (word, text)
    assert any("left out" in w for w in doc.warnings)
    assert any("naming the conversion server" in w for w in doc.warnings)


def test_a_legacy_picture_is_found_in_its_streams():
    png = random_png()
    prepared = office_links.Prepared(b"", streams=[b"head" + png + b"tail"])
    assert office_output.allowed(png, prepared)
    assert not office_output.allowed(random_png(), prepared)


@pytest.mark.slow
def test_a_sandbox_that_cannot_start_refuses(monkeypatch):
    """``bwrap`` present but unable to make its namespaces (here: a program that fails)."""
    monkeypatch.setattr(office_sandbox, "bwrap_path", lambda: "/bin/false")
    monkeypatch.setattr(office_sandbox, "_works", False)
    with engine_config.configured(), pytest.raises(ConversionFailed,
                                                   match="cannot create its namespaces"):
        office_sandbox.check()
