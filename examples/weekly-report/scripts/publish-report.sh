#!/bin/sh
# Publishes the approved weekly report by copying it into a publication
# directory. Both locations come from the host; nothing is guessed.
set -eu
: "${REPORT_FILE:?set REPORT_FILE to the approved report}"
: "${PUBLISH_DIR:?set PUBLISH_DIR to the publication directory}"
mkdir -p "$PUBLISH_DIR"
target="$PUBLISH_DIR/$(date +%G-W%V)-report.md"
cp "$REPORT_FILE" "$target"
printf 'published %s\n' "$target"
