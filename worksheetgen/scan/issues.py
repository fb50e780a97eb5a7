"""What ``scan`` leaves to a person: an ``Issue`` (its kind, the id a corrections file names
it by, where it is, what was seen, its cropped picture, what settled it and its page's view)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Issue:
    """Something a person has to look at: its kind, id (for corrections), where it is and
    what was seen; ``crop`` the file name of its picture; ``view`` the path (in the output
    folder) of its page's verification view (``overlay``), where one was drawn."""

    kind: str
    id: str
    where: str
    detail: str
    crop: str = ""
    settled: str = ""
    view: str = ""
