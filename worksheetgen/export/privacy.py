"""What an export may say about a sheet: never its student.

A quiz imported into an LMS is seen by every student of the course (question names in
Canvas, general feedback once answered, Moodle's question bank for its editors), so no
export carries a student's name, id or e-mail address. A roster sheet's id is the student's
id (or a slug of the name, or an e-mail address), so every export names a student's sheet by
the sheet code the sheet printed (``7KQ2-M4XA``), which only key.json maps back; a key from
before sheet codes gets an opaque ``sheet N`` (its place in the key). Anonymous versions
(``A``, ``B``) and a single worksheet keep their ids, which name no one.

``lms_doc`` is the checked key as every exporter sees it: each student sheet renamed so, its
student left out, and every variant's sheet id and label the sheet's new name.
"""

from __future__ import annotations

from dataclasses import replace

from worksheetgen.keyjson.records import KeyDoc, KeyQuestion, KeySheet, Variant


def sheet_names(doc: KeyDoc) -> dict[str, str]:
    """Each sheet id of the key -> the name an export gives it: a student's sheet its code
    (``sheet N`` in a key without codes, or where two codes coincide), any other its id."""
    names: dict[str, str] = {}
    taken = {s.id for s in doc.sheets if s.student is None}
    for n, sheet in enumerate(doc.sheets, 1):
        if sheet.student is None:
            names[sheet.id] = sheet.id
            continue
        name = sheet.code if sheet.code and sheet.code not in taken else f"sheet {n}"
        taken.add(name)
        names[sheet.id] = name
    return names


def lms_doc(doc: KeyDoc) -> KeyDoc:
    """The key as an export may show it: no student's name, id or e-mail anywhere (see the
    module's doc). A key without student sheets is returned as it is."""
    if all(s.student is None for s in doc.sheets):
        return doc
    names = sheet_names(doc)

    def renamed(v: Variant) -> Variant:
        new = names.get(v.sheet_id, v.sheet_id)
        return replace(v, sheet_id=new, sheet_label=new)

    variants: dict[int, Variant] = {}  # the same variant object in a question and its sheet
    for q in doc.questions:
        for v in q.variants:
            variants[id(v)] = renamed(v)
    questions = tuple(
        KeyQuestion(
            qid=q.qid,
            number=q.number,
            title=q.title,
            family=q.family,
            variants=tuple(variants[id(v)] for v in q.variants),
            pick=q.pick,
        )
        for q in doc.questions
    )
    sheets = tuple(
        KeySheet(
            id=names[s.id],
            label=names[s.id],
            student=None,
            variants=tuple(variants.get(id(v)) or renamed(v) for v in s.variants),
            code=s.code,
        )
        for s in doc.sheets
    )
    return replace(doc, questions=questions, sheets=sheets)
