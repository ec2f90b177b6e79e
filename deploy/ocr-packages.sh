#!/bin/sh
# The Debian packages of Tesseract for the language packs of deploy/ocr-languages.txt (or
# the file given), on one line: tesseract-ocr, its orientation and script detection pack
# (osd) and tesseract-ocr-<pack> for each pack, `_` written `-` (chi_sim: chi-sim).
# The justfile (apt_packages) and the Dockerfile both ask this, so the list is written once.
set -eu
list="${1:-$(dirname "$0")/ocr-languages.txt}"
packs=$(sed -e 's/#.*//' -e 's/[[:space:]]//g' -e '/^$/d' -e 'y/_/-/' "$list" | tr 'A-Z' 'a-z')
printf 'tesseract-ocr tesseract-ocr-osd'
for pack in $packs; do
    printf ' tesseract-ocr-%s' "$pack"
done
printf '\n'
