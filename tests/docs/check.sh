#!/usr/bin/env bash
# check.sh -- checks the operator docs (docs/) and the tenant examples
# (deploy/examples/) against the binary and against each other.
#
# Run from anywhere: bash tests/docs/check.sh   (ctest -L docs runs it too)
# GVW_BINARY names the binary (default build/gpu-vram-watchdog); its --help is
# the authority on settings, flags and defaults. kubectl is optional: the
# checks that need it (offline only: kustomize, --local) are skipped with a
# message when it is absent. Prints one PASS/FAIL/SKIP line per check and ends
# with "N passed, M failed"; exits non-zero if any failed.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"

BIN=${GVW_BINARY:-build/gpu-vram-watchdog}
EXAMPLES=deploy/examples
SUBCOMMANDS="serve audit check advertise budgets exporter"
AUDIT_WORDS="show alerts stats"

# UPPER_CASE words the docs use that are not settings of the binary.
NOT_SETTINGS="
KUBERNETES_SERVICE_HOST KUBERNETES_SERVICE_PORT
CUDA_MPS_PINNED_DEVICE_MEM_LIMIT LD_PRELOAD
NODE
GVW_FRONT_DOOR_DEFAULTS
GET HEAD POST PUT
SIGKILL SIGTERM SCHED_IDLE RLIMIT_NOFILE ENTRYPOINT
CURLMOPT_MAXCONNECTS HTTPC_MAX_IDLE_CONNS KUBE_RECYCLE_TIMEOUT_MS POD_LIST_MAX
SUCCESS INSUFFICIENT_SIZE RFC3339_SPACE WHITE_BOX REPLICA ALERTS CP_ONLY
DGVW_SANITIZE GPU_CHECK_PREDICT GVW_CP_BIN GVW_CP_CACHE GVW_CP_KEEP
GVW_STUB_NVML_EVIL IMAGE CP_FEATURE_GATES CP_CONTROLLERS
"

source "$(dirname "${BASH_SOURCE[0]}")/../lib/checks.sh"

have() { command -v "$1" >/dev/null 2>&1; }

# The files this script checks.
doc_md() {
	ls docs/*.md "$EXAMPLES"/*.md 2>/dev/null
}
example_yaml() {
	ls "$EXAMPLES"/*.yaml "$EXAMPLES"/*.yml 2>/dev/null || true
}

# code_text FILE... -- the code in markdown: fenced blocks whole, and the
# inline `spans` of every other line, one per line. Prefixed "FILE:LINE: ".
code_text() {
	awk '
	FNR == 1 { fence = 0 }
	/^[ \t]*```/ { fence = !fence; next }
	fence { print FILENAME ":" FNR ": " $0; next }
	{
		s = $0
		while (match(s, /`[^`]+`/)) {
			print FILENAME ":" FNR ": " substr(s, RSTART + 1, RLENGTH - 2)
			s = substr(s, RSTART + RLENGTH)
		}
	}' "$@"
}

# yaml_paths FILE... -- a tiny block-YAML flattener (enough for Kubernetes
# manifests written by hand: block mappings and sequences, scalars, comments,
# block scalars skipped). One line per scalar: FILE<TAB>DOC<TAB>PATH<TAB>VALUE,
# PATH joined with ">" (keys contain dots and slashes), sequence items as [N].
yaml_paths() {
	awk '
	function path(d,   i, p) {
		p = ""
		for (i = 1; i <= d; i++)
			p = p (i > 1 ? ">" : "") key[i]
		return p
	}
	function unquote(v) {
		if (v ~ /^".*"$/ || v ~ /^\047.*\047$/)
			return substr(v, 2, length(v) - 2)
		return v
	}
	function value(v,   q) {
		sub(/^[ \t]+/, "", v)
		if (v ~ /^"/) {
			match(v, /^"[^"]*"/)
			return substr(v, 1, RLENGTH)
		}
		if (v ~ /^\047/) {
			match(v, /^\047[^\047]*\047/)
			return substr(v, 1, RLENGTH)
		}
		sub(/[ \t]+#.*$/, "", v)
		sub(/[ \t]+$/, "", v)
		return v
	}
	FNR == 1 { doc = 1; depth = 0; skipind = -1; delete count }
	{
		line = $0
		sub(/\r$/, "", line)
		match(line, /^ */)
		n = RLENGTH
		if (skipind >= 0) {
			if (line ~ /^[ \t]*$/ || n > skipind)
				next
			skipind = -1
		}
		if (line ~ /^---/) { doc++; depth = 0; delete count; next }
		if (line ~ /^[ \t]*(#.*)?$/) next
		c = substr(line, n + 1)
		while (c ~ /^-( |$)/) {
			while (depth > 0 && (ind[depth] > n || (ind[depth] == n && item[depth])))
				depth--
			p = path(depth)
			depth++
			ind[depth] = n; item[depth] = 1; key[depth] = "[" (count[p]++) "]"
			c = substr(c, 2)
			match(c, /^ */)
			n += 1 + RLENGTH
			c = substr(c, RLENGTH + 1)
		}
		if (c == "") next
		if (match(c, /^("[^"]*"|\047[^\047]*\047|[^"\047 #][^:]*):( |$)/)) {
			k = substr(c, 1, RLENGTH)
			sub(/:( )?$/, "", k)
			k = unquote(k)
			v = value(substr(c, RLENGTH + 1))
			while (depth > 0 && ind[depth] >= n && !(item[depth] && ind[depth] < n))
				depth--
			if (v == "") {
				depth++
				ind[depth] = n; item[depth] = 0; key[depth] = k
				next
			}
			if (v ~ /^[|>][-+0-9]*$/) {
				print FILENAME "\t" doc "\t" path(depth) (depth ? ">" : "") k "\t<block>"
				skipind = n
				next
			}
			print FILENAME "\t" doc "\t" path(depth) (depth ? ">" : "") k "\t" unquote(v)
			next
		}
		# a scalar sequence item
		print FILENAME "\t" doc "\t" path(depth) "\t" unquote(value(c))
	}' "$@"
}

# --- the binary's own word -------------------------------------------------

help_ok=0
if [ -x "$BIN" ] && "$BIN" --help >"$tmp/help" 2>&1 && "$BIN" audit --help >"$tmp/audit-help" 2>&1; then
	help_ok=1
	# NAME<TAB>--flag<TAB>default, one per setting
	awk '/^  [A-Z][A-Z0-9_]+ +--[a-z]/ {
		d = $0; sub(/.*default: /, "", d)
		print $1 "\t" $2 "\t" d
	}' "$tmp/help" >"$tmp/settings"
	# every --flag either help text shows
	cat "$tmp/help" "$tmp/audit-help" | grep -oE -- '--[a-z][a-z-]*' | sort -u >"$tmp/flags"
