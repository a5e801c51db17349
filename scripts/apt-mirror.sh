#!/usr/bin/env bash
# Prints the Debian main archive this machine's apt uses, so that debootstrap (scripts/container-images.sh)
# fetches through the same mirror or proxy apt does. The project writes no package host of its own
# (tests/package-hosts.spec.ts): where apt names none, this says so in one line on stderr and exits 1.
#
#   scripts/apt-mirror.sh                   reads /etc/apt/sources.list, then sources.list.d/*.list and *.sources
#   CEC_APT_ETC=DIR scripts/apt-mirror.sh   reads DIR/sources.list and DIR/sources.list.d/ instead (the tests' machines)
#
# Files are read in apt's order (sources.list first, then the folder's files by name); both formats count: the
# one-line `deb [options] URI SUITE COMPONENT...` and deb822 paragraphs (Types:, URIs:, Suites:, Components:,
# Enabled:, Signed-By:). The first entry that is the Debian main archive wins: enabled, of type deb (not deb-src),
# with the component main, a release suite (bookworm, stable, sid: not bookworm-security, -updates, -backports,
# nor bookworm/updates), an http(s), ftp or file URI, and either a path segment `debian` in the URI (a mirror,
# a snapshot, a caching proxy's /HOST/debian) or a Signed-By naming the Debian archive keyring. Its first URI
# is printed without a trailing slash.
set -uo pipefail
shopt -s nullglob

ETC=${CEC_APT_ETC:-/etc/apt}

# is_archive TYPES URI SUITES COMPONENTS SIGNED_BY: whether one entry is the Debian main archive.
is_archive() {
  local types=" $1 " uri=$2 suites=$3 components=" $4 " signed=$5 suite release=
  [[ $types == *" deb "* ]] || return 1
  [[ $components == *" main "* ]] || return 1
  [[ $uri =~ ^(https?|ftp|file):// ]] || return 1
  for suite in $suites; do [[ $suite == *[-/]* ]] || release=yes; done
  [ -n "$release" ] || return 1
  local path=${uri#*://}
  path=/${path#*/}
  [[ "$path/" == */debian/* || $signed == *debian-archive-keyring* ]]
}

found() {
  printf '%s\n' "${1%/}"
  exit 0
}

# One-line format: `deb [ options ] URI SUITE [COMPONENT...]`, comments from `#`.
read_list() {
  local line re='^[[:space:]]*(deb(-src)?)[[:space:]]+(\[[^]]*\][[:space:]]+)?([^[:space:]]+)[[:space:]]+([^[:space:]]+)(.*)$'
  while IFS= read -r line || [ -n "$line" ]; do
    line=${line%$'\r'}
    line=${line%%#*}
    [[ $line =~ $re ]] || continue
    local m=("${BASH_REMATCH[@]}") # is_archive matches too
    is_archive "${m[1]}" "${m[4]}" "${m[5]}" "${m[6]}" "${m[3]}" && found "${m[4]}"
  done <"$1"
}

# deb822 format: paragraphs apart by blank lines, `Field: value`, a line starting with a space continues the field.
read_sources() {
  local line key= types= uris= suites= components= signed= enabled=yes
  judge() {
    local words=($uris) first
    first=${words[0]:-}
    [ -n "$first" ] && [[ ${enabled,,} != no ]] && is_archive "$types" "$first" "$suites" "$components" "$signed" && found "$first"
    key= types= uris= suites= components= signed= enabled=yes
  }
  append() {
    case ${key,,} in
      types) types+=" $1" ;; uris) uris+=" $1" ;; suites) suites+=" $1" ;; components) components+=" $1" ;;
      signed-by) signed+=" $1" ;; enabled) read -r enabled <<<"$1" ;;
    esac
  }
  while IFS= read -r line || [ -n "$line" ]; do
    line=${line%$'\r'}
    if [[ $line =~ ^[[:space:]]*$ ]]; then judge
    elif [[ $line == '#'* ]]; then continue
    elif [[ $line =~ ^[[:space:]] ]]; then append "$line"
    elif [[ $line =~ ^([^:[:space:]]+):(.*)$ ]]; then key=${BASH_REMATCH[1]}; append "${BASH_REMATCH[2]}"
    fi
  done <"$1"
  judge
}

read_any() {
  case $1 in
    *.list) read_list "$1" ;;
    *.sources) read_sources "$1" ;;
  esac
}

[ -r "$ETC/sources.list" ] && read_list "$ETC/sources.list"
mapfile -t parts < <(printf '%s\n' "$ETC"/sources.list.d/*.list "$ETC"/sources.list.d/*.sources | LC_ALL=C sort)
for f in "${parts[@]}"; do
  [ -f "$f" ] && [ -r "$f" ] && read_any "$f"
done
echo "apt-mirror: no Debian main archive named in $ETC/sources.list or $ETC/sources.list.d/ (a deb entry of a release suite with main); set CEC_APT_ETC to a folder whose sources name one" >&2
exit 1
