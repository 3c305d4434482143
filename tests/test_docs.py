"""README.md and docs/ cannot drift from the repository: the tables they quote from `published/` are what
`effmarl readme-tables` generates from the published files, every repository path they (and the code's
comments and docstrings) name exists, and every `effmarl …` / `snakemake …` command in README.md parses.

What counts as a repository path (PATH below), in README.md, CHANGELOG.md, docs/*.md, src/**/*.py (comments,
docstrings and strings alike), Snakefile and workflow/ (rules, schemas, profiles):
- a token with a `/` whose first part is a top-level directory of the repository (`src/…`, `docs/…`,
  `published/…`, `.ci/…`), resolved from the repository root; one whose first part is `..`, resolved from the
  file's own directory; and one ending in a file extension, or in `/`, whose first part is a directory of the
  package (`envs/mpe.py`, `algos/qmix/`) or of the file's own directory, resolved from there;
- a bare Markdown file name (`specification.md`), which some file of that name in the repository must be.
Not checked: the generated outputs under `figures/` and `results/` (git-ignored; `figures/README.md` is
checked), the argument of `--out` / `--stem` (what a command will write), absolute paths and URLs, and a
placeholder's part of a path (`configs/<profile>.yaml`, `workflow/rules/*.smk`, `benchmarks/results/x.{md,csv}`
check only `configs/`, `workflow/rules/`, `benchmarks/results/`). A path without an extension may name an
output stem: it holds when a file `<path>.*` exists. ALLOWED lists the known exceptions, each with its reason.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from effmarl.cli import build_parser, main
from effmarl.config import ConfigError
from effmarl.readme_tables import BLOCKS, render

ROOT = Path(__file__).resolve().parents[1]
PUBLISHED = ROOT / "published" / "default"
PACKAGE = ROOT / "src" / "effmarl"
GENERATED = ("figures/", "results/")
TOP = {p.name for p in ROOT.iterdir() if p.is_dir() and not p.name.startswith(".")} | {".ci", "figures", "results"}
TOKEN = re.compile(r"(?<![\w/.~$@:=%-])((?:\.\./)*[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.<>*{}…\[\],|-]*)+)")
BARE_MD = re.compile(r"(?<![\w/.~$@:=-])([A-Za-z0-9_-]+\.md)\b")
PLACEHOLDER = re.compile(r"[<*{…\[|]|\.\.\.")
EXTENSION = re.compile(r"\.[A-Za-z0-9]{1,8}$")
OUTPUT_FLAG = re.compile(r"--(?:out|stem)[ =]$")
# (file, path): why the path named there does not exist
ALLOWED: dict[tuple[str, str], str] = {}


def text_files() -> list[Path]:
    files = [ROOT / "README.md", ROOT / "CHANGELOG.md", ROOT / "Snakefile", *sorted((ROOT / "docs").glob("*.md")),
             *sorted(PACKAGE.rglob("*.py"))]
    files += sorted(p for p in (ROOT / "workflow").rglob("*") if p.suffix in (".smk", ".yaml", ".rst"))
    return [p for p in files if p.is_file()]


def _exists(path: Path) -> bool:
    return path.exists() or (not EXTENSION.search(path.name) and any(path.parent.glob(path.name + ".*")))


def missing_path(token: str, source: Path) -> str | None:
    """The token (as PATH defines it) when it names a repository path that does not exist, else None."""
    token = token.rstrip(".,:;)'\"")
    parts = token.split("/")
    first = parts[0]
    if first == "..":
        bases = [source.parent]
    elif first in TOP:
        if token.startswith(GENERATED) and token != "figures/README.md":
            return None
        bases = [ROOT]
    elif first and (EXTENSION.search(token) or token.endswith("/")):
        bases = [base for base in (PACKAGE, source.parent) if (base / first).is_dir()]
    else:
        bases = []
    kept = []
    for part in parts:
        if PLACEHOLDER.search(part):
            break
        kept.append(part)
    rel = [p for p in kept if p]
    return None if not bases or any(_exists(base.joinpath(*rel)) for base in bases) else token


def broken_paths() -> list[str]:
    names = {p.name for p in ROOT.rglob("*.md") if not {".venv", ".git", ".snakemake"} & set(p.parts)}
    found = []
    for source in text_files():
        rel = source.relative_to(ROOT).as_posix()
        for number, line in enumerate(source.read_text().splitlines(), 1):
            for match in TOKEN.finditer(line):
                if OUTPUT_FLAG.search(line[:match.start()]):
                    continue
                bad = missing_path(match.group(1), source)
                if bad and (rel, bad) not in ALLOWED:
                    found.append(f"{rel}:{number}: {bad}")
            found += [f"{rel}:{number}: {m.group(1)}" for m in BARE_MD.finditer(line) if m.group(1) not in names]
    return found


def test_every_repository_path_named_in_the_readme_docs_and_code_exists():
    assert broken_paths() == []
    stale = [f"{file}: {path}" for file, path in ALLOWED if path not in (ROOT / file).read_text()]
    assert stale == [], "no longer named there: remove from ALLOWED"


def test_the_path_rule_finds_missing_files_and_leaves_outputs_placeholders_and_other_repositories_alone(tmp_path):
    source = PACKAGE / "algos" / "qmix" / "settings.py"
    assert missing_path("docs/papers.md", source) == "docs/papers.md"
    assert missing_path("envs/smax_rollout.py", source) == "envs/smax_rollout.py"
    doc = ROOT / "docs" / "x.md"
    assert missing_path("../published/default/nothing.csv", doc) == "../published/default/nothing.csv"
    for fine in ("docs/specification.md", "envs/smax.py", "algos/qmix/", "configs/<profile>.yaml",
                 "workflow/rules/*.smk", "benchmarks/results/qmix_update.{md,csv}", "benchmarks/results/qmix_update",
                 "results/default/paper1/metrics.summary.parquet", "figures/paper1/claims.md",
                 "openai/maddpg", "sparse/dense", "../published/default/costs.md"):
        assert missing_path(fine, doc if fine.startswith("..") else source) is None, fine


# ---- the tables quoted from published/ ----------------------------------------------------------------------

def test_readme_and_docs_tables_are_what_effmarl_readme_tables_generates_from_published():
    """Run `effmarl readme-tables README.md docs/*.md` when this fails (after publishing new results)."""
    readme = (ROOT / "README.md").read_text()
    assert "<!-- published:paper1-claims -->" in readme and "<!-- published:paper2-claims -->" in readme
    stale = [str(path.relative_to(ROOT)) for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
             if render(path.read_text(), path, PUBLISHED) != path.read_text()]
    assert stale == [], "run: effmarl readme-tables " + " ".join(stale)


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
    assert set(BLOCKS) == {"paper1-claims", "paper2-claims", "paper2-table1", "default-costs", "profile-costs",
                           "paper2-sparse-inference"}


def test_a_block_at_a_profile_reads_that_profiles_published_directory_beside_the_default(tmp_path):
    """`NAME@PROFILE` renders block NAME from published/PROFILE (a sibling of --published), links included; the
    same block without the suffix still reads --published."""
    import shutil

    published = tmp_path / "published"
    shutil.copytree(PUBLISHED / "mast" / "tables", published / "default" / "mast" / "tables")
    shutil.copytree(PUBLISHED / "mast" / "tables", published / "extended" / "mast" / "tables")
    claims = published / "extended" / "mast" / "tables" / "claims.csv"
    claims.write_text(claims.read_text().replace("not measured", "MEASURED ELSEWHERE"))
    for stem in ("costs.csv", "costs.provenance.json"):
        shutil.copy(PUBLISHED / "mast" / stem, published / "extended" / stem)
    doc = tmp_path / "docs" / "page.md"
    doc.parent.mkdir()
    doc.write_text("".join(f"<!-- published:{n} -->\n<!-- /published:{n} -->\n" for n in (
        "paper2-claims", "paper2-claims@extended", "profile-costs@extended")))
    text = render(doc.read_text(), doc, published / "default")
    default, extended, costs = text.split("<!-- /published:")[:3]
    assert "not measured" in default and "MEASURED ELSEWHERE" not in default
    assert "MEASURED ELSEWHERE" in extended and "not measured" not in extended
    link = re.search(r"\]\(([^)]*claims\.md)\)", extended).group(1)
    assert (doc.parent / link).resolve() == (published / "extended" / "mast" / "tables" / "claims.md").resolve()
    # the profile's one costs table, its runs counted from its training rows: no row summing parts
    assert "| 40 |" in costs and "all of the" not in costs
    with pytest.raises(ConfigError) as info:
        render("<!-- published:paper2-claims@paper -->\n<!-- /published:paper2-claims@paper -->\n", doc,
               published / "default")
    assert all(line.endswith("no such published file") and "/published/paper/" in line for line in info.value.lines)


# ---- the README's commands ----------------------------------------------------------------------------------

def readme_commands(tool: str) -> list[str]:
    """`effmarl …` / `snakemake …` commands of README.md: code spans and lines of fenced blocks, split at `&&`."""
    text = (ROOT / "README.md").read_text()
    fenced = re.findall(r"```\w*\n(.*?)```", text, re.S)
    spans = re.findall(r"`([^`\n]+)`", re.sub(r"```\w*\n.*?```", "", text, flags=re.S))
    pieces = [part.strip() for chunk in fenced + spans for line in chunk.splitlines() for part in line.split("&&")]
    return sorted({p for p in pieces if p.startswith(tool + " ")})


def _placeholder(command: str) -> bool:
    return bool(re.search(r"<[^>]*>|…|\[", command))


def test_ci_runs_the_readmes_test_command_verbatim():
    fenced = re.findall(r"```bash\n(.*?)\n```", (ROOT / "README.md").read_text(), re.S)
    test_command = [c for c in fenced if c.endswith("python -m pytest")]
    assert len(test_command) == 1 and test_command[0] in (ROOT / ".ci" / "run").read_text().splitlines()


def test_the_readme_names_effmarl_and_snakemake_commands():
    assert readme_commands("effmarl") and readme_commands("snakemake")
    assert "snakemake --cores all" in readme_commands("snakemake")


@pytest.mark.parametrize("command", readme_commands("effmarl"))
def test_every_effmarl_command_in_the_readme_parses(command, capsys):
    """Its sub-command exists (`--help` exits 0) and, unless it shows placeholders, the whole line parses."""
    words = shlex.split(command)[1:]
    path = words[:2] if words[0] == "bench" else words[:1]
    with pytest.raises(SystemExit) as info:
        build_parser().parse_args([*path, "--help"])
    assert info.value.code == 0
    if not _placeholder(command):
        build_parser().parse_args(words)


def _snakemake_args(command: str):
    from snakemake.cli import get_argument_parser

    return get_argument_parser().parse_args(shlex.split(command)[1:])


@pytest.mark.parametrize("command", readme_commands("snakemake"))
def test_every_snakemake_command_in_the_readme_parses_and_names_files_that_exist(command):
    args = _snakemake_args(command)
    for path in [*(args.configfile or []), *([args.workflow_profile] if args.workflow_profile else [])]:
        assert (ROOT / path).exists(), path


@pytest.mark.slow
def test_the_readmes_workflow_commands_dry_run_on_the_default_smoke_and_extended_profiles(tmp_path):
    """`snakemake -n` of every README command that runs the workflow, one dry run per profile with the targets
    of all its commands. The paper profile's dry run (~35 s) is tests/test_workflow.py's."""
    targets: dict[str, set[str]] = {}
    for command in readme_commands("snakemake"):
        args = _snakemake_args(command)
        config = [str(c) for c in args.configfile or []] or ["configs/default.yaml"]
        if args.report or args.unlock or args.workflow_profile or args.lint or config[0].endswith("paper.yaml"):
            continue
        targets.setdefault(config[0], set()).update(args.targets or ["all"])
    assert set(targets) == {"configs/default.yaml", "configs/smoke.yaml", "configs/extended.yaml"}, targets
    for config, wanted in sorted(targets.items()):
        proc = subprocess.run([str(Path(sys.executable).parent / "snakemake"), *sorted(wanted), "-n", "--quiet",
                               "--cores", "2", "--snakefile", str(ROOT / "Snakefile"), "--directory", str(tmp_path),
                               "--configfile", str(ROOT / config)],
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, f"{config} {sorted(wanted)}: {proc.stderr[-2000:]}"


def test_results_quotes_sparse_inference_from_the_published_benchmark():
    """docs/results.md's sparse-inference speeds are the published bench_sparse.csv's (issue 35: it quoted
    0.5-0.8x from an older benchmark while the published file has compact at 0.38-0.48x)."""
    text = (ROOT / "docs" / "results.md").read_text()
    assert "<!-- published:paper2-sparse-inference -->" in text
    block = text.split("<!-- published:paper2-sparse-inference -->")[1].split("<!-- /published:")[0]
    bench = pd.read_csv(PUBLISHED / "bench" / "bench_sparse.csv")
    for form in ("compact", "csr"):
        speed = bench.loc[bench["variant"] == form, "speedup_vs_dense"]
        assert f"| {form} | {speed.min():.2f}–{speed.max():.2f}× |" in block, form