fi

check_binary() {
	if [ "$help_ok" -ne 1 ]; then
		echo "cannot run '$BIN --help' (build it first, or set GVW_BINARY)"
		return 1
	fi
	local n
	n=$(wc -l <"$tmp/settings")
	echo "$n settings in $BIN --help"
	[ "$n" -gt 0 ]
}

setting_default() {
	awk -F'\t' -v n="$1" '$1 == n { print $3 }' "$tmp/settings"
}

# The seats the examples' card gets: GPUMEM_CAPACITY_MIB, or with its default
# `auto` what auto gives the examples' T4 (GPU_TOTAL_MIB - GPUMEM_RESERVE_MIB).
seats_default() {
	local cap
	cap=$(setting_default GPUMEM_CAPACITY_MIB)
	if [ "$cap" = auto ]; then
		cap=$(($(setting_default GPU_TOTAL_MIB) - $(setting_default GPUMEM_RESERVE_MIB)))
	fi
	echo "$cap"
}

# --- deploy/examples/ ------------------------------------------------------

check_examples_present() {
	local files
	files=$(example_yaml)
	[ -n "$files" ] || { echo "no YAML files in $EXAMPLES/"; return 1; }
	[ -f "$EXAMPLES/README.md" ] || { echo "no $EXAMPLES/README.md"; return 1; }
	echo "$files" | tr '\n' ' '
	echo
}

# kubectl kustomize parses every file and insists on apiVersion, kind and
# metadata.name; it works offline. The files are copied because kustomize
# refuses resources outside its root.
check_examples_parse_kustomize() {
	local dir=$tmp/kustomize f rc=0
	mkdir -p "$dir"
	echo "resources:" >"$dir/kustomization.yaml"
	for f in "${YAMLS[@]}"; do
		cp "$f" "$dir/"
		echo "  - $(basename "$f")" >>"$dir/kustomization.yaml"
	done
	kubectl kustomize "$dir" >"$tmp/kustomized.yaml" || rc=1
	[ "$rc" -eq 0 ] && echo "$(grep -c '^kind:' "$tmp/kustomized.yaml") objects rendered"
	return "$rc"
}

check_examples_parse_python() {
	python3 - "${YAMLS[@]}" <<'PY'
import sys, yaml
for f in sys.argv[1:]:
    for d in yaml.safe_load_all(open(f)):
        if d is None:
            continue
        for k in ("apiVersion", "kind"):
            assert k in d, f"{f}: no {k}"
        assert d.get("metadata", {}).get("name"), f"{f}: no metadata.name"
print("parsed", len(sys.argv) - 1, "files")
PY
}

# The flattened examples, and per workload: FILE DOC KIND NAME NAMESPACE
# REPLICAS BUDGET_MIB (sum of its containers' gpumem limits, -1 unreadable).
flatten_examples() {
	yaml_paths "${YAMLS[@]}" >"$tmp/paths"
}

