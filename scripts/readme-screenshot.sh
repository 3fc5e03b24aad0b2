#!/usr/bin/env bash
# Retakes the README's screenshot (docs/images/report-reduce.png) of the sample report
# reports/reduce.small.gto/index.html in headless Chromium (Debian's `chromium` package), at
# the size the README shows it. Run it after ./scripts/regen-samples.sh when the report's
# look changes; the picture is not compared in tests (a browser's rendering is not
# byte-stable), so this script is how it stays true.
set -euo pipefail
cd "$(dirname "$0")/.."
page="$PWD/reports/reduce.small.gto/index.html"
out="$PWD/docs/images/report-reduce.png"
[ -f "$page" ] || { echo "no $page: run ./scripts/regen-samples.sh first" >&2; exit 1; }
browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || { echo "no chromium on PATH (apt-get install chromium)" >&2; exit 1; }
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
"$browser" --headless=new --no-sandbox --disable-gpu --no-first-run --hide-scrollbars \
    --disable-background-networking --disable-component-update --disable-sync \
    --allow-file-access-from-files --virtual-time-budget=5000 \
    --user-data-dir="$profile" --window-size=1280,1500 \
    --screenshot="$out.tmp.png" "file://$page" 2>/dev/null
mv "$out.tmp.png" "$out"
echo "wrote $out"
