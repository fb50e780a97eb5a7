"""A German build leaves no English fixed word: every bundled bank built as a small class in
German (sheets, keys, the TA's grid; Markdown, HTML, and the PDFs as pdftotext reads them),
searched for the English catalog's own messages (so the list cannot go stale)."""

from __future__ import annotations

import html
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import ROOT, needs_tex
from worksheetgen import language
from worksheetgen.api import build
from worksheetgen.language import LOCALE_DIR
from worksheetgen.render.plaintext import plain_text

BANKS = sorted(p.name for p in (ROOT / "banks").glob("*.yaml"))
ROSTER = "name,id\nErika Mustermann,m1\nMax Müller,m2\n"


def _english_words() -> list[str]:
    """The English fixed words to look for: each message's text between its placeholders,
    where German says something else: the templates' and the families' (part prompts, worked
    steps, slips, default prompts, whose Jinja tags split them as placeholders do). A fragment
    is kept when it cannot be a bank's own English by chance: two words or more, or a label
    with its colon ("Answer:")."""
    from babel.messages.pofile import read_po

    with open(LOCALE_DIR / "de" / "LC_MESSAGES" / "worksheetgen.po", "rb") as fh:
        catalog = read_po(fh)
    found: set[str] = set()
    for m in catalog:
        if not m.id:
            continue
        ids = [m.id] if isinstance(m.id, str) else list(m.id)
        german = " ".join([m.string] if isinstance(m.string, str) else m.string)
        for text in ids:
            for piece in re.split(r"\{\{.*?\}\}|\{%.*?%\}|\{\w*\}|\$[^$]*\$|\\\w+|---|[()]", text):
                piece = piece.strip(" .,;·—-“”").lstrip(": ")
                if not re.search(r"[A-Za-z]", piece) or piece in german:
                    continue
                if len(piece.split()) >= 2 or (piece.endswith(":") and piece[0].isupper()):
                    found.add(piece)
    return sorted(found)


ENGLISH = _english_words()


def test_the_english_words_are_the_catalogs():
    assert "Page" not in ENGLISH and "Name:" not in ENGLISH  # "Name:" is German too
    assert {"Answer:", "Worked solution", "Slip fingerprints", "sheet code", "answer key"} <= set(
        ENGLISH
    )
    # the families' own words: a part prompt, a worked step, a slip's description, a default
    # prompt between its Jinja tags, a concept's model answer
    assert {
        "Compute the scores",
        "Each head gets an equal slice of the channels",
        "Divides the scores by",
        "instead of by",
        "The heatmap shows the attention weights",
        "Equal scores in, equal weights out",
        "Which of these is",  # a multiple-choice item's part (solve/item.py)
    } <= set(ENGLISH)


def _left(text: str, bank: str) -> list[str]:
    """The English fixed words in ``text``, but those the bank itself says (its title, course,
    instructions and prompts are its author's, in the language the author wrote)."""
    flat = " ".join(text.split())
    own = " ".join((ROOT / "banks" / bank).read_text(encoding="utf-8").split())
    own += " " + plain_text(own)  # its math as a PDF's text has it: "rows × columns"
    return [
        w
        for w in ENGLISH
        if re.search(r"(?<![A-Za-z])" + re.escape(w) + r"(?![A-Za-z])", flat) and w not in own
    ]


def _visible_html(text: str) -> str:
    text = re.sub(r"<(script|style)\b.*?</\1>", " ", text, flags=re.S)
    text = re.sub(r"<math\b.*?</math>", " ", text, flags=re.S)
    text = re.sub(r'aria-label="([^"]*)"', r" \1 ", text)
    return html.unescape(re.sub(r"<[^>]+>", " ", text))


def _class(tmp_path: Path, bank: str, pdf: bool) -> Path:
    roster = tmp_path / "roster.csv"
    roster.write_text(ROSTER, encoding="utf-8")
    result = build(
        5,
        banks=ROOT / "banks" / bank,
        roster=roster,
        out=tmp_path / "out",
        pdf=pdf,
        language="de",
        practice=not pdf,
        config=None,
    )
    return result.folder


