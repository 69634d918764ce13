#!/usr/bin/env bash
# Docs and --help agree (git's habit): every option a program's --help lists
# appears in its man page (docs/man/) and in its docs page (docs/), and every
# option a man page describes is one the program lists.  Every man page
# renders without a groff warning.  Programs not built (TT_BUILD_SIM or
# TT_BUILD_CAPTURE off) are skipped, with a message.
#
# usage: test_help_docs.sh SRC_DIR VERSION TOKENTRACE [SIM] [CAPTURE] [DEMO]
# (an empty argument: that program was not built)
set -u
src=$1 version=$2 tt=$3 sim=${4:-} cap=${5:-} demo=${6:-}
man=$src/docs/man docs=$src/docs
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0 n=0

have_groff=0
command -v groff > /dev/null 2>&1 && have_groff=1

# A man page as plain text: no hyphenation and no line breaks inside a
# paragraph, so an option is never split.  Without groff, the source with
# its escapes undone is close enough for finding option names.
render() {
	if [ "$have_groff" = 1 ]; then
		groff -man -Tascii -rLL=5000n -rHY=0 -P-c -P-b -P-u -P-o "$1" 2> /dev/null
	else
		sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/\\&//g' "$1"
	fi
}

# Option names in a text on stdin, one per line: -x and --long-name, when
# they start a word (so 'decode-8192x16' and 'p10-p90' are not options).
options_of() {
	grep -oE '(^|[][ ,|(=])--?[A-Za-z][A-Za-z0-9-]*' | sed -E 's/^[][ ,|(=]//' | sort -u
}

# has_opt OPTION FILE: OPTION occurs as a whole word (not as part of a
# longer option: --window is not found in --window-size).
has_opt() {
	grep -qE -e "(^|[^A-Za-z0-9-])$1([^A-Za-z0-9-]|$)" "$2"
}

# Options named in the tags of a man page's OPTIONS section (the line after
# each .TP): what the page says the program accepts.
man_tags() {
	awk '/^\.SH /{in_opts = ($2 == "OPTIONS")} in_opts && prev == ".TP" {print} {prev = $0}' "$1" |
		sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/\\&//g' -e 's/^\.[A-Z]* //' | options_of
}

# check NAME HELP_FILE MAN_PAGE DOC_PAGE: print one FAIL line per missing
# option and return how many there were.
check() {
	local name=$1 help=$2 page=$3 doc=$4 bad=0 opt
	if [ ! -f "$page" ]; then
		echo "FAIL: $name: no man page '$page'"
		return 1
	fi
	if [ ! -f "$doc" ]; then
		echo "FAIL: $name: no docs page '$doc'"
		return 1
	fi
	render "$page" > "$tmp/page.txt"
	for opt in $(options_of < "$help"); do
		if ! has_opt "$opt" "$tmp/page.txt"; then
			echo "FAIL: $name: option '$opt' (in --help) is not in the man page ${page#"$src"/}"
			bad=$((bad + 1))
		fi
		if ! has_opt "$opt" "$doc"; then
			echo "FAIL: $name: option '$opt' (in --help) is not in the docs page ${doc#"$src"/}"
			bad=$((bad + 1))
		fi
	done
	for opt in $(man_tags "$page"); do
		if ! has_opt "$opt" "$help"; then
			echo "FAIL: $name: option '$opt' (described in ${page#"$src"/}) is not in its --help"
			bad=$((bad + 1))
		fi
	done
	return "$bad"
}

# lint PAGE: groff's every warning (-ww) is a failure; so is a page man
# cannot show.
lint() {
	local out
	n=$((n + 1))
	out=$(groff -man -Tutf8 -ww -z "$1" 2>&1)
	if [ -n "$out" ]; then
		echo "FAIL: ${1#"$src"/}: groff -man -ww warns:"
		echo "$out"
		fail=$((fail + 1))
	elif command -v man > /dev/null 2>&1 && ! MANWIDTH=80 man -l "$1" > /dev/null 2>&1; then
		echo "FAIL: ${1#"$src"/}: 'man -l' cannot show it"
		fail=$((fail + 1))
	fi
}

# run_check NAME MAN_PAGE DOC_PAGE -- COMMAND...: the command's --help must
# exit 0 and print something, then check.
run_check() {
	local name=$1 page=$2 doc=$3
	shift 4
	n=$((n + 1))
	if ! "$@" > "$tmp/help.txt" 2>&1 || [ ! -s "$tmp/help.txt" ]; then
		echo "FAIL: $name: '$*' did not exit 0 with a usage text:"
		cat "$tmp/help.txt"
		fail=$((fail + 1))
		return
	fi
	if [ -z "$(options_of < "$tmp/help.txt")" ]; then
		echo "FAIL: $name: '$*' lists no option (the parser above is broken?)"
		fail=$((fail + 1))
		return
	fi
	check "$name" "$tmp/help.txt" "$page" "$doc" || fail=$((fail + 1))
}

