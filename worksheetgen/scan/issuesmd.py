"""The issues a person must settle, as a section of scan's report.md (``with_issues``): each
open issue of issues.csv in its words (kind, id, where, detail), with the student, the part,
what to do and its picture. A scan with no open issue leaves report.md as grade wrote it.

Standard library only."""

from __future__ import annotations

import re
from collections.abc import Sequence

from worksheetgen.keyjson.records import KeyDoc
from worksheetgen.language import N_, gettext, said
from worksheetgen.render.markup import escape_md_inline
from worksheetgen.scan.issues import Issue
from worksheetgen.scan.setup import CROPS

#: what a person does about an issue of each kind (the value of its corrections row), in
#: the language of the report where it is written
TO_DO = {
    "unidentified-page": N_("name the page in a corrections file: value SHEET/PAGE (or ignore)"),
    "other-class-page": N_("scan it against its own class's key; value ignore marks it as seen"),
    "duplicate-page": N_("nothing to read (the first copy is read); value ignore marks it as seen"),
    "missing-page": N_("scan the page, or settle its parts (sheet/question/answer rows)"),
    "absent": N_("scan the student's pages, or value ignore (no responses, not zeros)"),
    "unclear-box": N_(
        "look at the boxes; value: the option's letter or the points meant, or blank"
    ),
    "several-marked": N_(
        "look at the boxes; value: the option's letter or the points meant, or blank"
    ),
    "only-taken-back": N_(
        "look at the box; value: the option's letter meant, the points, or blank"
    ),
    "unmarked": N_("mark the part; value: its points (blank: 0 points)"),
}


def _code(text: str) -> str:
    """A one-line code span showing ``text`` as written (an id), its pipes escaped as a
    table's cell needs."""
    one_line = " ".join(text.split())
    fence = "`" * (max((len(m) for m in re.findall(r"`+", one_line)), default=0) + 1)
    pad = " " if one_line.startswith("`") or one_line.endswith("`") else ""
    return f"{fence}{pad}{one_line}{pad}{fence}".replace("|", "\\|")


def _sheet_of(issue: Issue, sheet_ids: set[str]) -> str | None:
    """The sheet id an issue names (a part's, a missing page's, an absent student's)."""
    if issue.id.startswith("absent:"):
        sid = issue.id.split(":", 1)[1]
    elif issue.kind == "missing-page":
        sid = issue.id.split(":", 1)[1].rsplit("/", 1)[0]
    elif "/" in issue.id and not issue.id.startswith("page:"):
        sid = issue.id.rsplit("/", 2)[0]
    else:
        return None
    return sid if sid in sheet_ids else None


def issues_md(issues: Sequence[Issue], key: KeyDoc) -> str:
    """The section listing the open issues (none: the empty string), a row each in
    issues.csv's order, and how many a corrections file settled."""
    open_ = [i for i in issues if not i.settled]
    if not open_:
        return ""
    sheets = {ks.id: ks for ks in key.sheets}
    settled = len(issues) - len(open_)
    explained = (
        gettext(
            "Each is a row of issues.csv still to settle: write `id,value` rows in a "
            "corrections file and scan again with `--corrections` ({n} settled already: "
            "issues.csv's settled column).",
            n=settled,
        )
        if settled
        else gettext(
            "Each is a row of issues.csv still to settle: write `id,value` rows in a "
            "corrections file and scan again with `--corrections`."
        )
    )
    lines = [
        gettext("## Issues for a person ({n})", n=len(open_)),
        "",
        explained,
        "",
        gettext("| kind | id | where | student | part | detail | to do | picture |"),
        "|---|---|---|---|---|---|---|---|",
    ]
    for i in open_:
        sid = _sheet_of(i, set(sheets))
        student = ""
        if sid is not None:
            ks = sheets[sid]
            who = ks.student
            student = escape_md_inline(
                f"{who.name} ({who.id})" if who is not None and who.name != who.id else sid
            )
        part = ""
        if sid is not None and i.kind not in ("absent", "missing-page"):
            part = _code(i.id[len(sid) + 1 :])
        picture = i.view or (f"{CROPS}/{i.crop}" if i.crop else "")
        cells = [
            escape_md_inline(i.kind),
            _code(i.id),
            escape_md_inline(i.where),
            student,
            part,
            escape_md_inline(i.detail),
            escape_md_inline(said(TO_DO[i.kind]) if i.kind in TO_DO else gettext("look at it")),
            f"[{escape_md_inline(picture)}](<{picture}>)" if picture else "",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def with_issues(report: str, issues: Sequence[Issue], key: KeyDoc) -> str:
    """grade's ``report`` with the open issues' section before its "Slips seen" (at its end
    when it has none); unchanged when no issue is open."""
    section = issues_md(issues, key)
    if not section:
        return report
    at = report.find("\n" + gettext("## Slips seen") + "\n")
    if at < 0:
        return report.rstrip("\n") + "\n\n" + section
    return report[: at + 1] + section + report[at:]
