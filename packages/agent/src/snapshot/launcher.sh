#!/bin/sh
# The `crow` command (scripts/bundle.mjs writes it beside crow.js, with the id of this build of crow below).
#
# Starts crow from its V8 startup snapshot when one was built for this build of crow, in this directory, and this
# node: `node --snapshot-blob <blob>` skips compiling and evaluating crow's modules (packages/agent/src/snapshot/
# entry.ts). Otherwise it runs crow.js, as `#!/usr/bin/env node` would, and tells it (CROW_SNAPSHOT_BLOB) where the
# blob belongs: crow.js then builds it in the background for the next start (snapshot/request.ts).
# The blob is <cache>/crow/snapshot/<this directory>/<node's path>/<build>.blob, <cache> being $XDG_CACHE_HOME,
# else ~/Library/Caches (macOS), else ~/.cache. A node newer than its blob (upgraded in place) does not use it.
# CROW_NO_SNAPSHOT=1 never uses one; nor does a NODE_OPTIONS, whose V8 flags would not match the blob's.
build=@BUILD@
self=$0
while [ -L "$self" ]; do
  link=$(readlink "$self")
  case $link in
    /*) self=$link ;;
    *) self=${self%/*}/$link ;;
  esac
done
case $self in
  */*) dir=$(cd "${self%/*}" && pwd -P) ;;
  *) dir=$(pwd -P) ;;
esac
node=$(command -v node) || node=node
if [ -z "$CROW_NO_SNAPSHOT" ] && [ -z "$NODE_OPTIONS" ] && [ -n "$HOME" ]; then
  cache=$XDG_CACHE_HOME
  if [ -z "$cache" ]; then
    if [ -d "$HOME/Library/Caches" ]; then cache=$HOME/Library/Caches; else cache=$HOME/.cache; fi
  fi
  case $node in
    /*)
      blob=$cache/crow/snapshot$dir$node/$build.blob
      if [ -f "$blob" ] && [ ! "$node" -nt "$blob" ]; then
        exec "$node" --snapshot-blob "$blob" "$dir/crow.js" "$@"
      fi
      CROW_SNAPSHOT_BLOB=$blob
      export CROW_SNAPSHOT_BLOB
      ;;
  esac
fi
exec "$node" "$dir/crow.js" "$@"