# --- the check itself can fail --------------------------------------------
# A doctored copy of report's man page without --quantiles, and one that
# describes an option report does not have: both must be caught, by name.
n=$((n + 1))
"$tt" report --help > "$tmp/self-help.txt"
sed 's/quantiles/quanti_les/g' "$man/tokentrace-report.1" > "$tmp/self-missing.1"
printf '.SH OPTIONS\n.TP\n.B \\-\\-no\\-such\\-option\nNothing.\n' >> "$tmp/self-extra.1"
cat "$man/tokentrace-report.1" "$tmp/self-extra.1" > "$tmp/self-stale.1"
out1=$(check "report (doctored)" "$tmp/self-help.txt" "$tmp/self-missing.1" "$docs/report.md")
out2=$(check "report (doctored)" "$tmp/self-help.txt" "$tmp/self-stale.1" "$docs/report.md")
if ! grep -q "option '--quantiles' (in --help) is not in the man page" <<< "$out1" ||
	! grep -q "option '--no-such-option' (described in" <<< "$out2"; then
	echo "FAIL: the check did not catch a doctored page:"
	echo "missing option -> ${out1:-(nothing)}"
	echo "stale option -> ${out2:-(nothing)}"
	fail=$((fail + 1))
fi
# And the option finder finds what it should (and no false option).
n=$((n + 1))
got=$(printf '  -f, --format F   x (pdf needs -o)\nusage: t [--cell ID] decode-8192x16 p10-p90\n  --order a|b\n' |
	options_of | tr '\n' ' ')
if [ "$got" != "--cell --format --order -f -o " ]; then
	echo "FAIL: options_of found '$got'"
	fail=$((fail + 1))
fi

# --- every man page renders cleanly ---------------------------------------
if [ "$have_groff" = 1 ]; then
	for page in "$man"/*.1; do
		lint "$page"
	done
else
	echo "SKIP: groff not installed (Debian: groff-base): man pages not linted"
fi

# --- tokentrace and each of its commands ----------------------------------
run_check tokentrace "$man/tokentrace.1" "$docs/tokentrace.md" -- "$tt" --help
# The commands are the ones 'tokentrace --help' lists: a new command without
# a man page or docs page fails here.
"$tt" --help | sed -n '/^commands:/,/^$/p' | awk 'NR > 1 && NF {print $1}' > "$tmp/commands"
[ -s "$tmp/commands" ] || { echo "FAIL: 'tokentrace --help' lists no commands"; fail=$((fail + 1)); }
while read -r c; do
	doc=$docs/$c.md
	[ -f "$doc" ] || [ ! -f "$docs/${c}s.md" ] || doc=$docs/${c}s.md # chart -> charts.md
	run_check "tokentrace $c" "$man/tokentrace-$c.1" "$doc" -- "$tt" "$c" --help
	if ! render "$man/tokentrace.1" | grep -q "tokentrace-$c(1)"; then
		echo "FAIL: tokentrace.1 does not name tokentrace-$c(1)"
		fail=$((fail + 1))
	fi
done < "$tmp/commands"

# --- the other programs ---------------------------------------------------
if [ -n "$cap" ]; then
	run_check tokentrace-capture "$man/tokentrace-capture.1" "$docs/capture.md" -- "$cap" --help
else
	echo "SKIP: tokentrace-capture not built"
fi
if [ -n "$sim" ]; then
	run_check tokentrace-sim "$man/tokentrace-sim.1" "$docs/sim.md" -- "$sim" --help
else
	echo "SKIP: tokentrace-sim not built"
fi
if [ -n "$demo" ]; then
	run_check tokentrace-demo "$man/tokentrace-demo.1" "$docs/demo.md" -- "$demo" --help
	# The build's copy carries the project's version.
	n=$((n + 1))
	got=$("$demo" --version 2>&1)
	if [ "$got" != "tokentrace-demo $version" ]; then
		echo "FAIL: '$demo --version' printed '$got', want 'tokentrace-demo $version'"
		fail=$((fail + 1))
	fi
fi

# --- one version ----------------------------------------------------------
n=$((n + 1))
got=$("$tt" --version)
if [ "${got%% (*}" != "tokentrace $version" ]; then
	echo "FAIL: 'tokentrace --version' printed '$got', want 'tokentrace $version (run format ...)'"
	fail=$((fail + 1))
fi

# the run format --version names is the newest this build writes: the
# spec's own (formats/run-v1.md's title), not the oldest a manifest may say
# (issue 24.6: it said 1.1 while the spec was 1.4)
spec=$(sed -n '1s/^# tokentrace run format, version \([0-9]*\.[0-9]*\)$/\1/p' "$src/formats/run-v1.md")
n=$((n + 1))
case "$got" in
*"(run format $spec;"*) ;;
*) echo "FAIL: 'tokentrace --version' printed '$got', want run format '$spec' (formats/run-v1.md)"
   fail=$((fail + 1)) ;;
esac
if [ -n "$cap" ]; then
	n=$((n + 1))
	got=$("$cap" --version)
	if [ "$got" != "tokentrace-capture $version (writes run format $spec)" ]; then
		echo "FAIL: 'tokentrace-capture --version' printed '$got', want run format '$spec'"
		fail=$((fail + 1))
	fi
fi

echo "$((n - fail)) passed, $fail failed"
[ "$fail" = 0 ]