# quantity_mib Q -- integer value of a Kubernetes quantity, or "bad".
quantity_awk='
function qty(q,   m, s) {
	if (q !~ /^[0-9]+(k|M|G|T|Ki|Mi|Gi|Ti)?$/) return "bad"
	m = q; sub(/[a-zA-Z]+$/, "", m); s = q; sub(/^[0-9]+/, "", s)
	if (s == "k") return m * 1000
	if (s == "M") return m * 1000000
	if (s == "G") return m * 1000000000
	if (s == "T") return m * 1000000000000
	if (s == "Ki") return m * 1024
	if (s == "Mi") return m * 1048576
	if (s == "Gi") return m * 1073741824
	if (s == "Ti") return m * 1099511627776
	return m + 0
}
function canon(n,   i, suf) {
	split("k M G T P E", suf, " ")
	for (i = 0; n > 0 && n % 1000 == 0 && i < 6; i++) n = n / 1000
	return sprintf("%d", n) (i ? suf[i] : "")
}'

workloads() {
	awk -F'\t' -v res="$1" "$quantity_awk"'
	{ id = $1 "\t" $2; seen[id] = 1 }
	$3 == "kind" { kind[id] = $4 }
	$3 == "metadata>name" { name[id] = $4 }
	$3 == "metadata>namespace" { ns[id] = $4 }
	$3 == "spec>replicas" { rep[id] = $4 }
	$3 ~ ("^spec>template>spec>containers>\\[[0-9]+\\]>resources>limits>") {
		k = $3; sub(/.*>limits>/, "", k)
		if (k == res) {
			v = qty($4)
			if (v == "bad") bad[id] = 1; else budget[id] += v
			has[id] = 1
		}
	}
	END {
		for (id in seen) {
			if (kind[id] !~ /^(Deployment|StatefulSet|DaemonSet|ReplicaSet)$/) continue
			r = (id in rep) ? rep[id] : 1
			print id "\t" kind[id] "\t" name[id] "\t" ns[id] "\t" r "\t" (bad[id] ? -1 : (has[id] ? sprintf("%.0f", budget[id]) : "none"))
		}
	}' "$tmp/paths" | sort
}

check_examples_budgets() {
	local res rc=0
	res=$(setting_default GPUMEM_RESOURCE)
	workloads "$res" >"$tmp/workloads"
	cat "$tmp/workloads" | awk -F'\t' '{ printf "%s/%s %s: budget %s MiB x %s\n", $5, $4, $3, $7, $6 }'
	# every workload declares a readable budget under limits, next to nvidia.com/gpu
	awk -F'\t' '$7 == "none" || $7 == -1 { print $1 ": " $4 " has no readable " r " limit"; bad = 1 }
		$7 ~ /^[0-9]+$/ && $7 + 0 > total + 0 { print $1 ": " $4 ": budget " $7 " MiB is larger than the card (" total "); MiB are written as plain integers, not Gi/Mi"; bad = 1 }
		END { exit bad }' r="$res" total="$(setting_default GPU_TOTAL_MIB)" "$tmp/workloads" || rc=1
	# the budget must sit in limits (requests alone are legal, but the
	# examples teach limits); requests, when present, must equal limits
	awk -F'\t' -v res="$res" '
	$3 ~ />resources>(limits|requests)>/ {
		c = $3; sub(/>resources>.*/, "", c)
		k = $3; sub(/.*>resources>/, "", k)
		split(k, kk, ">"); kind = kk[1]; r = substr(k, length(kind) + 2)
		if (r == res) v[$1 "\t" $2 "\t" c "\t" kind] = $4
		if (r == "nvidia.com/gpu" && kind == "limits") gpu[$1 "\t" $2 "\t" c] = $4
	}
	END {
		for (x in v) {
			split(x, p, "\t"); c = p[1] "\t" p[2] "\t" p[3]
			if (p[4] == "requests" && !((c "\tlimits") in v)) {
				print p[1] ": " p[3] ": budget only in requests; put it in limits"; bad = 1
			}
			if (p[4] == "requests" && ((c "\tlimits") in v) && v[c "\tlimits"] != v[x]) {
				print p[1] ": " p[3] ": requests != limits"; bad = 1
			}
			if (p[4] == "limits" && !(c in gpu)) {
				print p[1] ": " p[3] ": budget without nvidia.com/gpu in the same container"; bad = 1
			}
		}
		exit bad
	}' "$tmp/paths" || rc=1
	# examples must use the resource the binary defaults to
	if grep -hoE '[a-z0-9.-]+\.[a-z]+/gpumem' "${YAMLS[@]}" | grep -vxF "$res" | sort -u | grep .; then
		echo "^ gpumem resource names other than $res"
		rc=1
	fi
	return "$rc"
}

check_seating_chart() {
	local cap total floor sum
	cap=$(seats_default)
	total=$(setting_default GPU_TOTAL_MIB)
	floor=$(setting_default FLOOR_MIB)
	sum=$(awk -F'\t' '$7 ~ /^[0-9]+$/ { s += $7 * $6 } END { printf "%.0f", s }' "$tmp/workloads")
	echo "seating chart: $sum MiB; seats by default $cap; GPU_TOTAL_MIB - FLOOR_MIB = $((total - floor))"
	[ "$sum" -gt 0 ] || { echo "no budgets found"; return 1; }
	[ "$sum" -le "$cap" ] || { echo "the examples seat more than the advertised capacity"; return 1; }
	[ "$sum" -le $((total - floor)) ] || { echo "at budget, the examples would leave less than the floor free"; return 1; }
}

