# effmarl: the pinned environment the workflow runs in.
#   docker build -t effmarl --build-arg GIT_COMMIT=$(git rev-parse HEAD) .
#   docker run --rm -v "$PWD/results:/effmarl/results" -v "$PWD/figures:/effmarl/figures" effmarl
# The default command runs `snakemake --cores all` on configs/default.yaml. `effmarl env-info` inside the
# container prints what a result was produced with (versions, hardware, usable counter sources); perf needs
# `--cap-add PERFMON` (or --privileged) and a host that exposes hardware counters.
# BASE: the official Python image, pinned by digest. CI substitutes a base built from Debian's own packages
# (bookworm's python3 is 3.11, with a venv first on PATH; see .ci/container.sh), so every instruction below
# FROM is what CI builds and runs.
ARG BASE=python:3.11-slim-bookworm@sha256:2e32f7d302adc1c37428355c1e646897c0c53f4fd60b6a551245fb90ee129f91
FROM ${BASE}

# TORCH_INDEX: the CPU build by default (small image); for CUDA use https://download.pytorch.org/whl/cu128.
ARG TORCH_INDEX=https://download.pytorch.org/whl/cpu
# WITH_STARCRAFT_SMAC=1 adds oxwhirl's SMAC (real StarCraft II maps). StarCraft II itself is not in the image:
# mount it and point SC2PATH at it (e.g. -v /opt/StarCraftII:/opt/StarCraftII -e SC2PATH=/opt/StarCraftII).
# SMAC requires protobuf<3.21, so pip downgrades protobuf in that variant (only orbax, unused here, needs newer).
ARG WITH_STARCRAFT_SMAC=0
ARG SMAC_REF=d6aab33f76abc3849c50463a8592a84f59a5ef84
ARG GIT_COMMIT=unknown
# pip settings of the build host, unset unless given: a local wheel directory (PIP_FIND_LINKS) and a CA bundle
# (PIP_CERT), each mounted at the same path with --volume. Build arguments are not kept in the image.
ARG PIP_FIND_LINKS
ARG PIP_CERT

ENV PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    EFFMARL_CONTAINER=1 \
    EFFMARL_GIT_COMMIT=${GIT_COMMIT} \
    XLA_PYTHON_CLIENT_PREALLOCATE=false \
    JAX_PLATFORMS=cpu \
    MPLBACKEND=Agg

# valgrind: cachegrind's simulated cache counters; linux-perf: hardware counters where the host exposes them;
# git: only for the optional SMAC install. linux-perf follows the kernel's Debian point releases, so it is not
# pinned (a pin would break the build at the next point release).
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends valgrind=1:3.19.0-1 linux-perf git \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /effmarl
COPY requirements/lock.txt requirements/lock.txt
RUN pip install --index-url "${TORCH_INDEX}" torch==2.13.0 \
    && pip install --constraint requirements/lock.txt --requirement requirements/lock.txt

# /etc/effmarl-image marks this project's image (not just any container): `effmarl env-info` reports
# "project image: yes" with its first line, and every output's provenance records it as project_image.
COPY . .
RUN pip install --no-deps . \
    && if [ "${WITH_STARCRAFT_SMAC}" = "1" ]; then \
         pip install "smac @ git+https://github.com/oxwhirl/smac.git@${SMAC_REF}"; \
       fi \
    && printf 'effmarl %s image, commit %s, torch from %s, StarCraft II SMAC %s\n' \
         "$(python -c 'import effmarl; print(effmarl.__version__)')" "${GIT_COMMIT}" "${TORCH_INDEX}" \
         "${WITH_STARCRAFT_SMAC}" > /etc/effmarl-image

CMD ["snakemake", "--cores", "all"]
