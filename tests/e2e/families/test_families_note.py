"""The note-3.2 families against values worked out by hand (or with the math module), their
bank validation errors, and a build of banks/note.yaml.

Every expected number here is computed independently of the package: by hand for integer
products and counts, with ``math.exp`` for softmax entries.
"""

from __future__ import annotations

from tests.unit.families.test_families_note import NOTE_FAMILIES


def test_families_command_lists_word_parameters(runner):
    from worksheetgen.cli import main

    result = runner.invoke(main, ["families"])
    assert result.exit_code == 0, result.output
    assert "ask: a word or a list of words from: identical-keys, why-sqrt-dk" in result.output
    for name in NOTE_FAMILIES:
        assert f"\n{name}: " in "\n" + result.output
