#!/usr/bin/env bash
# Bash completion of kconnectd (issue 27 item 3).
#
# usage: test_completion.sh KCONNECTD COMPLETION_FILE
#
# COMPLETION_FILE is the script the build wrote (`kconnectd completion bash`,
# installed as share/bash-completion/completions/kconnectd). Checks that it
# is what the binary prints now; that sourced in a plain bash it registers a
# completion function for kconnectd; that completing `kconnectd ` offers
# every subcommand `kconnectd --help` lists; that `kconnectd run --` offers
# run's options, `kconnectd mock-broker --b` the two --b options; and that
# after an option that takes a value, or for a positional argument, it
# offers no words (bash then completes file names: complete -o default).
set -u
KC=$1
FILE=$2
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

[ -s "$FILE" ] || { echo "FAIL: $FILE is missing or empty"; exit 1; }
"$KC" completion bash | cmp -s - "$FILE" || fail "$FILE differs from \`kconnectd completion bash\`"

# The subcommands, from --help's "Subcommands:" section (one per line).
mapfile -t SUBS < <("$KC" --help | sed -n '/^Subcommands:/,$p' | tail -n +2 | awk 'NF {print $1}')
[ "${#SUBS[@]}" -ge 8 ] || fail "--help lists only ${#SUBS[@]} subcommands: ${SUBS[*]}"

# complete WORD... : the candidates bash would offer for the last word.
out=$(bash --norc --noprofile -c '
  source "$1"; shift
  spec=$(complete -p kconnectd) || { echo "NO-SPEC"; exit 0; }
  echo "SPEC $spec"
  fn=$(sed -n "s/.*-F \([^ ]*\).*/\1/p" <<<"$spec")
  complete_words() {
    COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}; COMPREPLY=()
    "$fn" kconnectd "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
    echo "$1|${COMPREPLY[*]}"
  }
  complete_words top kconnectd ""
  complete_words dash kconnectd -
  complete_words ru kconnectd ru
  complete_words run kconnectd run --
  complete_words runfile kconnectd run ""
  complete_words mock kconnectd mock-broker --b
  complete_words mockval kconnectd mock-broker --topic ""
  complete_words validate kconnectd validate --s
  complete_words after kconnectd --help run --
' _ "$FILE" 2>&1)
echo "$out"
got() { sed -n "s/^$1|//p" <<<"$out"; }
has() { [[ " $(got "$1") " == *" $2 "* ]]; }

grep -q '^SPEC complete .*-o default.* -F [^ ]* kconnectd$' <<<"$out" || fail "complete -p kconnectd: no -o default -F FUNCTION"
for s in "${SUBS[@]}"; do has top "$s" || fail "\`kconnectd \` does not offer $s"; done
for o in --help --version -V; do has dash "$o" || fail "\`kconnectd -\` does not offer $o"; done
[ "$(got ru)" = "run" ] || fail "\`kconnectd ru\` offers '$(got ru)', not 'run'"
[ "$(got run)" = "--help --leave-on-shutdown" ] || fail "\`kconnectd run --\` offers '$(got run)'"
[ -z "$(got runfile)" ] || fail "\`kconnectd run \` offers '$(got runfile)' instead of file names"
[ "$(got mock)" = "--brokers --bootstrap-file" ] || fail "\`kconnectd mock-broker --b\` offers '$(got mock)'"
[ -z "$(got mockval)" ] || fail "\`kconnectd mock-broker --topic \` offers '$(got mockval)' instead of file names"
[ "$(got validate)" = "--strict" ] || fail "\`kconnectd validate --s\` offers '$(got validate)'"
[ "$(got after)" = "--help --leave-on-shutdown" ] || fail "\`kconnectd --help run --\` offers '$(got after)'"

if [ $fails -ne 0 ]; then echo "$fails check(s) failed"; exit 1; fi
echo "OK: ${#SUBS[@]} subcommands and their options complete"
