#!/usr/bin/env bash
# Regenerates the redaction rule set (domain/memories/redaction/gitleaks-rules.ts) and its test corpus
# (test/fixtures/redaction/gitleaks-samples.json) from gitleaks' own rule generator (MIT), fetched from the
# Go module proxy. gitleaks validates every rule against true- and false-positive samples while it builds
# its config; record.go, added to a copy of its source, writes each rule out with those samples. The
# outputs are committed: nothing here runs during set-up or tests. Needs Go (the set-up installs it for
# the Temporal CLI). Run: bash scripts/redaction-corpus/generate.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
version="v8.30.1"
module="github.com/zricethezav/gitleaks/v8"

src="$(go mod download -json "$module@$version" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp -r "$src/." "$work/gitleaks"
chmod -R u+w "$work/gitleaks"
gen="$work/gitleaks/cmd/generate/config"
cp "$here/record.go" "$gen/utils/record.go"
# Record each rule as its generator validates it, and the global allowlist once.
sed -i 's/^func Validate(rule config.Rule, truePositives \[\]string, falsePositives \[\]string) \*config.Rule {$/&\n\trecord(rule, truePositives, falsePositives)/' "$gen/utils/validate.go"
sed -i 's/^func ValidateWithPaths(rule config.Rule, truePositives map\[string\]string, falsePositives map\[string\]string) \*config.Rule {$/&\n\trecord(rule, values(truePositives), values(falsePositives))/' "$gen/utils/validate.go"
sed -i 's#^\t"github.com/zricethezav/gitleaks/v8/cmd/generate/config/rules"$#&\n\t"github.com/zricethezav/gitleaks/v8/cmd/generate/config/utils"#' "$gen/main.go"
sed -i 's/^\tconfigRules := \[\]\*config.Rule{$/\tutils.RecordGlobal()\n&/' "$gen/main.go"
grep -q 'record(rule, truePositives' "$gen/utils/validate.go" && grep -q 'utils.RecordGlobal()' "$gen/main.go" || {
  echo "gitleaks $version no longer has the shape this script patches" >&2
  exit 1
}

(cd "$gen" && GOFLAGS=-mod=mod GITLEAKS_RECORD="$work/record.jsonl" go run . "$work/gitleaks.toml")
"$root/node_modules/.bin/node" "$here/convert.ts" "$work/record.jsonl" "$version"
