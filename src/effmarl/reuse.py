"""One run, trained once. Where a run of a profile trains the same thing as an earlier run of the profile, or as a
complete run of the profile it reuses (`reuses: configs/default.yaml`), the workflow copies that run
(`effmarl reuse-run`, workflow/rules/runs.smk) instead of training it again.

Two run configurations train the same run when they agree in everything but their names, `study` and `profile`,
once each of MAST's and RLx2's parts is read as on or off (`identity`; effmarl.components: an unset switch follows
the method, so `mast.dual_buffer.enabled: true` on a MAST run is that MAST run). Seeds trained in lockstep or one
after another in one process are the same runs as seeds trained alone (tests/test_qmix_lockstep.py), so a run
trained in a group stands for one that would train alone, and the other way round.

A run of the reused profile is copied only where it is complete (its provenance.json written) and was trained by
this code: at this checkout's commit, from a clean checkout (`trained_by_this_code`). Runs of another commit train
here, so every run a table or figure compares comes from one commit (metrics.require_one_commit): a profile that
reuses another is published after that profile ran at the same commit.

Never copied, into or from: the runs of a timing study (their phase times are taken alone; a copy would carry
another job's times), and those of a study whose sparsity the MAST selection decides (`sparsity_from`: their
configuration is complete only once the selection is made, after the workflow is planned). The copy keeps the
trained files and the source's provenance (its commit, machine, times) with the configuration of the run it stands
for and `reused_from` naming the source, so a study table groups it with its study and still says where and at which
commit it was trained.

Plain Python (no torch): the Snakefile and the estimate (effmarl.analysis.envelope) read it.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
from pathlib import Path

from effmarl.config import ConfigError

NAMES = ("study", "profile")  # what names a run without changing what it trains
# a run directory's files that are not what training made: its configuration, logs and the resumable state
NOT_TRAINED = ("provenance.json", "config.yaml", "config.log", "train.log", "train.benchmark.tsv", "reuse.log",
               "reuse.benchmark.tsv")


def identity(cfg: dict) -> str:
    """What a run trains, as a canonical string: its configuration less NAMES, each part's switch resolved."""
    from effmarl.components import PARTS, mast_components

    out = copy.deepcopy({key: value for key, value in cfg.items() if key not in NAMES})
    for part, on in mast_components(cfg).items():
        section = out
        for key in PARTS[part][1]:
            if not isinstance(section.get(key), dict):
                section[key] = {}
            section = section[key]
        section["enabled"] = on
    return json.dumps(out, sort_keys=True, default=str)


def reused_profile(workflow_cfg: dict) -> dict | None:
    """The profile this one reuses (`reuses`, loaded and validated as any profile), or None. Refused in one line: a
    profile that reuses itself, one writing to the same results_dir, or a chain (the reused profile reuses another)."""
    path = workflow_cfg.get("reuses")
    if path is None:
        return None
    from effmarl.studies import catalogue_path, load_profile

    # relative to the working directory, else to the repository whose configs/ holds the study catalogue (a workflow
    # run with --directory elsewhere)
    found = [p for p in (Path(path), Path(os.path.realpath(catalogue_path())).parent.parent / path) if p.is_file()]
    if not found:
        raise ConfigError([f"field 'reuses': no profile file {path!r} (a path such as configs/default.yaml)"],
                          "profile")
    other = load_profile(found[0])
    if other["results_dir"] == workflow_cfg["results_dir"] or other["profile"] == workflow_cfg["profile"]:
        raise ConfigError([f"field 'reuses': {path} is this profile or writes to its results_dir "
                           f"({other['results_dir']}); a profile reuses another profile's runs"], "profile")
    if other.get("reuses") is not None:
        raise ConfigError([f"field 'reuses': {path} reuses {other['reuses']} in turn; name the profile that trains "
                           "the runs"], "profile")
    return other


def trained_by_this_code(run_dir: str | Path, commit: str | None) -> bool:
    """Whether `run_dir` is a complete run trained at `commit` (this checkout's) from a clean checkout."""
    path = Path(run_dir) / "provenance.json"
    if commit is None or not path.is_file():
        return False
    try:
        git = json.loads(path.read_text())["git"]
    except (ValueError, KeyError, TypeError):
        return False
    return git.get("commit") == commit and git.get("dirty") is False


def apart(workflow_cfg: dict) -> set[str]:
    """The studies whose runs are never copied nor copied from: timing studies, and those whose sparsity the MAST
    selection decides (module doc)."""
    from effmarl.studies import selection_studies, timing_studies

    return set(timing_studies(workflow_cfg)) | set(selection_studies(workflow_cfg))


