# checks.sh -- the check runner shared by the rules and docs check scripts (sourced).
# check DESC FN [ARGS...] runs one check and indents its output; skipped/failed
# record the other outcomes; $pass, $fail and $skip count them; $tmp is a
# scratch folder removed on exit.

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

pass=0
fail=0
skip=0

# check DESCRIPTION FUNCTION [ARGS...] -- run one check, indent its output.
check() {
	local desc=$1 out rc
	shift
	echo "--- $desc"
	set +e
	out=$("$@" 2>&1)
	rc=$?
	set -e
	if [ -n "$out" ]; then
		printf '%s\n' "$out" | sed 's/^/    /'
	fi
	if [ "$rc" -eq 0 ]; then
		pass=$((pass + 1))
		echo "PASS: $desc"
	else
		fail=$((fail + 1))
		echo "FAIL: $desc"
	fi
}

skipped() {
	skip=$((skip + 1))
	echo "--- $1"
	echo "SKIP: $1 ($2)"
}

failed() {
	fail=$((fail + 1))
	echo "--- $1"
	echo "    $2"
	echo "FAIL: $1"
}