@pytest.mark.slow
@pytest.mark.parametrize("bank", BANKS)
def test_a_german_class_has_no_english_fixed_word_in_markdown_and_html(tmp_path, bank):
    folder = _class(tmp_path, bank, pdf=False)
    texts = {
        p.relative_to(folder).as_posix(): p.read_text(encoding="utf-8")
        for p in folder.rglob("*")
        if p.suffix in (".md", ".html")
    }
    assert any(name.endswith("key-grid.md") or name.endswith("keys-grid.md") for name in texts)
    assert any(name.endswith("practice.html") for name in texts)
    for name, text in texts.items():
        shown = _visible_html(text) if name.endswith(".html") else text
        assert _left(shown, bank) == [], name
    sheets = next(t for n, t in texts.items() if n.endswith("sheets.md") or n.endswith("sheet.md"))
    assert "Aufgabe 1." in sheets and "Blattcode" in sheets
    assert 'lang="de"' in next(t for n, t in texts.items() if n.endswith(".html"))
    if bank == "default.yaml":  # its first question has no title of its own: the family's
        assert "Aufgabe 1. Tabelle der skalierten Softmax" in sheets


@pytest.mark.slow
@pytest.mark.tex
@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="TeX is not installed")
@pytest.mark.parametrize("bank", BANKS)
def test_a_german_class_has_no_english_fixed_word_in_its_pdfs(tmp_path, bank):
    folder = _class(tmp_path, bank, pdf=True)
    pdfs = sorted(folder.glob("*.pdf"))
    assert any("grid" in p.name for p in pdfs) and len(pdfs) >= 3
    for pdf in pdfs:
        text = subprocess.run(
            ["pdftotext", str(pdf), "-"], capture_output=True, text=True, check=True
        ).stdout
        # a word broken at a line's end is joined again
        text = re.sub(r"(\w)-\n(\w)", r"\1\2", text)
        assert _left(text, bank) == [], pdf.name
        if "grid" not in pdf.name:
            assert re.search(r"Seite 1 von \d", text), pdf.name
    assert "\\usepackage[shorthands=off]{babel}" in (folder / "sheets.tex").read_text() or (
        "ngerman,shorthands=off" in (folder / "sheets.tex").read_text()
    )


def test_english_stays_the_default():
    assert language.language().code == "en"


def test_a_german_sheet_has_a_preamble_of_its_own_for_the_format_cache(tmp_path):
    """The TeX format cache is named by the preamble's digest (tex/formats.py): a German
    sheet's preamble (babel, the footer's words) differs from the English one's, so it never
    starts from an English format."""
    from worksheetgen.tex.formats import split_preamble

    english = build(5, out=tmp_path / "en", pdf=False, config=None).folder / "sheet.tex"
    german = build(5, out=tmp_path / "de", pdf=False, language="de", config=None).folder
    en_head = split_preamble(english.read_text(encoding="utf-8"))
    de_head = split_preamble((german / "sheet.tex").read_text(encoding="utf-8"))
    assert en_head is not None and de_head is not None
    assert "babel" not in en_head[0] and "{ngerman}" in de_head[0]
    assert "Seite \\thepage\\ von" in de_head[0] and "Page \\thepage\\ of" in en_head[0]


def test_a_language_not_shipped_is_refused_in_one_line(runner, tmp_path):
    from worksheetgen.cli import main

    result = runner.invoke(main, ["build", "--seed", "1", "--no-pdf", "--language", "fr"])
    assert result.exit_code == 2
    assert "--language" in result.output and "'fr'" in result.output
    with pytest.raises(Exception, match=r"--language: expected one of en, de, got 'fr'"):
        build(1, out=tmp_path, pdf=False, language="fr", config=None)  # type: ignore[arg-type]
    assert not any(tmp_path.iterdir())


def test_points_are_written_with_the_languages_decimal_separator(tmp_path):
    """A question of 2.5 points: "2,5 Punkte" and 2,5 in the score table in German, as
    English always printed it in English."""
    text = (ROOT / "banks" / "default.yaml").read_text(encoding="utf-8")
    bank = tmp_path / "half.yaml"
    bank.write_text(text.replace("points: 6", "points: 2.5", 1), encoding="utf-8")
    german = build(5, banks=bank, out=tmp_path / "de", pdf=False, language="de", config=None)
    english = build(5, banks=bank, out=tmp_path / "en", pdf=False, config=None)
    de_tex = (german.folder / "sheet.tex").read_text(encoding="utf-8")
    en_tex = (english.folder / "sheet.tex").read_text(encoding="utf-8")
    assert "2,5 Punkte" in de_tex and " & 2,5 & " in de_tex and "26,5" in de_tex
    assert "2.5 points" in en_tex and " & 2.5 & " in en_tex and "26.5" in en_tex
    assert "2,5 Punkte" in (german.folder / "sheet.md").read_text(encoding="utf-8")
    assert "2,5 Punkte" in (german.folder / "sheet.html").read_text(encoding="utf-8")


