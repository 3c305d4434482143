"""A published note quotes the files it cites: the replicate of 2026-12-02 compares its selection with the one
published on 2026-12-01, whose file has since been overwritten by the declared-90 % run (issue 35). Its citation
must reach the table it quotes (a path in the folder, or `commit:path` read with `git show`)."""

from __future__ import annotations

import io
import re
import shutil
import subprocess

import pandas as pd
import pytest
from conftest import ROOT

REPLICATE = ROOT / "published" / "default" / "mast" / "replicate-2026-12-02"


def cited_table(citation: str) -> pd.DataFrame:
    """The Markdown table a citation names: `commit:path` (git show) or a path relative to the replicate."""
    if re.fullmatch(r"[0-9a-f]{7,40}:\S+", citation):
        if shutil.which("git") is None or not (ROOT / ".git").exists():
            pytest.skip("no git history to read a commit's file from")
        text = subprocess.run(["git", "show", citation], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout
    else:
        text = (REPLICATE / citation).read_text(encoding="utf-8")
    rows = [line for line in text.splitlines() if line.startswith("|") and not line.startswith("|:")]
    frame = pd.read_csv(io.StringIO("\n".join(rows)), sep="|", skipinitialspace=True).dropna(axis=1, how="all")
    return frame.rename(columns=str.strip)


def quoted_rows(text: str) -> dict[float, tuple[float, float]]:
    """{sparsity: (published MAST / dense, replicate MAST / dense)} of the README's comparison table."""
    out = {}
    for line in text.splitlines():
        m = re.match(r"\|\s*(0\.\d+)\s*\|\s*([\d.]+)[^|]*\|\s*([\d.]+)", line)
        if m:
            out[float(m[1])] = (float(m[2]), float(m[3]))
    return out


def test_the_replicate_quotes_the_selection_it_cites_and_its_own():
    text = (REPLICATE / "README.md").read_text(encoding="utf-8")
    citation = re.search(r"published stage 1 of 2026-12-01 \(`([^`]+)`", text)[1]
    published, own = cited_table(citation), cited_table("tables/selection.md")
    rows = quoted_rows(text)
    assert sorted(rows) == [0.8, 0.9, 0.95]
    for sparsity, (then, now) in rows.items():
        assert round(float(published.loc[published["sparsity"] == sparsity, "normalised"].iloc[0]), 3) == then
        assert round(float(own.loc[own["sparsity"] == sparsity, "normalised"].iloc[0]), 3) == now
