#!/bin/sh
# berth's main job on its embedded default: adopt this machine (node "local", root /)
# into a fresh state directory, with the example catalog (definitions and the templates
# they name), and show the account. Nothing on the machine is changed: adopt only looks.
set -eu
cd "$(dirname "$0")/.."
state="${BERTH_STATE:-$(mktemp -d "${TMPDIR:-/tmp}/berth-state.XXXXXX")}"
mkdir -p "$state/modules"
# What the state directory already has is kept: an operator's own catalog wins.
cp -Rn examples/modules/. "$state/modules/"
node dist/berth.mjs --state "$state" adopt local
echo
node dist/berth.mjs --state "$state" status local
echo
echo "state directory: $state (try: node dist/berth.mjs --state $state take local postgresql)"
