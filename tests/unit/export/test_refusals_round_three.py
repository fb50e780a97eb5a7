"""Issue 34, sections 3 and 4: a refused pooled export names every failing pool and the bank
it came from; a pool of pick 2 or more whose picks Canvas would weigh by their blanks, not
their points, is refused for Canvas with what to change.

A behaviour across modules, not one module's tests (errors, export, pipeline.build,
pipeline.options)."""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path

import pytest

from tests.paths import ROOT
from worksheetgen.errors import ExportError
from worksheetgen.export import export_bytes
from worksheetgen.pipeline.build import build
from worksheetgen.pipeline.options import BuildOptions

ROOT_BANKS = ROOT / "banks"


TWO_POOLS = """\
sheet:
  id: two-pools
  title: Two pools
questions:
  - pool: one
    pick: 1
    from:
      - {id: a1, family: softmax, points: 4, params: {T: 2}}
      - {id: a2, family: heads, points: 5}
  - pool: two
    pick: 2
    from:
      - {id: b1, family: softmax, points: 3, params: {T: 2}}
      - {id: b2, family: cross, format: choice, points: 3, params: {numeric: true}}
      - {id: b3, family: heads, points: 3}
"""


#: three multiple-choice alternatives of equal points: one blank each, so Canvas's equal
#: split per blank is the sheet's split per pick
ALL_CHOICE = """\
sheet:
  id: all-choice
  title: Choices
questions:
  - pool: concepts
    pick: 2
    from:
      - {id: c1, family: concept, format: choice, points: 2, params: {ask: why-sqrt-dk}}
      - {id: c2, family: concept, format: choice, points: 2, params: {ask: mask-inf}}
      - {id: c3, family: concept, format: choice, points: 2, params: {ask: when-causal}}
"""


def _key(tmp_path: Path, text: str, versions: int = 6) -> dict:
    bank = tmp_path / "bank.yaml"
    bank.write_text(text, "utf-8")
    folder = build(
        BuildOptions(seed=42, versions=versions, banks=(str(bank),), out=str(tmp_path), pdf=False)
    ).folder
    return json.loads((folder / "key.json").read_text("utf-8"))


def test_a_refused_export_names_every_failing_pool(tmp_path):
    data = _key(tmp_path, TWO_POOLS)
    with pytest.raises(ExportError) as err:
        export_bytes(data, "qti")
    line = str(err.value)
    assert "\n" not in line
    assert line.startswith("key.json: pool one: expected every sheet's graded points")
    assert "; pool two: expected each sheet's picks to keep their points in Canvas" in line
    with pytest.raises(ExportError) as err:
        export_bytes(data, "gift")
    assert "pool one:" in str(err.value) and "pool two:" in str(err.value)


def test_a_pick_two_pool_whose_picks_canvas_would_weigh_by_blanks_is_refused(tmp_path):
    """A 3-point multiple-choice pick (1 blank) beside a 3-point table (4 blanks) would get
    1/5 of the item's 6 points from Canvas's scoring, not 3: refused for Canvas, naming the
    picks' points and blanks and what to change; Moodle's cloze weighs its gaps and keeps it."""
    data = _key(tmp_path, TWO_POOLS.replace("points: 5}", "points: 4}"))
    with pytest.raises(ExportError) as err:
        export_bytes(data, "qti")
    line = str(err.value)
    assert "pool one" not in line  # equal points now
    assert re.search(r"pool two: .* got b\d 3 point\(s\) over \d+ blank\(s\), b\d 3 point", line)
    assert "give the pool pick 1, or alternatives whose points are in proportion" in line
    assert "export it with --to moodle" in line
    assert export_bytes(data, "moodle")  # Moodle gives each gap its weight


def test_a_pick_two_pool_of_equal_blanks_per_point_exports_to_canvas(tmp_path):
    data = _key(tmp_path, ALL_CHOICE)
    with zipfile.ZipFile(__import__("io").BytesIO(export_bytes(data, "qti"))) as zf:
        (name,) = [n for n in zf.namelist() if n.endswith(".xml") and "meta" not in n and "/" in n]
        xml = zf.read(name).decode("utf-8")
    items = re.findall(r'<item ident="[^"]*" title="1\. concepts \[([A-F])\]">(.*?)</item>', xml)
    assert len(items) == 6
    for _, body in items:
        assert body.count("<response_lid") == 2  # one letter blank per pick
        assert "<fieldentry>4</fieldentry>" in body


def _qti_sections(data: bytes) -> list[tuple[str, list[str]]]:
    """Each group of a QTI zip: its title and its items' texts (unescaped)."""
    import html as htmllib
    import io
    import xml.etree.ElementTree as ET

    ns = "{http://www.imsglobal.org/xsd/ims_qtiasiv1p2}"
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        (name,) = [n for n in zf.namelist() if n.endswith(".xml") and "/" in n and "meta" not in n]
        root = ET.fromstring(zf.read(name))
    out = []
    for g in root.iter(f"{ns}section"):
        if g.get("ident") == "root_section":
            continue
        texts = [htmllib.unescape(i.findtext(f".//{ns}mattext") or "") for i in g.iter(f"{ns}item")]
        out.append((g.get("title") or "", texts))
    return out


def test_canvas_shared_essays_name_the_question_by_canvass_running_number(tmp_path):
    """The note bank's shared essays said "written part of question N" with the bank's
    number; Canvas numbers its questions one per group, so an earlier written group moves
    every later number: each essay names the group just before it."""
    bank = ROOT_BANKS / "note.yaml"
    folder = build(
        BuildOptions(seed=42, versions=3, banks=(str(bank),), out=str(tmp_path), pdf=False)
    ).folder
    data = json.loads((folder / "key.json").read_text("utf-8"))
    sections = _qti_sections(export_bytes(data, "qti"))
    essays = 0
    for n, (title, texts) in enumerate(sections, 1):
        if not title.endswith("(written part)") or len(texts) != 1:
            continue
        m = re.search(r"written parts? of question (\d+) of the quiz", texts[0])
        if m is None:
            continue
        essays += 1
        assert int(m.group(1)) == n - 1, (title, texts[0][:200])
        assert sections[n - 2][0].split(":")[0] == title.split(":")[0]  # the same slot
    assert essays >= 2
    moodle = export_bytes(data, "moodle").decode("utf-8")
    found = re.findall(r"written parts? of question (\d+) of the quiz", moodle)
    assert found and found == [str(int(x)) for x in found]


def test_a_shared_essay_answering_two_written_parts_says_so_in_the_plural(tmp_path):
    bank = Path(__file__).resolve().parents[2] / "fixtures" / "moodle" / "real-4" / "bank.yaml"
    folder = build(
        BuildOptions(seed=42, versions=4, banks=(str(bank),), out=str(tmp_path), pdf=False)
    ).folder
    moodle = export_bytes(json.loads((folder / "key.json").read_text("utf-8")), "moodle")
    text = moodle.decode("utf-8")
    # slots q-scale and why: one written part a sheet; two: a written part in each of 2 picks
    assert text.count("Write here your answer to the written part of question ") == 2
    plural = re.findall(r"Write here your answers to the written parts of question (\d+)", text)
    assert plural == ["5"]  # q-scale 1, 2; why 3, 4; two 5 (and its essay 6)
    assert "the parts the question above asks in words" in text
