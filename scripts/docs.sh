#!/usr/bin/env bash
# Builds the DocC archives of the products with a public Swift API (API and
# TrifactorKit) into .build/docs/, from the symbol graphs of their public
# declarations. Fails on any warning: an unresolved symbol or link, a topic
# that names nothing, a parameter left undocumented.
set -euo pipefail
cd "$(dirname "$0")/.."
graphs="$PWD/.build/docs-symbols"
out="$PWD/.build/docs"
rm -rf "$graphs"
mkdir -p "$graphs" "$out"
swift build --target TrifactorKit >"$graphs.log" 2>&1 || { cat "$graphs.log" >&2; exit 1; }
modules="$(swift build --show-bin-path)/Modules"
for module in API TrifactorKit; do
  mkdir -p "$graphs/$module"
  swift-symbolgraph-extract -module-name "$module" -I "$modules" -minimum-access-level public \
    -target "$(uname -m)-unknown-linux-gnu" -output-dir "$graphs/$module" >>"$graphs.log" 2>&1 || { cat "$graphs.log" >&2; exit 1; }
  log="$out/$module.log"
  if ! docc convert "Sources/$module/$module.docc" --additional-symbol-graph-dir "$graphs/$module" \
        --fallback-display-name "$module" --fallback-bundle-identifier "org.trifactor.$module" \
        --output-path "$out/$module.doccarchive" --warnings-as-errors >"$log" 2>&1; then
    cat "$log" >&2
    echo "docs: $module's documentation has warnings (above)" >&2
    exit 1
  fi
  echo "docs: $out/$module.doccarchive"
done
