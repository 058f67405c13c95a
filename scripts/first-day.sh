#!/bin/sh
# What a new user sees: memd's everyday commands in a clean HOME, their output as Markdown on
# stdout (docs/first-day.md is this script's output). Usage: scripts/first-day.sh [memd binary]
set -u
MEMD="${1:-target/release/memd}"
MEMD="$(cd "$(dirname "$MEMD")" && pwd)/$(basename "$MEMD")"
REPO="$(pwd)"
HOME_DIR="$(mktemp -d)"
# Two past Claude Code sessions, where Claude Code keeps them, for the backfill.
mkdir -p "$HOME_DIR/.claude/projects/-shop"
cp "$REPO/tests/fixtures/transcripts/DRMacIver__claude-reliability__hello-world-script.transcript.jsonl" \
   "$REPO/tests/fixtures/transcripts/daaain__claude-code-log__5ed31c36-bca8-40fd-8d24-f1a1f0af7901.jsonl" \
   "$HOME_DIR/.claude/projects/-shop/"
PROJ="$HOME_DIR/shop"
mkdir -p "$PROJ"
cd "$PROJ" || exit 1
run() {
  shown="memd"
  for a in "$@"; do
    [ "$a" = "$MEMD" ] && continue
    case "$a" in *" "*) shown="$shown \"$a\"" ;; *) shown="$shown $a" ;; esac
  done
  printf '\n```console\n$ %s\n' "$(echo "$shown" | sed "s#$HOME_DIR#~#g")"
  env -i HOME="$HOME_DIR" PATH=/usr/bin:/bin MEMD_LOG=warn "$@" 2>&1 | sed "s#$HOME_DIR#~#g"
  printf '```\n'
}
echo "# A first day with memd (a clean HOME)"
echo
echo "Produced by \`scripts/first-day.sh\` on $(date -u +%Y-%m-%d): a fresh HOME with no Claude Code"
echo "installed, the project folder \`~/shop\`, two past Claude Code sessions in \`~/.claude/projects\`"
echo "(from the test fixtures). Paths under the temporary HOME are shown as \`~\`."
run "$MEMD" install
run "$MEMD" doctor
run "$MEMD" import-sessions
run "$MEMD" remember "Prices are stored as integer cents, never floats"
run "$MEMD" search cents
run "$MEMD" show 1
run "$MEMD" work add export "write the CSV exporter" --status doing
run "$MEMD" work
run "$MEMD" status
sleep 3
run "$MEMD" stats
run "$MEMD" export --out "$HOME_DIR/export"
run "$MEMD" stop
run "$MEMD" doctor
run "$MEMD" install --uninstall
rm -rf "$HOME_DIR"
