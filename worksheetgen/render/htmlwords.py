"""Every fixed string of the HTML documents, in one place, each a whole sentence or label
with named placeholders (never pieces joined), each the message of the catalog
(worksheetgen.language) that gives it in the language being rendered.

``say(key, **values)`` fills one in for a template: the string's own text and every value
are escaped for HTML, except values that are already markup (math as MathML, say), which the
templates mark as such.
"""

from __future__ import annotations

from typing import Any

from markupsafe import Markup, escape

from worksheetgen.language import N_, gettext, language

LANGUAGE = "en"  # the documents' lang attribute: now the language's (worksheetgen.language)
DIRECTION = "ltr"  # and their writing direction

WORDS: dict[str, str] = {
    "sheet_title": "{title}",
    "key_title": N_("{title} — Answer key"),
    "sheets_title": N_("{title} — Sheets of {label}"),
    "keys_title": N_("{title} — Answer keys of {label}"),
    "sheet_meta_course": N_("{course} · {label} · sheet code {code} · {points}"),
    "sheet_meta": N_("{label} · sheet code {code} · {points}"),
    "key_meta_course": N_("{course} · {label} · seed {seed}, sheet code {code} · {points}"),
    "key_meta": N_("{label} · seed {seed}, sheet code {code} · {points}"),
    "name": N_("Name"),
    "student_id": N_("ID"),
    "date": N_("Date"),
    "score": N_("Score (out of {points})"),
    "instructions": N_("Instructions"),
    "rounding_note": N_(
        "Exact values are rounded half-up to the printed digits; intermediate tables are "
        "rounded for display only. Accept an answer within half a unit of its last digit, or "
        "within the margin printed under it (where rounded earlier answers carry into it). An "
        "answer that is exactly a whole number prints without decimals, whatever the rounding "
        "asked (2 stands for 2.00, and either is right); it must be exact."
    ),
    "question_heading": N_("Question {number}. {title} ({points})"),
    "own_rounding": N_("In this question, round to {places}."),
    "part_heading": N_("({letter}) {prompt}"),
    "part_heading_points": N_("({letter}) ({points}) {prompt}"),
    "table_caption": N_("Part ({letter}): your answers"),
    "key_table_caption": N_("Part ({letter}): the answer"),
    "scroll_region": N_("Question {number}, part ({letter}), table"),
    "cell": N_("Question {number} ({letter}): {row} {i}, {col} {j}"),
    "cell_no_row": N_("Question {number} ({letter}): {col} {j}"),
    "answer_cell": N_("Question {number} ({letter}): answer"),
    "shape_rows": N_("Question {number} ({letter}): rows"),
    "shape_columns": N_("Question {number} ({letter}): columns"),
    "text_answer": N_("Question {number} ({letter}): your answer"),
    "choice_legend": N_("Question {number} ({letter}): choose one"),
    "choices_legend": N_("Question {number} ({letter}): mark all that apply"),
    "choice_option": N_("{letter}. {text}"),
    "answer": N_("Answer:"),
    "shape": N_("Shape:"),
    "by": N_("×"),
    "model_answer": N_("Model answer:"),
    "accept_each": N_("Accept each entry within ±{margin}."),
    "accept": N_("(accept within ±{margin})"),
    "correct": N_("correct"),
    "slip_choice": N_("slip: {name}"),
    "pool": N_("From pool {pool}: this sheet got {question}."),
    "room_to_work": N_("Room to work: {space}."),
    "worked_to_check": N_("The worked solution to check:"),
    "worked_solution": N_("Worked solution."),
    "fingerprints": N_(
        "Slip fingerprints (what each slip would give here: match a wrong answer to its slip)"
    ),
    "fingerprint_correct": N_("correct"),
    "within_margin": N_("within the margin (±{margin}) of the correct answer here"),
    "same_as_correct": N_("same as the correct answer here"),
    "same_as": N_("same as {other} here"),
    "weights_caption": N_(
        "Attention weights {label}: row = query, column = key; the shade of a cell is its weight."
    ),
    "row_header": N_("{label} {i}"),
    "col_header": N_("{label} {j}"),
    # the practice page
    "practice_title": N_("{title} — practice"),
    "practice_intro": N_(
        "Practice page: type your answers, then press Check under a question. The key is "
        "inside this page; what you type stays in this browser."
    ),
    "practice_marked": N_("Practice copy: contains the answers."),
    "check": N_("Check question {number}"),
    "show_step": N_("Show the worked step"),
    "worked_steps": N_("Question {number}: worked steps"),
}

#: the practice page's sentences, filled in by its script (the same placeholders)
SCRIPT_WORDS: dict[str, str] = {
    "right": N_("({part}) Right."),
    "carried": N_(
        "({part}) Right, carried forward: it follows from your own answer to {sources}, "
        "as grade credits it."
    ),
    "blank": N_("({part}) Nothing entered yet."),
    "partly_blank": N_("({part}) {missing} of {total} entries are still empty."),
    "wrong": N_("({part}) Not right: {wrong} of {total} entries ({entries})."),
    "wrong_one": N_("({part}) Not right."),
    "partly_right": N_(
        "({part}) Partly right: {right} of the right options marked, {wrong} wrong ones "
        "marked; {share} percent of its points."
    ),
    "unreadable": N_("({part}) Not a number grade can read: {text}."),
    "slip": N_("That is what the slip “{title}” gives: {what}"),
    "avoid": N_("To avoid it: {avoid}"),
    "no_slip": N_("No known slip gives this; compare with the worked steps."),
    "text_part": N_(
        "({part}) Written answers are marked by a person: compare with the worked steps."
    ),
    "all_steps_shown": N_("Every worked step is shown"),
}


_ESCAPED: dict[tuple[str, str], str] = {}


def say(key: str, **values: Any) -> Markup:
    """One fixed string in the language being rendered with its placeholders filled, as HTML
    (each value escaped unless it is markup already: ``escape`` leaves a Markup as it is)."""
    code = language().code
    text = _ESCAPED.get((code, key))
    if text is None:
        text = _ESCAPED[code, key] = str(escape(gettext(WORDS[key])))
    return Markup(text.format(**{k: escape(v) for k, v in values.items()}))


def words(key: str, **values: Any) -> str:
    """One fixed string filled in as plain text (for code that escapes what it builds)."""
    return gettext(WORDS[key], **values) if values else gettext(WORDS[key])


def script_words() -> dict[str, str]:
    """The practice page's sentences in the language being rendered (its script fills them)."""
    return {key: gettext(text) for key, text in SCRIPT_WORDS.items()}
