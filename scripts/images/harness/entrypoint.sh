#!/bin/sh
# Entry point of the harness image: `conformance` with the arguments given. Started as root (docker run without
# --user) with a folder mounted on /data that someone else owns, it runs as that folder's owner, so the reports it
# writes there belong to the caller, not to root. With --user it runs as that user.
set -e
if [ "$(id -u)" = 0 ] && [ -d /data ]; then
  uid=$(stat -c %u /data)
  gid=$(stat -c %g /data)
  if [ "$uid" != 0 ]; then
    # That user may have no passwd entry and no home: Node and npm get a writable one.
    export HOME=/tmp
    exec setpriv --reuid="$uid" --regid="$gid" --clear-groups conformance "$@"
  fi
fi
exec conformance "$@"
