"""Reading a class roster: names and ids as written, derived ids, safe file names, errors."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from worksheetgen.bank.roster import (
    MAX_STUDENTS,
    derive_id,
    file_stems,
    parse_roster,
    read_roster,
    version_ids,
)
from worksheetgen.errors import RosterError
from worksheetgen.model import Student

TRICKY = "Zoë O'Brien & Co_1 \\input{x} 100%"


def test_roster_keeps_names_and_ids_as_written_in_roster_order():
    text = f'name,id,email\n"{TRICKY}",z1,zoe@example.org\n"Smith, John",s2,\nΕλένη,g3,\n李雷,c4,\n'
    assert parse_roster(text) == (
        Student(TRICKY, "z1"),
        Student("Smith, John", "s2"),
        Student("Ελένη", "g3"),
        Student("李雷", "c4"),
    )


def test_roster_header_is_case_insensitive_and_other_columns_are_ignored():
    text = "Email, Name ,ID,Section\nx@y.z,Ada Lovelace,a1,3\n"
    assert parse_roster(text) == (Student("Ada Lovelace", "a1"),)


def test_roster_file_with_bom_crlf_and_blank_lines_is_read(tmp_path: Path):
    path = tmp_path / "class.csv"
    path.write_bytes("\ufeffname,id\r\nŁukasz Nowak,s1\r\n\r\nÑúñez García,s2\r\n".encode())
    assert read_roster(path) == (Student("Łukasz Nowak", "s1"), Student("Ñúñez García", "s2"))


def test_roster_separated_by_semicolons_is_read():
    assert parse_roster("name;id\nAda;a1\n") == (Student("Ada", "a1"),)


def test_roster_names_are_trimmed_and_nfc_normalized():
    decomposed = "Zoe\u0308"  # e + combining diaeresis
    (student,) = parse_roster(f"name\n  {decomposed}  \n")
    assert student.name == "Zo\u00eb"


def test_missing_or_empty_id_is_derived_from_the_name_alone():
    first = parse_roster("name,id\nAda Lovelace,\nAlan Turing,t1\n")
    moved = parse_roster("name\nGrace Hopper\nAda Lovelace\n")
    assert first[0].id == moved[1].id == derive_id("Ada Lovelace")
    assert first[1].id == "t1"


def test_derived_ids_are_readable_and_tell_close_names_apart():
    assert derive_id("Zoë O'Brien").startswith("zoe-obrien-")
    assert derive_id("Anna Lee") != derive_id("Anna-Lee")
    assert derive_id("李雷") != derive_id("韩梅梅")
    assert re.fullmatch(r"[a-z0-9-]+", derive_id("李雷"))
    # fixed across runs: blake2b of the name, not Python's hash()
    assert derive_id("Ada Lovelace") == derive_id("Ada Lovelace")
    assert (
        derive_id("Ada Lovelace").rsplit("-", 1)[1]
        == __import__("hashlib").blake2b(b"Ada Lovelace", digest_size=8).hexdigest()[:8]
    )


@pytest.mark.parametrize(
    ("text", "line", "field", "message"),
    [
        (
            "id,email\n1,a@b\n",
            1,
            "header",
            "expected a header row with a 'name' column (or first and last name columns), got 'id'",
        ),
        ("", 1, "header", "got an empty file"),
        ("name,name\nA,B\n", 1, "header", "expected one 'name' column, got two"),
        ("name\n", 1, "row", "expected at least one student below the header, got none"),
        ("name,id\nAda,a1\n,a2\n", 3, "name", "expected a name, got nothing"),
        (
            "name,id\nAda,a1\nBob,b1\nCy,a1\n",
            4,
            "id",
            "expected a unique id, got 'a1' (also on line 2)",
        ),
        (
            "name\nAda\nBob\nAda\n",
            4,
            "name",
            "expected a unique name or an id column, got 'Ada' again (also on line 2)",
        ),
        (
            "name,id\nSmith, John,s1\n",
            2,
            "row",
            "expected 2 fields like the header, got 3 (quote a name that contains the separator)",
        ),
        (
            "name,id,email\nAda,a1,a@b\nAlan Turing,at\n",
            3,
            "row",
            "expected 3 fields like the header, got 2 (leave a column empty with an empty field",
        ),
        ('name,id\nAda,a1\n"Bob,b1\n', 3, "row", "expected well-formed CSV"),
        (
            "name\nA\x07da\n",
            2,
            "name",
            "expected a name of printable characters only, got 'A\\x07da' (U+0007, a control",
        ),
        ("name\n" + "x" * 201 + "\n", 2, "name", "expected a name of at most 200 characters"),
        ("name,id\nAda," + "9" * 65 + "\n", 2, "id", "expected an id of at most 64 characters"),
    ],
)
def test_bad_roster_names_line_field_expected_and_got(text, line, field, message):
    with pytest.raises(RosterError) as info:
        parse_roster(text, "roster.csv")
    err = info.value
    assert (err.file, err.line, err.field) == ("roster.csv", line, field)
    assert message in str(err)
    assert str(err).startswith(f"roster.csv:{line}: {field}: expected ")


def test_roster_over_the_limit_is_refused_at_the_first_extra_student():
    rows = "".join(f"S{i},s{i}\n" for i in range(4))
    with pytest.raises(RosterError, match=r"roster.csv:5: row: expected at most 3 students"):
        parse_roster("name,id\n" + rows, max_students=3)
    assert MAX_STUDENTS == 2000


def test_roster_in_a_legacy_encoding_is_refused_with_the_line_of_the_bad_byte(tmp_path: Path):
    path = tmp_path / "roster.csv"
    path.write_bytes("name\nAda\nZoë\n".encode("cp1252"))
    with pytest.raises(RosterError) as info:
        read_roster(path)
    assert info.value.line == 3 and info.value.field == "encoding"
    assert "expected UTF-8 text" in str(info.value) and "got byte 0xeb" in str(info.value)


def test_missing_roster_file_is_an_error_not_a_traceback(tmp_path: Path):
    with pytest.raises(RosterError, match="expected a CSV file, got no such file"):
        read_roster(tmp_path / "nope.csv")


def test_file_stems_are_safe_unique_and_keep_clean_ids():
    ids = [
        "s001",
        "../../etc/passwd",
        ".hidden",
        "a/b",
        "a\\b",
        "S1",
        "s1",
        "李雷",
        "..",
        "Łukasz",
        "x" * 200,
    ]
    stems = file_stems(ids)
    assert stems[0] == "s001"
    assert len({s.lower() for s in stems}) == len(ids)  # unique even on a case-blind disk
    for s in stems:
        assert re.fullmatch(r"[A-Za-z0-9._-]+", s), s
        assert not s.startswith(".") and not s.startswith("-")
        assert len(s) <= 60
    assert stems[9].startswith("Lukasz-")


def test_file_stems_depend_only_on_the_id():
    assert file_stems(["s1", "weird/id"])[1] == file_stems(["weird/id", "t9", "s2"])[0]


def test_version_ids_run_a_to_z_then_aa():
    ids = version_ids(28)
    assert ids[:3] == ["A", "B", "C"] and ids[25:] == ["Z", "AA", "AB"]
    assert len(set(version_ids(702))) == 702 and version_ids(702)[-1] == "ZZ"


def test_a_moodle_export_with_first_and_last_name_columns_is_read():
    text = (
        '"First name","Surname","ID number","Institution","Department","Email address"\n'
        "Ada,Lovelace,S001,,,ada@example.com\n"
        "Ben,Carter,,,,ben@example.com\n"
    )
    assert parse_roster(text) == (
        Student(name="Ada Lovelace", id="S001"),
        Student(name="Ben Carter", id="ben@example.com"),  # no ID number: the email
    )


@pytest.mark.parametrize(
    "header",
    [
        "First name,Last name",
        "first_name,last_name",
        "Given name,Family name",
        "given names,surname",
        "FirstName,LastName",
        "Forename;Surname",
    ],
)
def test_the_common_spellings_of_given_and_family_name_are_joined_into_one_name(header):
    sep = ";" if ";" in header else ","
    students = parse_roster(f"{header}\nZoë{sep}O'Brien\n")
    assert [s.name for s in students] == ["Zoë O'Brien"]
    assert students[0].id == derive_id("Zoë O'Brien")


def test_a_canvas_gradebook_export_is_read_without_its_points_possible_row():
    text = (
        "Student,ID,SIS User ID,SIS Login ID,Section,Quiz 1 (123)\n"
        "    Points Possible,,,,,10\n"
        '"Lovelace, Ada",4711,S001,ada,Sec A,9\n'
        '"Carter, Ben",4712,,ben,Sec A,7\n'
    )
    assert parse_roster(text) == (
        Student(name="Lovelace, Ada", id="4711"),  # Canvas's ID, always filled
        Student(name="Carter, Ben", id="4712"),
    )


def test_a_canvas_roster_without_its_own_id_column_takes_the_sis_user_id():
    text = "Student,SIS User ID,SIS Login ID\nAda Lovelace,S001,ada\nBen Carter,,ben\n"
    assert [s.id for s in parse_roster(text)] == ["S001", "ben"]


def test_a_name_column_wins_over_first_and_last_name_columns():
    text = "first name,last name,name,id\nAda,Lovelace,Countess of Lovelace,s1\n"
    assert parse_roster(text) == (Student(name="Countess of Lovelace", id="s1"),)


def test_a_row_whose_first_and_last_names_are_both_empty_has_no_name():
    with pytest.raises(RosterError) as err:
        parse_roster("First name,Last name,ID number\n,,S001\n", "r.csv")
    assert str(err.value) == "r.csv:2: name: expected a name, got nothing"