def sources(other: dict | None, complete=lambda run_dir: True) -> dict[str, str]:
    """{identity: run directory} of the reused profile's runs that `complete(run_dir)` accepts (the workflow: those
    `trained_by_this_code`; the estimate: all, as if that profile had run at this commit), timing studies' runs left
    out."""
    if other is None:
        return {}
    from effmarl.studies import expand_all

    timing = apart(other)
    out: dict[str, str] = {}
    for study, by_id in expand_all(other).items():
        if study in timing:
            continue
        for rid, cfg in by_id.items():
            run_dir = f"{other['results_dir']}/{study}/{rid}"
            if complete(run_dir):
                out.setdefault(identity(cfg), run_dir)
    return out


def copies(workflow_cfg: dict, runs: dict[str, dict[str, dict]],
           external: dict[str, str]) -> dict[tuple[str, str], str]:
    """{(study, run id): source run directory} for each run of `runs` copied rather than trained: one that trains
    what a run of `external` (`sources`) trained, else what an earlier run of the profile (studies in profile order,
    runs in grid order) trains. The runs of the studies `apart` are never copied nor copied from."""
    timing = apart(workflow_cfg)
    first: dict[str, str] = {}
    out: dict[tuple[str, str], str] = {}
    for study, by_id in runs.items():
        if study in timing:
            continue
        for rid, cfg in by_id.items():
            key = identity(cfg)
            if key in external:
                out[(study, rid)] = external[key]
            elif key in first:
                out[(study, rid)] = first[key]
            else:
                first[key] = f"{workflow_cfg['results_dir']}/{study}/{rid}"
    return out


def planned(workflow_cfg: dict, runs: dict[str, dict[str, dict]]) -> dict[tuple[str, str], str]:
    """`copies` as planned before anything ran: the reused profile's runs taken as run at this commit (the estimate,
    `effmarl validate`)."""
    return copies(workflow_cfg, runs, sources(reused_profile(workflow_cfg)))


def from_reused(workflow_cfg: dict, copied: dict[tuple[str, str], str]) -> int:
    """How many of `copied` come from the reused profile (the rest from earlier runs of this one)."""
    return sum(not src.startswith(f"{workflow_cfg['results_dir']}/") for src in copied.values())


def trained(runs: dict[str, dict[str, dict]], copied: dict[tuple[str, str], str]) -> dict[str, dict[str, dict]]:
    """`runs` less the copied ones: what the profile trains (every study kept, possibly with no run)."""
    return {study: {rid: cfg for rid, cfg in by_id.items() if (study, rid) not in copied}
            for study, by_id in runs.items()}


def reuse_run(source: str | Path, config: str | Path, out: str | Path) -> list[Path]:
    """Copy the complete run `source` into `out` as the run configured by `config` (its config.yaml): the trained
    files, then provenance.json last (the source's, with this run's configuration and `reused_from`). Refused in one
    line, before anything is written: a source with no provenance.json (not a complete run), or one that trained
    something else than `config` says."""
    from effmarl import io
    from effmarl.config import load_yaml

    source, out = Path(source), Path(out)
    prov_path = source / "provenance.json"
    if not prov_path.is_file():
        raise ConfigError([f"{source}: no provenance.json, not a complete run to reuse"], "effmarl reuse-run")
    try:
        prov = json.loads(prov_path.read_text())
        theirs = prov["config"]
        if not isinstance(theirs, dict):
            raise TypeError(theirs)
    except (ValueError, KeyError, TypeError):
        raise ConfigError([f"{prov_path}: not a run's provenance (unreadable, or no config)"],
                          "effmarl reuse-run") from None
    cfg = load_yaml(config)
    if not isinstance(cfg, dict):
        raise ConfigError([f"not a run configuration (a YAML mapping; found {type(cfg).__name__}: empty or "
                           "cut off?)"], str(config))
    if identity(theirs) != identity(cfg):
        raise ConfigError([f"{source}: trained another run than {config} (their configurations differ beyond "
                           f"{', '.join(NAMES)})"], "effmarl reuse-run")
    written = []
    for path in sorted(source.iterdir()):
        if path.is_file() and path.name not in NOT_TRAINED and not path.name.startswith("."):
            written.append(io.write_with(out / path.name, lambda tmp, p=path: shutil.copyfile(p, tmp)))
    prov["config"] = cfg
    prov["reused_from"] = {"run": str(source), "study": theirs.get("study"), "profile": theirs.get("profile")}
    written.append(io.write_json(out / "provenance.json", prov))
    return written
