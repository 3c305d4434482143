"""`effmarl readme-tables`: the blocks between <!-- published:NAME --> comments are regenerated from the
published files, a stale block is reported by --check, and bad blocks or missing files are one-line errors."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from effmarl.cli import main
from effmarl.config import ConfigError
from effmarl.readme_tables import BLOCKS, render

ROOT = Path(__file__).resolve().parents[1]
PUBLISHED = ROOT / "published" / "default"


def test_a_stale_block_is_reported_by_check_and_rewritten_without_it(tmp_path, capsys):
    doc = tmp_path / "docs" / "page.md"
    doc.parent.mkdir()
    doc.write_text("intro\n<!-- published:paper1-claims -->\nold numbers\n<!-- /published:paper1-claims -->\nend\n")
    before = doc.read_text()
    assert main(["readme-tables", str(doc), "--published", str(PUBLISHED), "--check"]) == 1
    assert doc.read_text() == before and "differ" in capsys.readouterr().out
    assert main(["readme-tables", str(doc), "--published", str(PUBLISHED)]) == 0
    text = doc.read_text()
    assert text.startswith("intro\n") and text.endswith("<!-- /published:paper1-claims -->\nend\n")
    assert "old numbers" not in text and "| -26.66 % |" in text
    link = re.search(r"\]\(([^)]*claims\.md)\)", text).group(1)
    assert (doc.parent / link).resolve() == (PUBLISHED / "paper1" / "tables" / "claims.md").resolve()
    assert main(["readme-tables", str(doc), "--published", str(PUBLISHED), "--check"]) == 0


@pytest.mark.parametrize("text, expected", [
    ("<!-- published:nope -->\n<!-- /published:nope -->\n", "unknown block 'nope'"),
    ("<!-- published:paper1-claims -->\nno end\n", "has no closing <!-- /published:paper1-claims -->"),
])
def test_a_bad_block_is_a_one_line_error(tmp_path, capsys, text, expected):
    doc = tmp_path / "page.md"
    doc.write_text(text)
    assert main(["readme-tables", str(doc), "--published", str(PUBLISHED)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and expected in err


def test_a_missing_published_file_is_named_in_one_line(tmp_path):
    doc = tmp_path / "page.md"
    doc.write_text("<!-- published:paper2-table1 -->\n<!-- /published:paper2-table1 -->\n")
    with pytest.raises(ConfigError) as info:
        render(doc.read_text(), doc, tmp_path)
    assert [line.split(": ", 1)[1] for line in info.value.lines] == ["no such published file"] * 2
    assert set(BLOCKS) == {"paper1-claims", "paper2-claims", "paper2-table1", "default-costs"}
