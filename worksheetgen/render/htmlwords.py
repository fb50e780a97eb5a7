"""Every fixed string of the HTML documents, in one place, each a whole sentence or label
with named placeholders (never pieces joined): what a message catalog will take over.

``say(key, **values)`` fills one in for a template: the string's own text and every value
are escaped for HTML, except values that are already markup (math as MathML, say), which the
templates mark as such.
"""

from __future__ import annotations

from typing import Any

from markupsafe import Markup, escape

LANGUAGE = "en"  # the documents' lang attribute (a property of the catalog's language)
DIRECTION = "ltr"  # and their writing direction

WORDS: dict[str, str] = {
    "sheet_title": "{title}",
    "key_title": "{title} — Answer key",
    "sheets_title": "{title} — Sheets of {label}",
    "keys_title": "{title} — Answer keys of {label}",
    "sheet_meta_course": "{course} · {label} · sheet code {code} · {points}",
    "sheet_meta": "{label} · sheet code {code} · {points}",
    "key_meta_course": "{course} · {label} · seed {seed}, sheet code {code} · {points}",
    "key_meta": "{label} · seed {seed}, sheet code {code} · {points}",
    "name": "Name",
    "student_id": "ID",
    "date": "Date",
    "score": "Score (out of {points})",
    "instructions": "Instructions",
    "rounding_note": (
        "Exact values are rounded half-up to the printed digits; intermediate tables are "
        "rounded for display only. Accept an answer within half a unit of its last digit, or "
        "within the margin printed under it (where rounded earlier answers carry into it). An "
        "answer that is exactly a whole number prints without decimals, whatever the rounding "
        "asked (2 stands for 2.00, and either is right); it must be exact."
    ),
    "question_heading": "Question {number}. {title} ({points})",
    "own_rounding": "In this question, round to {places}.",
    "part_heading": "({letter}) {prompt}",
    "part_heading_points": "({letter}) ({points}) {prompt}",
    "table_caption": "Part ({letter}): your answers",
    "key_table_caption": "Part ({letter}): the answer",
    "scroll_region": "Question {number}, part ({letter}), table",
    "cell": "Question {number} ({letter}): {row} {i}, {col} {j}",
    "cell_no_row": "Question {number} ({letter}): {col} {j}",
    "answer_cell": "Question {number} ({letter}): answer",
    "shape_rows": "Question {number} ({letter}): rows",
    "shape_columns": "Question {number} ({letter}): columns",
    "text_answer": "Question {number} ({letter}): your answer",
    "choice_legend": "Question {number} ({letter}): choose one",
    "choice_option": "{letter}. {text}",
    "answer": "Answer:",
    "shape": "Shape:",
    "by": "×",
    "model_answer": "Model answer:",
    "accept_each": "Accept each entry within ±{margin}.",
    "accept": "(accept within ±{margin})",
    "correct": "correct",
    "slip_choice": "slip: {name}",
    "pool": "From pool {pool}: this sheet got {question}.",
    "room_to_work": "Room to work: {space}.",
    "worked_to_check": "The worked solution to check:",
    "worked_solution": "Worked solution.",
    "fingerprints": (
        "Slip fingerprints (what each slip would give here: match a wrong answer to its slip)"
    ),
    "fingerprint_correct": "correct",
    "within_margin": "within the margin (±{margin}) of the correct answer here",
    "same_as_correct": "same as the correct answer here",
    "same_as": "same as {other} here",
    "weights_caption": (
        "Attention weights {label}: row = query, column = key; the shade of a cell is its weight."
    ),
    "row_header": "{label} {i}",
    "col_header": "{label} {j}",
    # the practice page
    "practice_title": "{title} — practice",
    "practice_intro": (
        "Practice page: type your answers, then press Check under a question. The key is "
        "inside this page; what you type stays in this browser."
    ),
    "practice_marked": "Practice copy: contains the answers.",
    "check": "Check question {number}",
    "show_step": "Show the worked step",
    "worked_steps": "Question {number}: worked steps",
}

#: the practice page's sentences, filled in by its script (the same placeholders)
SCRIPT_WORDS: dict[str, str] = {
    "right": "({part}) Right.",
    "carried": (
        "({part}) Right, carried forward: it follows from your own answer to {sources}, "
        "as grade credits it."
    ),
    "blank": "({part}) Nothing entered yet.",
    "partly_blank": "({part}) {missing} of {total} entries are still empty.",
    "wrong": "({part}) Not right: {wrong} of {total} entries ({entries}).",
    "wrong_one": "({part}) Not right.",
    "unreadable": "({part}) Not a number grade can read: {text}.",
    "slip": "That is what the slip “{title}” gives: {what}",
    "avoid": "To avoid it: {avoid}",
    "no_slip": "No known slip gives this; compare with the worked steps.",
    "text_part": "({part}) Written answers are marked by a person: compare with the worked steps.",
    "all_steps_shown": "Every worked step is shown",
}


_ESCAPED = {key: str(escape(text)) for key, text in WORDS.items()}


def say(key: str, **values: Any) -> Markup:
    """One fixed string with its placeholders filled, as HTML (each value escaped unless it
    is markup already: ``escape`` leaves a Markup as it is)."""
    return Markup(_ESCAPED[key].format(**{k: escape(v) for k, v in values.items()}))


def words(key: str, **values: Any) -> str:
    """One fixed string filled in as plain text (for code that escapes what it builds)."""
    return WORDS[key].format(**values)