def _differences(en: object, de: object, path: str = "") -> list[str]:
    """Where two key.json documents differ: the paths of differing values (a string's path
    ends with its field's name, a list's items with [i])."""
    if isinstance(en, dict) and isinstance(de, dict):
        if en.keys() != de.keys():
            return [f"{path}: fields {sorted(en)} != {sorted(de)}"]
        return [d for k in en for d in _differences(en[k], de[k], f"{path}.{k}")]
    if isinstance(en, list) and isinstance(de, list):
        if len(en) != len(de):
            return [f"{path}: {len(en)} items != {len(de)}"]
        return [
            d
            for i, (a, b) in enumerate(zip(en, de, strict=True))
            for d in _differences(a, b, f"{path}[{i}]")
        ]
    return [] if en == de else [path]


#: key.json's fields of words (the family's sentences, the slips' descriptions, the answers'
#: labels and the explanations of choices, by answer name): all a language may change; every
#: number, draw, answer, option and slip stays the English build's
WORD_FIELDS = {"prompt", "title", "text", "label", "explanation", "description"}
WORDS_BY_ANSWER = {"labels", "explanations", "options"}


#: a written answer's model answer (its kind "text", graded by a person) and a choice's
#: right option are words too
TEXT_VALUES = {"answer", "exact", "rounded"}


def _is_words(key: dict, path: str) -> bool:
    names = re.sub(r"\[\d+\]", "", path).split(".")
    if names[-1] in WORD_FIELDS or names[-2] in WORDS_BY_ANSWER:
        return True
    if names[-2:] == ["args", "options"]:  # a carried step's choice options (scaling's)
        return True
    found = re.match(r"\.sheets\[(\d+)\]\.questions\[(\d+)\]\.(\w+)\.(\w+)$", path)
    if found is None or found[3] not in TEXT_VALUES:
        return False
    question = key["sheets"][int(found[1])]["questions"][int(found[2])]
    return question["kinds"].get(found[4]) in ("text", "choice")


@pytest.mark.parametrize("bank", BANKS)
def test_a_german_build_draws_what_the_english_one_draws(tmp_path, bank):
    """Translating changes no draw: the same seed's German and English class have the same
    numbers, answers, options and slips in key.json; only the words differ (and they do)."""
    import json

    roster = tmp_path / "roster.csv"
    roster.write_text(ROSTER, encoding="utf-8")
    keys = {}
    for code in ("en", "de"):
        folder = build(
            5,
            banks=ROOT / "banks" / bank,
            roster=roster,
            out=tmp_path / code,
            pdf=False,
            language=code,
            config=None,
        ).folder
        keys[code] = json.loads((folder / "key.json").read_text(encoding="utf-8"))
    # the German key says its language (an English key has no field: as before)
    assert keys["de"].pop("language") == "de" and "language" not in keys["en"]
    # and prints numbers with a decimal comma, as German does (an English key: a point, no field)
    assert keys["de"].pop("decimal") == "," and "decimal" not in keys["en"]
    differ = _differences(keys["en"], keys["de"])
    assert differ, "the German key.json has the English words"
    assert [d for d in differ if not _is_words(keys["en"], d)] == []


