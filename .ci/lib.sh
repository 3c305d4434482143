# Shared by the CI step scripts: a timed, time-limited step with a clear failure message, and package install.

# step NAME SECONDS COMMAND...: run COMMAND (a program or an exported function) under a timeout, print its wall
# time, and on failure name the step, its exit status and whether the timeout ended it.
step() {
  local name=$1 limit=$2 t0=$SECONDS rc=0
  shift 2
  echo "---- $name (limit ${limit} s)"
  # in the background and waited for, so that a signal to this script runs its traps at once; timeout leads
  # its own process group, which stop_step kills whole (the SLURM executor plugin can ignore SIGTERM)
  timeout --kill-after=30 "$limit" bash -c '"$@"' step "$@" &
  STEP_GROUP=$!
  wait "$STEP_GROUP" || rc=$?
  STEP_GROUP=
  local took=$((SECONDS - t0))
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    echo "FAILED: '$name' ran past its ${limit} s limit (stopped after ${took} s)" >&2
    exit 1
  elif [ "$rc" -ne 0 ]; then
    echo "FAILED: '$name' exited with status $rc after ${took} s" >&2
    exit 1
  fi
  echo "---- $name: ok in ${took} s"
  echo "$name	${took}" >> "${CI_TIMES:-/dev/null}"
}

# stop_step: kill what the running step started (for a script's EXIT trap, when it is interrupted).
stop_step() {
  if [ -n "${STEP_GROUP:-}" ]; then
    kill -KILL -- "-$STEP_GROUP" 2>/dev/null || true
  fi
}

# ensure_packages PKG...: install Debian packages that are missing (no recommends), as CI runs on a bare machine.
ensure_packages() {
  local missing=()
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  [ "${#missing[@]}" -eq 0 ] && { echo "already installed: $*"; return 0; }
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
}
export -f ensure_packages