# The README's seating-chart table must be the examples: same tenants, same
# budgets, the canonical form the API shows, the total, and the arithmetic
# quoted in the prose.
check_seating_table() {
	local readme=$EXAMPLES/README.md rc=0 cap total floor sum
	awk -F'|' "$quantity_awk"'
	function trim(s) { gsub(/^[ \t*]+|[ \t*]+$/, "", s); return s }
	NF >= 6 && $2 !~ /---/ {
		name = trim($2); ns = trim($3); b = trim($4); gsub(/,/, "", b); shown = trim($5)
		if (name == "total" && b ~ /^[0-9]+$/) { print "total\t\t" b; next }
		if (b !~ /^[0-9]+$/ || name == "") next
		print name "\t" ns "\t" b
		if (shown != canon(b)) { print "BAD\t" name ": the API shows " canon(b) ", the table says " shown > "/dev/stderr" }
	}' "$readme" >"$tmp/table" 2>"$tmp/table-err" || rc=1
	if [ -s "$tmp/table-err" ]; then
		sed 's/^BAD\t//' "$tmp/table-err"
		rc=1
	fi
	grep -v '^total' "$tmp/table" | sort >"$tmp/table-rows"
	awk -F'\t' '$7 ~ /^[0-9]+$/ { printf "%s\t%s\t%.0f\n", $4, $5, $7 * $6 }' "$tmp/workloads" | sort >"$tmp/manifest-rows"
	if ! diff -u "$tmp/manifest-rows" "$tmp/table-rows" >"$tmp/table-diff"; then
		echo "the table (+) differs from the manifests (-):"
		cat "$tmp/table-diff"
		rc=1
	fi
	sum=$(awk -F'\t' '{ s += $3 } END { printf "%.0f", s }' "$tmp/manifest-rows")
	if ! grep -qxF "total"$'\t\t'"$sum" "$tmp/table"; then
		echo "the table's total row is not $sum"
		rc=1
	fi
	cap=$(seats_default)
	total=$(setting_default GPU_TOTAL_MIB)
	floor=$(setting_default FLOOR_MIB)
	local want
	for want in "Seats left: $((cap - sum)) MiB" "Slack: $((total - sum)) MiB" \
		"at or below $((total - floor))" "$(((total - floor) - cap)) MiB below" \
		"$((total - sum - floor)) MiB between" "≤ $cap advertised"; do
		grep -qF -- "$want" "$readme" || { echo "README.md does not say \"$want\""; rc=1; }
	done
	[ "$rc" -eq 0 ] && echo "$(wc -l <"$tmp/table-rows") tenants, total $sum MiB"
	return "$rc"
}

# The API's canonical form, from kubectl's own quantity code (offline).
check_canonical_kubectl() {
	local res rc=0 name b shown got
	res=$(setting_default GPUMEM_RESOURCE)
	printf '%s\n' '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"q"},"spec":{"containers":[{"name":"c","image":"x"}]}}' >"$tmp/pod.json"
	while IFS='|' read -r _ name _ b shown _; do
		b=$(echo "$b" | tr -d ' ,*')
		shown=$(echo "$shown" | tr -d ' ')
		case $b in '' | *[!0-9]*) continue ;; esac
		[ -n "$shown" ] || continue
		got=$(kubectl set resources --local -f "$tmp/pod.json" --limits="$res=$b" \
			-o jsonpath="{.spec.containers[0].resources.limits.${res//./\\.}}")
		if [ "$got" != "$shown" ]; then
			echo "$b: kubectl shows $got, README.md says $shown"
			rc=1
		else
			echo "$b -> $got"
		fi
	done < <(grep -E '^\| [a-z0-9-]+ \| [a-z0-9-]+ \| [0-9,]+ \|' "$EXAMPLES/README.md")
	return "$rc"
}

check_protected() {
	local ann rc=0
	ann=$(setting_default PROTECT_ANNOTATION)
	awk -F'\t' -v a="$ann" '
	$3 == "spec>template>metadata>annotations>" a {
		n++
		if (tolower($4) != "true") { print $1 ": " a " is \"" $4 "\", not \"true\""; bad = 1 }
		else print $1 ": protected on the pod template"
	}
	$3 == "metadata>annotations>" a { print $1 ": " a " on the workload metadata does nothing; put it on spec.template.metadata"; bad = 1 }
	END { if (!n) { print "no example protects a pod with " a; bad = 1 } exit bad }' "$tmp/paths" || rc=1
	# it must be a quoted string: an unquoted true is a YAML boolean, which
	# the API server rejects in annotations
	if grep -nE "^[[:space:]]*${ann//\//\\/}:[[:space:]]*[^\"'[:space:]]" "${YAMLS[@]}"; then
		echo "^ unquoted annotation value"
		rc=1
	fi
	return "$rc"
}

