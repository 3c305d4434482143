"""The figure index: one page listing every regenerated figure and table with its caption, the runs
(profile, commit) it was made from and, for a paper-2 output, whether it is evidence (its stamp), read from the
provenance sidecars the figure/table commands write; and the declared outputs the profile leaves out, with the
reason (effmarl.outputs.left_out: e.g. Fig. 12 where no map has several unit types)."""

from __future__ import annotations

import json
from pathlib import Path

from effmarl import io


def entries(outputs: list[str]) -> list[dict]:
    """One entry per figure/table stem among `outputs` (e.g. x.pdf and x.png share the stem x)."""
    stems: dict[Path, list[str]] = {}
    for path in outputs:
        path = Path(path)
        stems.setdefault(path.with_suffix(""), []).append(str(path))
    found = []
    for stem, files in stems.items():
        sidecar = json.loads(stem.with_suffix(".provenance.json").read_text())
        found.append({
            "stem": str(stem), "files": sorted(files), "kind": sidecar.get("kind"), "name": sidecar.get("name"),
            "caption": sidecar.get("caption"), "source_runs": sidecar.get("source_runs"),
            "evidence": sidecar.get("evidence"),
            "commit": sidecar["git"]["commit"], "made_at": sidecar["finished_at"],
        })
    return found


def output_name(stem: str | Path, out_stem: str | Path) -> str:
    """An output's name in the index: its path under the index's folder without extension ('paper1/phase_scaling',
    'paper1_scale/phase_breakdown'), unique per output even where one figure module draws several studies."""
    stem, root = Path(stem), Path(out_stem).parent
    return str(stem.relative_to(root)) if stem.is_relative_to(root) else str(stem)


def write_index(outputs: list[str], out_stem: str | Path, left_out: list[dict] | None = None) -> list[Path]:
    """index.md and index.json of `outputs`; index.md ends with `left_out` ({kind, name, stem, reason}: the declared
    outputs the profile does not make, effmarl.outputs.left_out), each with the reason."""
    out_stem = Path(out_stem)
    items = entries(outputs)
    lines = ["# Regenerated figures and tables", "",
             "Each entry was made by `effmarl figure` / `effmarl table` from the runs named under it.", ""]
    for item in items:
        rel = [str(Path(f).relative_to(out_stem.parent)) if Path(f).is_relative_to(out_stem.parent) else f
               for f in item["files"]]
        lines += [f"## {item['kind']} `{output_name(item['stem'], out_stem)}` ({item['name']})", "",
                  *([f"**{item['evidence']}**", ""] if item.get("evidence") else []),
                  item["caption"] or "", "",
                  "files: " + ", ".join(f"[{r}]({r})" for r in rel), "",
                  f"source: {item['source_runs'] or 'see provenance sidecar'}; made {item['made_at']} "
                  f"at commit {str(item['commit'])[:10]}", ""]
    if left_out:
        lines += ["# Not made in this profile", "",
                  "Declared by a figure or table module, left out here because the profile lacks what it needs:", ""]
        lines += [f"- {o['kind']} `{o['name']}` ({o['stem']}): {o['reason']}" for o in left_out] + [""]
    return [io.write_text(out_stem.with_suffix(".md"), "\n".join(lines)),
            io.write_json(out_stem.with_suffix(".json"), items)]
