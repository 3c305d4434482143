"""Dead code: a public function or class of these modules that nothing in src/effmarl names besides its own
definition is not kept (issue 36: `style.legend_right`, `paper1_counters.above_noise`,
`operators.soft_mellowmax_operator` were left behind by earlier designs)."""

from __future__ import annotations

import ast
import re

import pytest
from conftest import ROOT

SRC = ROOT / "src" / "effmarl"
MODULES = ["analysis/style.py", "analysis/figures/paper1_counters.py", "algos/qmix/operators.py"]


def sources() -> dict:
    """{path: text} of every Python and YAML file of src/effmarl (a YAML table may name a function)."""
    return {path: path.read_text(encoding="utf-8") for pattern in ("*.py", "*.yaml") for path in SRC.rglob(pattern)}


def unused_names(own, texts: dict) -> list[str]:
    """Top-level public functions and classes of file `own` whose name occurs (as a word) in none of `texts` but
    at their own definition; names looked up by string (a variant table's `operator`) count as used."""
    out = []
    for node in ast.parse(texts[own]).body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef) and not node.name.startswith("_"):
            word = re.compile(rf"\b{node.name}\b")
            if sum(len(word.findall(text)) for text in texts.values()) <= 1:
                out.append(node.name)
    return out


def test_the_finder_reports_exactly_the_function_nothing_else_names():
    texts = {"a.py": "def f():\n    return g()\n\ndef g():\n    return 1\n\ndef h():\n    return f()\n",
             "b.py": "import a\nTABLE = {'op': 'k'}\n", "c.yaml": "operator: k\n"}
    texts["a.py"] += "\ndef k():\n    return 2\n"
    # f is called by h, g by f, k is named by b's table and c's YAML; h is named nowhere else
    assert unused_names("a.py", texts) == ["h"]


@pytest.mark.parametrize("module", MODULES)
def test_no_public_function_of_the_module_is_unused(module):
    assert unused_names(SRC / module, sources()) == []
