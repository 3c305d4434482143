#!/usr/bin/env bash
# The paper-2 engine on a lent GPU, in one call (device machine: repository root, $OUT collected afterwards).
# Installs the pinned environment (CUDA torch from the registry, since the machine's own CPU wheel is not there),
# checks the CUDA path of the tests that have one, then measures `effmarl bench qmix --device cuda` beside the
# CPU on the same machine. Writes $OUT/qmix_engine_cuda.{md,csv,provenance.json} and $OUT/qmix_engine_cpu16.*.
set -euo pipefail
OUT=${OUT:-benchmarks/results}
python3.11 -m venv /tmp/venv && . /tmp/venv/bin/activate
pip install -q -c requirements/lock.txt -e '.[dev]'
python -c "import torch; assert torch.cuda.is_available(), 'no CUDA GPU visible to torch'; print(torch.cuda.get_device_name())"
export EFFMARL_NO_PROGRESS=1
timeout 240 effmarl bench qmix --device cuda --envs 8 --seeds 8 --rounds 5 --repeats 3 --out "$OUT/qmix_engine_cuda"
timeout 240 effmarl bench qmix --device cpu --threads 16 --envs 8 --seeds 8 --rounds 5 --repeats 3 \
  --out "$OUT/qmix_engine_cpu16"
cat "$OUT"/qmix_engine_cuda.md "$OUT"/qmix_engine_cpu16.md
