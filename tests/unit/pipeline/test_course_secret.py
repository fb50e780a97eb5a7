"""The course secret: it enters every draw, changes every variant, and is written nowhere.

A behaviour across modules, not one module's tests (bank.load, model, pipeline.build,
pipeline.options, solve.rng)."""

from __future__ import annotations

from tests.solved import make_build
from worksheetgen.bank.load import load_banks
from worksheetgen.model import SheetIdentity, Student
from worksheetgen.solve.rng import secret_fingerprint, sheet_code

BANK = (
    "sheet: {id: s}\nquestions:\n"
    "  - id: a\n    family: softmax\n    params: {T: 3}\n"
    "  - id: b\n    family: lab3\n"
    "  - id: c\n    family: scaling\n"
)
STUDENTS = [(f"id{n}", f"Student {n}", Student(f"Student {n}", f"id{n}")) for n in range(6)]


def _draws(write_bank, secret: bytes | None) -> dict[tuple[str, str], str]:
    bank = load_banks([write_bank(BANK)])
    build = make_build(bank, 42, STUDENTS, secret=secret)
    return {(s.id, i.spec.id): repr(i.given) for s in build.sheets for i in s.items}


def test_a_secret_gives_the_seed_and_roster_other_numbers(write_bank):
    plain = _draws(write_bank, None)
    keyed = _draws(write_bank, b"course secret one")
    assert plain.keys() == keyed.keys()
    assert plain != keyed


def test_changing_the_secret_changes_every_variant(write_bank):
    # every sheet's variant (its questions' numbers together) changes; a single question of a
    # family with a handful of possible draws (scaling) may of course land on the same one
    one = _draws(write_bank, b"course secret one")
    two = _draws(write_bank, b"course secret two")
    for sheet, _, _ in STUDENTS:
        assert [v for k, v in one.items() if k[0] == sheet] != [
            v for k, v in two.items() if k[0] == sheet
        ]
    softmax = [k for k in one if k[1] == "a"]
    assert all(one[k] != two[k] for k in softmax)


def test_the_same_secret_draws_the_same_numbers(write_bank):
    assert _draws(write_bank, b"course secret one") == _draws(write_bank, b"course secret one")


def test_the_sheet_code_depends_on_secret_seed_and_sheet():
    codes = {
        sheet_code(SheetIdentity(seed, sheet, secret))
        for seed in (1, 2)
        for sheet in ("A", "B")
        for secret in (None, b"x", b"y")
    }
    assert len(codes) == 12
    assert all(len(c) == 9 and c[4] == "-" for c in codes)


def test_one_identity_gives_the_streams_the_loose_arguments_gave():
    """(seed, sheet id, secret) as one SheetIdentity: each generator's seed material and the
    sheet code are as before (values recorded from the three loose arguments), and the
    secret stays out of the identity's repr."""
    from worksheetgen.solve.rng import generator, order_generator, pool_generator

    def first(g) -> list[int]:
        return g.integers(0, 2**62, 3).tolist()

    plain, keyed = SheetIdentity(42, "A"), SheetIdentity(42, "A", b"k" * 16)
    assert first(generator(plain, "q1")) == [
        1823752886819918722,
        2115576250387540620,
        113274445143743522,
    ]
    assert first(pool_generator(plain, "slot"))[0] == 853353929634805506
    assert first(order_generator(plain))[0] == 3264084828141442005
    assert sheet_code(plain) == "QHBO-YZK4"
    assert first(generator(keyed, "q1")) == [
        3562341371875103813,
        2186009409437653423,
        2790683172754852765,
    ]
    assert first(pool_generator(keyed, "slot"))[0] == 3071828318305470314
    assert first(order_generator(keyed))[0] == 1541090077808573456
    assert sheet_code(keyed) == "AHJ5-PALI"
    assert "kkkk" not in repr(keyed) and "42" in repr(keyed)


def test_the_fingerprint_tells_secrets_apart_without_holding_them():
    one, two = secret_fingerprint(b"secret-one"), secret_fingerprint(b"secret-two")
    assert one != two and one == secret_fingerprint(b"secret-one")
    assert "secret-one" not in one


def test_a_sheet_prints_its_code_and_not_the_seed_while_the_key_maps_one_to_the_other(tmp_path):
    import json

    from worksheetgen.pipeline.build import build
    from worksheetgen.pipeline.options import BuildOptions

    result = build(BuildOptions(seed=987654, out=str(tmp_path), pdf=False))
    code = json.loads((result.folder / "key.json").read_text())["sheets"][0]["code"]
    for name in ("sheet.md", "sheet.tex"):
        text = (result.folder / name).read_text()
        assert f"sheet code {code}" in text and "987654" not in text
    for name in ("key.md", "key.tex"):
        assert f"seed 987654, sheet code {code}" in (result.folder / name).read_text()
    manifest = json.loads((result.folder / "manifest.json").read_text())
    assert manifest["seed"] == 987654 and manifest["draws"][0]["code"] == code