# Release endpoints (deploy/examples/release/): every RELEASE_ANNOTATION
# value in the examples is a quoted "PORT/PATH" the daemon accepts (the rules
# of receiver/policy/release_target.c), and sits on a pod template.
check_release_annotations() {
	local ann rc=0 n=0 line f v
	ann=$(setting_default RELEASE_ANNOTATION)
	while IFS= read -r line; do
		n=$((n + 1))
		f=${line%%:*}
		if ! [[ $line =~ ${ann}:[[:space:]]*\"([^\"]*)\"[[:space:]]*(#.*)?$ ]]; then
			echo "$f: $ann is not a quoted string"
			rc=1
			continue
		fi
		v=${BASH_REMATCH[1]}
		if [[ ! $v =~ ^[1-9][0-9]{0,4}/[A-Za-z0-9._~!\$\&\'()*+,\;=:/-]*$ ]] || [[ $v == *..* ]] ||
			[[ $v == *//* ]] || [ "${v%%/*}" -gt 65535 ] || [ "${#v}" -gt 256 ]; then
			echo "$f: \"$v\" is not PORT/PATH"
			rc=1
		else
			echo "$f: $v"
		fi
	done < <(grep -H -E "^[[:space:]]+${ann}:" "$EXAMPLES"/*.yaml "$EXAMPLES"/release/*.yaml)
	[ "$n" -gt 0 ] || { echo "no example declares $ann"; rc=1; }
	if have python3 && python3 -c 'import yaml' 2>/dev/null; then
		python3 - "$ann" "$EXAMPLES"/*.yaml "$EXAMPLES"/release/*.yaml <<'PY' || rc=1
import sys, yaml
ann, bad = sys.argv[1], 0
for f in sys.argv[2:]:
    for d in yaml.safe_load_all(open(f)):
        if not d:
            continue
        if ann in ((d.get("metadata") or {}).get("annotations") or {}):
            print(f"{f}: {ann} on the workload metadata does nothing; put it on spec.template.metadata")
            bad = 1
print("release annotations placed on pod templates" if not bad else "", end="")
sys.exit(bad)
PY
	fi
	return "$rc"
}

check_pdb_selects() {
	awk -F'\t' '
	{ id = $1 "#" $2 }
	$3 == "kind" { kind[id] = $4 }
	$3 == "metadata>namespace" { ns[id] = $4 }
	$3 ~ /^spec>selector>matchLabels>/ { k = $3; sub(/.*>/, "", k); sel[id] = sel[id] k "=" $4 "," }
	$3 ~ /^spec>template>metadata>labels>/ { k = $3; sub(/.*>/, "", k); lab[id, k "=" $4] = 1 }
	END {
		for (id in kind) {
			if (kind[id] != "PodDisruptionBudget") continue
			n++
			ok = 0
			for (w in kind) {
				if (kind[w] == "PodDisruptionBudget" || ns[w] != ns[id]) continue
				m = split(sel[id], s, ",") - 1; hit = (m > 0)
				for (i = 1; i <= m; i++) if (!((w, s[i]) in lab)) hit = 0
				if (hit) { ok = 1; print id ": selects the pods of " w }
			}
			if (!ok) { print id ": selects no example workload"; bad = 1 }
		}
		if (!n) print "no PodDisruptionBudget example (optional)"
		exit bad
	}' "$tmp/paths"
}

# --- docs ------------------------------------------------------------------

# Every UPPER_CASE setting-like word: any word with an underscore, any
# WORD= assignment, and any `WORD` alone in backticks.
check_settings_exist() {
	local rc=0 w where
	{
		grep -HnoE '\b[A-Z][A-Z0-9]*(_[A-Z0-9]+)+\b' "${DOCS[@]}" || true
		grep -HnoE '\b[A-Z][A-Z0-9]+=' "${DOCS[@]}" | sed 's/=$//' || true
		grep -HnoE '`[A-Z][A-Z0-9_]+`' "${DOCS[@]}" | tr -d '`' || true
	} | sort -u >"$tmp/upper"
	for w in $(cut -d: -f3 "$tmp/upper" | sort -u); do
		if cut -f1 "$tmp/settings" | grep -qx "$w"; then
			continue
		fi
		case " $(echo $NOT_SETTINGS) " in *" $w "*) continue ;; esac
		where=$(grep ":$w\$" "$tmp/upper" | cut -d: -f1,2 | tr '\n' ' ')
		echo "$w is not a setting in $BIN --help ($where)"
		rc=1
	done
	[ "$rc" -eq 0 ] && echo "$(cut -d: -f3 "$tmp/upper" | sort -u | wc -l) distinct names, all settings or allowlisted"
	return "$rc"
}

# `NAME`, default X / `NAME` (X) / (`NAME`, X) must quote the binary's default.
check_setting_defaults() {
	local rc=0 file name val want n=0
	while IFS=$'\t' read -r file name val; do
		want=$(setting_default "$name")
		want=${want#(}
		want=${want%)} # "(required)" is quoted as required
		[ -n "$want" ] || continue
		n=$((n + 1))
		if [ "$val" != "$want" ]; then
			echo "$file: $name quoted as $val, the binary's default is $want"
			rc=1
		fi
	done < <(for f in "${DOCS[@]}"; do
		# one line per paragraph, so a quote broken across lines still counts
		awk 'BEGIN { RS = "" } { gsub(/\n[ \t]*/, " "); print }' "$f" >"$tmp/joined"
		{
			grep -oE '`[A-Z][A-Z0-9_]+`, default [A-Za-z0-9./:-]+' "$tmp/joined" |
				sed -E 's/^`([A-Z0-9_]+)`, default (.*)$/\1\t\2/' || true
			grep -oE '`[A-Z][A-Z0-9_]+` \([A-Za-z0-9./:-]+\)' "$tmp/joined" |
				sed -E 's/^`([A-Z0-9_]+)` \((.*)\)$/\1\t\2/' || true
			grep -oE '\(`[A-Z][A-Z0-9_]+`, [A-Za-z0-9./:-]+\)' "$tmp/joined" |
				sed -E 's/^\(`([A-Z0-9_]+)`, (.*)\)$/\1\t\2/' || true
		} | sed -E 's/[.:,]+$//' | sed "s|^|$f\t|"
	done)
	echo "$n default values quoted"
	return "$rc"
}

# Every `gpu-vram-watchdog WORD` in code is a real subcommand, with real
# flags and values.
check_subcommands() {
	code_text "${DOCS[@]}" |
		sed -E 's/(-n|--namespace)[ =]gpu-vram-watchdog//g; s#(deploy|deployment|sts|statefulset|svc|service|pod|pvc)[/ ]gpu-vram-watchdog##g' |
		grep -E '(^|[^-/.A-Za-z0-9])gpu-vram-watchdog[[:space:]]+[a-z-]' >"$tmp/invocations" || true
	[ -s "$tmp/invocations" ] || { echo "no invocations found"; return 1; }
	awk -v subs="$SUBCOMMANDS" -v words="$AUDIT_WORDS" -v flagfile="$tmp/flags" -v helpfile="$tmp/audit-help" '
	BEGIN {
		n = split(subs, a, " "); for (i = 1; i <= n; i++) sub_ok[a[i]] = 1
		sub_ok["--help"] = 1; sub_ok["--version"] = 1
		n = split(words, a, " "); for (i = 1; i <= n; i++) word_ok[a[i]] = 1
		while ((getline l < flagfile) > 0) flag_ok[l] = 1
		# audit options that take a value, and the --result values
		takes["--db"]; takes["--since"]; takes["--node"]; takes["--namespace"]
		takes["--result"]; takes["--limit"]; takes["--format"]; takes["--merge"]
		while ((getline l < helpfile) > 0) {
			if (l ~ /--result R/) inres = 1
			if (inres) {
				tt = l; gsub(/[(),]/, " ", tt)
				m = split(tt, w, " ")
				for (i = 1; i <= m; i++) if (w[i] ~ /^[a-z]+_[a-z_]+$|^recycled$|^blocked$|^coalesced$|^failed$/) result_ok[w[i]] = 1
				if (l ~ /in_progress/) inres = 0
			}
		}
	}
	{
		loc = $0; sub(/: .*/, "", loc)
		s = $0; sub(/^[^:]*:[0-9]+: /, "", s)
		s = substr(s, index(s, "gpu-vram-watchdog ") + 18)
		sub(/[|;&>#`].*/, "", s)
		gsub(/[][]|\\$/, "", s) # [optional] brackets, a line continuation
		gsub(/"\$[A-Z_]+"|\$[A-Z_]+/, "VAR", s)
		m = split(s, t, " ")
		cmd = t[1]
		if (!(cmd in sub_ok)) { print loc ": unknown subcommand \"" cmd "\""; bad = 1; next }
		bare = 0; first = ""
		for (i = 2; i <= m; i++) {
			if (t[i] ~ /^--/) {
				f = t[i]; v = ""
				if (index(f, "=")) { v = substr(f, index(f, "=") + 1); f = substr(f, 1, index(f, "=") - 1) }
				if (!(f in flag_ok)) { print loc ": unknown flag " f; bad = 1 }
				if (f in takes && v == "") v = t[++i]
				if (f == "--format" && v !~ /^(table|json)$/) { print loc ": --format " v; bad = 1 }
				if (f == "--result" && !(v in result_ok)) { print loc ": unknown result " v; bad = 1 }
				continue
			}
			bare++
			if (cmd != "audit") { print loc ": " cmd " takes no word \"" t[i] "\""; bad = 1; continue }
			if (bare == 1 && !(t[i] in word_ok)) { print loc ": audit has no word \"" t[i] "\""; bad = 1 }
			if (bare == 2 && !(first == "show" && t[i] ~ /^([0-9]+|VAR)$/)) { print loc ": audit " first " takes no \"" t[i] "\""; bad = 1 }
			if (bare > 2) { print loc ": stray word \"" t[i] "\""; bad = 1 }
			if (bare == 1) first = t[i]
		}
		seen++
	}
	END { print seen " invocations checked"; exit bad }' "$tmp/invocations"
}

# slug HEADING -- GitHub's anchor for a heading.
slugs_of() {
	awk '
	/^[ \t]*```/ { fence = !fence; next }
	!fence && /^#+ / {
		h = $0; sub(/^#+ +/, "", h); h = tolower(h)
		gsub(/[^a-z0-9 _-]/, "", h); gsub(/ /, "-", h)
		print h
	}' "$1"
}

# Every relative link in the repository's markdown (inline, titled, <...>,
# reference definitions, HTML href/src) resolves inside the repository, and
# its #anchor names a heading: tests/docs/links.py.
check_links() {
	python3 tests/docs/links.py .
}

# The link checker itself, on a small tree with one of each way a link breaks:
# it must name exactly those, and pass the good ones.
check_links_finds() {
	local t out want got
	t=$(mktemp -d)
	mkdir -p "$t/repo/docs"
	echo '# outside' >"$t/outside.md"
	printf '# A page\n\n## The heading\n' >"$t/repo/docs/a.md"
	cat >"$t/repo/README.md" <<-'MD'
		# Readme
		[ok](docs/a.md "a title") [ok2](<docs/a.md>) [ok3](/docs/a.md#the-heading) [self](#readme)
		[out](../outside.md) the file exists, outside the clone
		[titled](docs/nope.md "a title") ![image](img/none.png)
		[by reference][r] and [ok ref][g]
		<a href="docs/gone.md">html</a> [bad anchor](docs/a.md#no-such) [web](https://example.com/x.md)
		`[code](code-span.md)`

		[r]: docs/missing.md
		[g]: docs/a.md
		```
		[fenced](fenced.md)
		```
	MD
	out=$(python3 tests/docs/links.py "$t/repo" 2>&1)
	rm -rf "$t"
	want="README.md:3: ../outside.md
README.md:4: docs/nope.md
README.md:4: img/none.png
README.md:6: docs/gone.md
README.md:6: docs/a.md#no-such
README.md:9: docs/missing.md"
	got=$(printf '%s\n' "$out" | grep '^README' | cut -d: -f1-3 | sort)
	if [ "$got" = "$(printf '%s\n' "$want" | sort)" ] && printf '%s\n' "$out" | grep -q '^11 relative links checked$'; then
		echo "the six broken links named, the five good ones passed"
		return 0
	fi
	printf 'want:\n%s\ngot:\n%s\n' "$want" "$out"
	return 1
}

# Every markdown file of the repository (tracked or new), outside build trees
# and node_modules: a link anywhere must resolve inside the clone.
all_md() {
	git ls-files -co --exclude-standard '*.md' 2>/dev/null | grep -v '/node_modules/' ||
		find . -name '*.md' -not -path '*/node_modules/*' -not -path './build*' | sed 's|^\./||'
}

# No file may point outside the clone at the old shared contract.
check_no_shared() {
	local hits
	hits=$(git grep -nE '\.\./shared|shared/SPEC\.md' -- . ':!tests/docs/check.sh' 2>/dev/null || true)
	if [ -n "$hits" ]; then
		printf '%s\n' "$hits"
		echo "these point outside the repository: the contract is docs/reference.md"
		return 1
	fi
	echo "no ../shared link"
}

# docs/reference.md's settings tables are what the binary's --help prints.
check_reference_settings() {
	bash scripts/gen-reference.sh --check "$BIN"
}

check_index() {
	local rc=0 f
	for f in docs/*.md "$EXAMPLES/README.md"; do
		[ "$f" = docs/README.md ] && continue
		if ! grep -qF "($(realpath --relative-to=docs "$f"))" docs/README.md; then
			echo "docs/README.md does not link $f"
			rc=1
		fi
	done
	return "$rc"
}

check_glossary_not() {
	awk '
	/^## / { if (term != "" && !not) { print "\"" term "\" does not say what it is not"; bad = 1 } term = substr($0, 4); not = 0; n++; next }
	/\*\*Not\*\*/ { not = 1 }
	END {
		if (term != "" && !not) { print "\"" term "\" does not say what it is not"; bad = 1 }
		print n " terms"
		exit bad
	}' docs/glossary.md
}

# The resource name in a jsonpath needs its dot escaped; in a JSON patch path
# its slash is ~1.
check_escaping() {
	local res esc rc=0
	res=$(setting_default GPUMEM_RESOURCE)
	esc=${res//./\\.}
	if grep -nE "jsonpath=.*${res//./\\.}" "${DOCS[@]}" | grep -vF "$esc"; then
		echo "^ jsonpath with an unescaped $res (write ${esc})"
		rc=1
	fi
	if grep -nE '"path": ?"[^"]*gpumem' "${DOCS[@]}" | grep -vF "${res//\//~1}"; then
		echo "^ JSON patch path without ~1 for the /"
		rc=1
	fi
	return "$rc"
}

# Run the docs' node jsonpaths and JSON patches against a local Node object.
check_node_commands() {
	local res rc=0 jp n=0 out
	res=$(setting_default GPUMEM_RESOURCE)
	cat >"$tmp/node.json" <<EOF
{"apiVersion":"v1","kind":"Node","metadata":{"name":"gpu-node-1"},
 "status":{"capacity":{"cpu":"8","nvidia.com/gpu":"4","$res":"14k"},
           "allocatable":{"cpu":"8","nvidia.com/gpu":"4","$res":"14k"}}}
EOF
	while IFS= read -r jp; do
		n=$((n + 1))
		out=$(kubectl label --local -f "$tmp/node.json" gvw=check -o "jsonpath=$jp")
		if [ "$out" != "14k" ]; then
			echo "jsonpath $jp printed '$out', want 14k"
			rc=1
		fi
	done < <(grep -hE 'kubectl get node "\$NODE" .*jsonpath=' "${DOCS[@]}" |
		sed -E "s/.*jsonpath='([^']*)'.*/\1/" | sed 's/{"\\n"}$//' | sort -u)
	while IFS= read -r jp; do
		n=$((n + 1))
		out=$(kubectl patch --local -f "$tmp/node.json" --type=json -p "$jp" \
			-o "jsonpath={.status.capacity.${res//./\\.}}")
		if [ -n "$out" ]; then
			echo "patch $jp left the capacity key in place"
			rc=1
		fi
	done < <(grep -hE "kubectl patch .*--type=json -p '" "${DOCS[@]}" |
		sed -E "s/.* -p '([^']*)'.*/\1/" | sort -u)
	echo "$n node commands run against a local Node"
	[ "$n" -gt 0 ] && return "$rc"
	echo "found none"
	return 1
}

# The documented strategic-merge patch really removes the budget.
check_budget_patch() {
	local patch res out
	res=$(setting_default GPUMEM_RESOURCE)
	patch=$(grep -hE "kubectl -n immich patch deploy immich-ml --type=strategic -p '" docs/rollout.md |
		sed -E "s/.* -p '([^']*)'.*/\1/" | head -n1)
	[ -n "$patch" ] || { echo "no budget-removal patch in docs/rollout.md"; return 1; }
	out=$(kubectl patch --local -f "$EXAMPLES/immich-ml.yaml" --type=strategic -p "$patch" -o yaml)
	if printf '%s\n' "$out" | grep -qF "$res"; then
		echo "the patch leaves $res in immich-ml.yaml"
		return 1
	fi
	echo "the patch removes $res from $EXAMPLES/immich-ml.yaml"
}

# --- run -------------------------------------------------------------------

mapfile -t DOCS < <(doc_md)
mapfile -t YAMLS < <(example_yaml)
# nothing below reads stdin; an empty file list must not make grep/awk wait on it
exec </dev/null

check "binary: $BIN --help" check_binary
check "examples: present" check_examples_present
if have kubectl; then
	check "examples: parse (kubectl kustomize)" check_examples_parse_kustomize
elif have python3 && python3 -c 'import yaml' 2>/dev/null; then
	check "examples: parse (python3 yaml)" check_examples_parse_python
else
	skipped "examples: parse" "neither kubectl nor python3-yaml; the structural checks below still run"
fi
flatten_examples
if [ "$help_ok" -eq 1 ]; then
	check "examples: every workload declares a budget in limits, next to nvidia.com/gpu" check_examples_budgets
	check "examples: seating chart fits GPUMEM_CAPACITY_MIB and GPU_TOTAL_MIB - FLOOR_MIB" check_seating_chart
	check "examples: README seating-chart table matches the manifests" check_seating_table
	check "examples: protected annotation on the pod template" check_protected
	check "examples: release annotations are PORT/PATH on a pod template" check_release_annotations
	check "docs: UPPER_CASE setting names exist in --help" check_settings_exist
	check "docs: quoted defaults equal the binary's" check_setting_defaults
	check "docs: gpu-vram-watchdog subcommands, words and flags exist" check_subcommands
	check "docs: resource name escaped in jsonpath and JSON patch" check_escaping
	if have kubectl; then
		check "examples: canonical forms in README match kubectl" check_canonical_kubectl
		check "docs: node jsonpaths and patches work on a local Node" check_node_commands
		check "docs: budget-removal patch works on the example" check_budget_patch
	else
		skipped "examples: canonical forms in README match kubectl" "no kubectl"
		skipped "docs: node jsonpaths and patches work on a local Node" "no kubectl"
		skipped "docs: budget-removal patch works on the example" "no kubectl"
	fi
else
	for c in "examples: budgets" "examples: seating chart" "examples: README table" \
		"examples: protected annotation" "docs: setting names" "docs: defaults" \
		"docs: subcommands" "docs: escaping" "docs: kubectl checks"; do
		fail=$((fail + 1))
		echo "FAIL: $c (needs $BIN --help)"
	done
fi
check "examples: PodDisruptionBudget selects an example workload" check_pdb_selects
check "docs: the link checker names each way a link breaks" check_links_finds
check "docs: every relative link resolves inside the repository, anchors too" check_links
check "docs: README.md indexes every page" check_index
check "docs: nothing links outside the repository (../shared)" check_no_shared
if [ "$help_ok" -eq 1 ]; then
	check "docs: reference.md's settings table is generated from --help" check_reference_settings
else
	failed "docs: reference.md's settings table is generated from --help" "needs $BIN --help"
fi
check "docs: every glossary term says what it is not" check_glossary_not

[ "$skip" -gt 0 ] && echo "($skip skipped)"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
