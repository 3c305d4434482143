#!/bin/bash
# `effmarl` for continuing this training at 677911e. That commit's workflow removes a job's outputs before the job runs
# again (fixed at 870493f: update() outputs), so a job of 3 runs cut off after one had finished would train it again.
# Installed as the workflow's `effmarl` (e.g. in place of the venv's, the real one renamed effmarl.real), it first
# copies each --out that lacks provenance.json back from its finished run in RESTORE_FROM (this folder's runs/), and
# `effmarl train` then skips that run (a finished run of the same configuration: effmarl.train.finished_before).
#   RESTORE_FROM=<main checkout>/published/extended/runs EFFMARL_REAL=<venv>/bin/effmarl.real
if [ "$1" = train ] && [ -n "$RESTORE_FROM" ]; then
  args=("$@")
  for ((i = 0; i < ${#args[@]}; i++)); do
    if [ "${args[$i]}" = --out ]; then
      out=${args[$((i + 1))]}
      src=$RESTORE_FROM/${out#results/extended/}
      if [ ! -f "$out/provenance.json" ] && [ -f "$src/provenance.json" ]; then
        mkdir -p "$out" && cp -r "$src/." "$out/" && echo "restore-finished: $out from $src" >&2
      fi
    fi
  done
fi
exec "${EFFMARL_REAL:?set EFFMARL_REAL to the real effmarl}" "$@"
