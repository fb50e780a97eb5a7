"""LMS export: Moodle XML, GIFT and Canvas QTI, parsed back and checked number by number.

Two sources of keys: a real build of the note's practice bank (numbers checked against
values computed here with math.exp, independently of the build's SymPy/mpmath), and a
hand-made key.json with masked cells, a tiny probability, distractors and a multiple-choice
item (the contract of issue 2 and 3), whose numbers are also computed here by hand.
"""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET

import pytest


def _tree() -> ET.Element:
    """A document with escaping, text, tails, a comment and nesting three levels deep."""
    root = ET.Element("quiz", {"xmlns": "urn:x", "title": 'a "b" <c> & d\n'})
    root.append(ET.Comment(" made by a test "))
    for i in range(3):
        group = ET.SubElement(root, "section", ident=f"g{i}")
        ET.SubElement(group, "meta").text = "x < y & z"
        for j in range(2):
            item = ET.SubElement(group, "item", ident=f"i{i}{j}")
            ET.SubElement(item, "text").text = f"{i}{j} \u2212\u221e ]]>"
            ET.SubElement(item, "empty")
    return root


@pytest.mark.parametrize("indent", [None, "  "])
def test_streamed_xml_is_the_bytes_of_the_whole_tree(indent):
    from worksheetgen.export.html import XmlStream, xml_bytes

    whole = _tree()
    if indent:
        ET.indent(whole, space=indent)
    text = io.StringIO()
    out = XmlStream(text, indent=indent)
    parts = _tree()
    groups = list(parts)[1:]
    del parts[1:]
    out.open(parts)  # the comment is written with the root
    for group in groups:
        items = list(group)[1:]
        del group[1:]
        out.open(group)
        for item in items:
            group.append(item)
            out.flush()
            assert len(group) == 0  # written and dropped
        out.close()
    out.close()
    assert text.getvalue().encode("utf-8") == xml_bytes(whole)
