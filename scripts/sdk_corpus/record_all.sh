#!/usr/bin/env bash
# Re-record the SDK corpus: ACP v2 with @agentclientprotocol/sdk 2.4.0 (ts-v2/), ACP v1 with the
# Python SDK agent-client-protocol 0.12.1 (py-v1/). Captures go to ts-v2/captures/ and py-v1/captures/
# next to the scripts, never into tests/: compare them with tests/fixtures/sdk/ before copying any over.
#
#   scripts/sdk_corpus/record_all.sh            # both dialects
#   ACPLAB=/path/to/acplab scripts/sdk_corpus/record_all.sh
#
# Needs node >= 18 with npm, and python3 >= 3.10. The recordings go through `acplab trace record`.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
ACPLAB="${ACPLAB:-$(command -v acplab || echo "$ROOT/.venv/bin/acplab")}"
export ACPLAB

# v2: @agentclientprotocol/sdk 2.4.0 (pinned in ts-v2/package-lock.json)
cd "$HERE/ts-v2"
[ -d node_modules/@agentclientprotocol/sdk ] || npm ci
node driver.mjs --acplab "$ACPLAB" --out-dir captures

# v1: agent-client-protocol 0.12.1 in py-v1/.venv
cd "$HERE/py-v1"
[ -x .venv/bin/python ] || { python3 -m venv .venv && .venv/bin/pip install -r requirements.txt; }
.venv/bin/python record_v1.py --acplab "$ACPLAB" --out-dir captures

# how far the checker agrees with the labels (tests/fixtures/sdk/labels.json) on the new recordings
cd "$ROOT"
"$(dirname "$ACPLAB")/python" "$HERE/agreement.py" --v2 "$HERE/ts-v2/captures" --v1 "$HERE/py-v1/captures" \
    || python3 "$HERE/agreement.py" --v2 "$HERE/ts-v2/captures" --v1 "$HERE/py-v1/captures"
