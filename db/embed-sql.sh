#!/bin/sh
# Turn an SQL file into a C string definition: embed-sql.sh NAME FILE > out.c
set -e
name=$1
file=$2
printf '/* generated from %s by db/embed-sql.sh: do not edit */\n' "$(basename "$file")"
printf 'const char %s[] =\n' "$name"
sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/\t"/' -e 's/$/\\n"/' "$file"
printf ';\n'