def _right_answers(key: dict, template: Path, out: Path) -> None:
    """The blank responses file filled with the key's own answers as printed (a choice's
    right option in the key's words; a written answer, graded by a person, left blank)."""
    import csv

    sheets = {s["id"]: s for s in key["sheets"]}
    with open(template, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    filled = [rows[0]]
    for sid, student, qid, name, entry, _ in rows[1:]:
        q = next(q for q in sheets[sid]["questions"] if q["id"] == qid)
        value, kind = q["rounded"][name], q["kinds"][name]
        if kind == "text":
            value = ""
        elif kind == "shape":
            value = f"{value[0]} x {value[1]}"
        elif "," in entry:
            r, c = map(int, entry.split(","))
            value = value[r - 1][c - 1]
        elif entry:
            value = value[int(entry) - 1]
        filled.append([sid, student, qid, name, entry, value])
    with open(out, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(filled)


def test_a_german_key_grades_its_own_answers_right(runner, tmp_path):
    """A German key's choices are in German (options and right answer alike): a class that
    writes the key's answers, choices as the German sheet printed them, gets every point but
    the written answers' (a person's to mark)."""
    import csv
    import json

    from worksheetgen.cli import main

    roster = tmp_path / "roster.csv"
    roster.write_text(ROSTER, encoding="utf-8")
    folder = build(
        5,
        banks=ROOT / "banks" / "note.yaml",
        roster=roster,
        out=tmp_path / "out",
        pdf=False,
        language="de",
        config=None,
    ).folder
    key = json.loads((folder / "key.json").read_text(encoding="utf-8"))
    cross = next(q for q in key["sheets"][0]["questions"] if q["family"] == "cross")
    assert cross["rounded"]["Q_source"] == "die Zieltokens des Decoders"
    # the scaling questions' choices are carried forward: their steps name the German options
    scale = next(q for q in key["sheets"][0]["questions"] if q["family"] == "scale-effect")
    peaked = ["ohne die Skalierung", "mit der Skalierung", "gleich spitz"]
    assert scale["options"]["peaked"] == peaked and scale["rounded"]["peaked"] in peaked
    steps = {c["answer"]: c["args"] for c in scale["carries"]}
    assert steps["peaked"]["options"] == peaked
    template, right = tmp_path / "blank.csv", tmp_path / "right.csv"
    made = runner.invoke(
        main, ["grade", "--key", str(folder / "key.json"), "--template", str(template)]
    )
    assert made.exit_code == 0, made.output
    _right_answers(key, template, right)
    graded = runner.invoke(
        main, ["grade", "--key", str(folder / "key.json"), str(right), "--out", str(tmp_path / "g")]
    )
    assert graded.exit_code == 0, graded.output
    with open(tmp_path / "g" / "scores.csv", newline="", encoding="utf-8") as fh:
        scores = list(csv.DictReader(fh))
    assert len(scores) == 2
    for row in scores:
        assert float(row["total"]) + float(row["ungraded"]) == pytest.approx(float(row["max"]))
        assert float(row["ungraded"]) < float(row["max"]) / 4


def _class_answers(key: dict, template: Path, out: Path) -> None:
    """The blank responses file filled in: the first student writes the key's answers, the
    others each answer's first slip where it has one (so report.md names slips, wrong and
    partly right parts), a written answer left blank (a person's to mark)."""
    import csv

    sheets = {s["id"]: s for s in key["sheets"]}
    with open(template, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    first = rows[0]["student"]
    for row in rows:
        q = next(q for q in sheets[row["student"]]["questions"] if q["id"] == row["question"])
        name, entry = row["answer"], row["entry"]
        if q.get("choices") and not entry:  # a multiple-choice item: its options' letters
            slips = [c["label"] for c in q["choices"] if c["misconception"]]
            wrong = row["student"] != first and slips
            row["value"] = slips[0] if wrong else q["choice_answer"]
            continue
        source = q["rounded"]
        if row["student"] != first:
            slips = [d["rounded"] for d in q["distractors"] if name in d["rounded"]]
            source = slips[0] if slips else source
        value, kind = source[name], q["kinds"][name]
        if kind == "text":
            value = ""
        elif kind == "shape":
            value = f"{value[0]} x {value[1]}"
        elif "," in entry:
            r, c = map(int, entry.split(","))
            value = value[r - 1][c - 1]
        elif entry:
            value = value[int(entry) - 1]
        row["value"] = str(value)
    with open(out, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def _visible_export(text: str) -> str:
    """An export's words as the LMS shows them: its XML's text, the HTML inside it unescaped
    and its tags taken out."""
    return _visible_html(html.unescape(_visible_html(text)))


@pytest.mark.slow
@pytest.mark.parametrize("bank", BANKS)
def test_a_german_class_is_graded_and_exported_in_german(tmp_path, bank):
    """After the build, in the key's language: grade's report.md of a class with right,
    wrong and slip answers, its class report and feedback pages, and the Moodle XML, GIFT and Canvas
    QTI exports (their question texts, feedback and category words) have no English fixed word
    left."""
    import json
    import zipfile

    from worksheetgen.errors import ExportError
    from worksheetgen.export import export_file
    from worksheetgen.grading.template import write_template
    from worksheetgen.report.grade import grade_files

    folder = _class(tmp_path, bank, pdf=False)
    key = json.loads((folder / "key.json").read_text(encoding="utf-8"))
    assert key["language"] == "de"
    template, answers = tmp_path / "blank.csv", tmp_path / "answers.csv"
    write_template(folder / "key.json", template)
    _class_answers(key, template, answers)
    run = grade_files(folder / "key.json", answers, tmp_path / "graded")
    assert any(s.earned < s.possible for s in run.result.students)
    report = (tmp_path / "graded" / "report.md").read_text(encoding="utf-8")
    assert report.startswith("# Bewertungsbericht: ") and "Aufgabe 1" in report
    assert _left(report, bank) == []
    # each student's feedback page, and the class report (its charts' words too: SVG text)
    pages = sorted((tmp_path / "graded" / "feedback").glob("*.html"))
    assert len(pages) == 2
    pages.append(tmp_path / "graded" / "class-report.html")
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert '<html lang="de" dir="ltr">' in text
        assert ("Klassenbericht: " if page.stem == "class-report" else "Rückmeldung: ") in text
        assert _left(_visible_html(text), bank) == [], page.name
    for fmt in ("moodle", "gift", "qti"):
        try:
            path = export_file(folder / "key.json", fmt, tmp_path / f"export-{fmt}")
        except ExportError as exc:  # a pool GIFT or Canvas cannot deal (quiz.yaml's picks)
            assert fmt != "moodle" and "pool shapes" in str(exc), exc
            continue
        assert path is not None
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as z:
                texts = [z.read(n).decode("utf-8") for n in z.namelist() if n.endswith(".xml")]
        else:
            texts = [path.read_text(encoding="utf-8")]
        for text in texts:
            assert _left(_visible_export(text), bank) == [], (fmt, bank)


@needs_tex
@pytest.mark.slow
def test_a_german_class_is_scanned_in_german(tmp_path):
    """scan of a German class, with issues for a person (boxes unclear or marked twice, a
    page whose code is papered over, a student absent): its report.md (the issues' section
    too), issues.csv's detail column, the feedback page with --feedback-scans (its scans'
    heading, legend and pictures' alt text) have no English fixed word left; issues.csv's
    kind column and headers stay as they are (data)."""
    import csv
    import json
    import random

    from tests.e2e.scan.test_scan import _scenario
    from tests.scansynth import Plan, distort, fill, render, smudge_code
    from worksheetgen.scan.run import scan_files

    roster = tmp_path / "roster.csv"
    roster.write_text(ROSTER, encoding="utf-8")
    folder = build(
        3,
        banks=ROOT / "banks" / "quiz.yaml",
        roster=roster,
        out=tmp_path / "out",
        scannable=True,
        language="de",
        config=None,
    ).folder
    key = json.loads((folder / "key.json").read_text(encoding="utf-8"))
    assert key["language"] == "de"
    # the first student's pages, marked as pens do (some unclear, some twice), the second
    # page's code papered over; the second student's pages not scanned (absent)
    positions = json.loads((folder / "scan.json").read_text(encoding="utf-8"))
    first = positions["sheets"][0]
    images = render(folder / "sheets.pdf", 150)[: len(first["pages"])]
    rng = random.Random(4)
    fill(images, {"sheets": [first]}, 0, 150, _scenario, rng, Plan())
    smudge_code(images[1], 150, range(26, 40))
    files = []
    for p, image in enumerate(images, start=1):
        files.append(tmp_path / f"seite{p}.png")
        files[-1].write_bytes(distort(image, rng, upside_down=p == 2, jpeg=False))
    out = tmp_path / "scan"
    run = scan_files(
        [str(f) for f in files], folder / "key.json", out, verify_pages="all", feedback_scans=True
    )
    kinds = {i.kind for i in run.issues}
    assert {"unidentified-page", "missing-page", "absent"} <= kinds, kinds
    assert kinds & {"unclear-box", "several-marked", "only-taken-back"}, kinds
    report = (out / "report.md").read_text(encoding="utf-8")
    section = report.index("## Fälle für eine Person (")
    assert section < report.index("## Beobachtete Fehler")  # before grade's slips, as in English
    assert "| Art | id | wo | Schüler*in | Teil | Befund | zu tun | Bild |" in report
    assert _left(report, "quiz.yaml") == []
    with open(out / "issues.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert list(rows[0]) == ["kind", "id", "where", "detail", "crop", "settled", "view"]
    assert {r["kind"] for r in rows} == kinds
    for row in rows:
        assert row["detail"] and _left(row["detail"], "quiz.yaml") == [], row
    assert any("nicht gescannt" in r["detail"] for r in rows)
    # the feedback page of the student scanned: the scans' words, and the pictures' alt text
    page = (out / "feedback" / "m1.html").read_text(encoding="utf-8")
    assert "Deine gescannten Seiten, wie sie gelesen wurden" in page
    alts = " ".join(re.findall(r'alt="([^"]*)"', page))
    assert "Gescannte Seite 1" in alts
    assert _left(_visible_html(page) + " " + alts, "quiz.yaml") == []
    assert sorted(p.name for p in (out / "verify").glob("*.jpg"))
