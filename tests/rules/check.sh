#!/usr/bin/env bash
# check.sh -- checks rules/, runbooks/ and deploy/: promtool, amtool, kustomize, drift
#
# Run from anywhere: bash tests/rules/check.sh   (ctest -L rules runs it too)
# Needs promtool (Debian package "prometheus") and amtool (Debian package
# "prometheus-alertmanager"); kubectl is optional: the kustomize checks are
# skipped with a message when it is absent. Prints one PASS/FAIL/SKIP line per
# check and ends with "N passed, M failed"; exits non-zero if any failed.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"

SRC=rules/gpu-vram-watchdog.rules.yml
GEN=deploy/overlays/prometheus-operator/prometheusrule.yaml
AMCFG=deploy/alertmanager/alertmanager.yml
# The alerts SPEC.md ships ("Alerts shipped in rules/").
EXPECTED_ALERTS="GPUVRAMLow GPUVRAMTelemetryDown GPUVRAMWatchdogDown GPUVRAMExhaustionPredicted GPUPodOverBudget GPUPodPendingOnBudget"
# The alerts the shipped route delivers to the watchdog (its triggers).
WATCHDOG_ALERTS="GPUVRAMLow GPUVRAMExhaustionPredicted"

source "$(dirname "${BASH_SOURCE[0]}")/../lib/checks.sh"

have() { command -v "$1" >/dev/null 2>&1; }

# alerts_of FILE -- one line per alert: name|severity|summary?|description?|runbook_url
alerts_of() {
	awk '
	function flush() {
		if (name != "")
			print name "|" sev "|" sum "|" desc "|" rb
		name = ""; sev = ""; sum = 0; desc = 0; rb = ""
	}
	/^[ \t]*- record:/ { flush(); next }
	/^[ \t]*- name:/   { flush(); next }
	/^[ \t]*- alert:/  { flush(); name = $3; next }
	name != "" && /^[ \t]*severity:/    { sev = $2 }
	name != "" && /^[ \t]*summary:/     { sum = 1 }
	name != "" && /^[ \t]*description:/ { desc = 1 }
	name != "" && /^[ \t]*runbook_url:/ {
		v = $0
		sub(/^[ \t]*runbook_url:[ \t]*/, "", v)
		gsub(/["\047]/, "", v)
		sub(/[ \t]+$/, "", v)
		rb = v
	}
	END { flush() }' "$1"
}

# ---------------------------------------------------------------- the rules
c_promtool_check_source() {
	promtool check rules "$SRC"
}

c_promtool_test() {
	promtool test rules rules/tests/*.yml
}

c_generated_up_to_date() {
	env -u RUNBOOK_BASE_URL sh rules/generate.sh "$tmp/prometheusrule.yaml" || return 1
	if ! diff -u "$GEN" "$tmp/prometheusrule.yaml"; then
		echo "$GEN is stale: run  sh rules/generate.sh"
		return 1
	fi
}

# The groups inside the PrometheusRule, de-indented, are a valid rule file.
c_promtool_check_generated() {
	awk '
		/^spec:/ { on = 1; next }
		!on { next }
		/^[ \t]*$/ { print ""; next }
		{ if (substr($0, 1, 2) != "  ") { bad = 1; exit 1 } print substr($0, 3) }
		END { if (bad || !on) exit 1 }
	' "$GEN" > "$tmp/extracted.rules.yml" || { echo "cannot extract spec.groups from $GEN"; return 1; }
	grep -q '^apiVersion: monitoring.coreos.com/v1$' "$GEN" || { echo "apiVersion is not monitoring.coreos.com/v1"; return 1; }
	grep -q '^kind: PrometheusRule$' "$GEN" || { echo "kind is not PrometheusRule"; return 1; }
	promtool check rules "$tmp/extracted.rules.yml"
}

c_generator_rebases() {
	local n_alerts n_rebased
	RUNBOOK_BASE_URL=https://wiki.example.invalid/gvw/ sh rules/generate.sh - > "$tmp/rebased.yaml" || return 1
	n_alerts=$(grep -c '^[[:space:]]*- alert:' "$SRC")
	n_rebased=$(grep -c '^[[:space:]]*runbook_url: https://wiki.example.invalid/gvw/GPU[A-Za-z]*\.md$' "$tmp/rebased.yaml" || true)
	echo "alerts: $n_alerts, runbook_urls rebased: $n_rebased"
	[ "$n_alerts" -gt 0 ] && [ "$n_alerts" -eq "$n_rebased" ]
}

c_alert_fields() {
	local rc=0 name sev sum desc rb seen=""
	while IFS='|' read -r name sev sum desc rb; do
		seen="$seen $name"
		case $sev in
		critical | warning | info) ;;
		*) echo "$name: severity label missing or unknown: '$sev'"; rc=1 ;;
		esac
		[ "$sum" = 1 ] || { echo "$name: no summary annotation"; rc=1; }
		[ "$desc" = 1 ] || { echo "$name: no description annotation"; rc=1; }
		[ -n "$rb" ] || { echo "$name: no runbook_url annotation"; rc=1; }
		echo "$name: severity=$sev"
	done < <(alerts_of "$SRC")
	for name in $EXPECTED_ALERTS; do
		case " $seen " in
		*" $name "*) ;;
		*) echo "$name: missing from $SRC (SPEC ships it)"; rc=1 ;;
		esac
	done
	# description templates must show the value
	if [ "$(grep -c 'description:' "$SRC")" -ne "$(awk '/description:/{d=1} d&&/\$value/{n++; d=0} /runbook_url:/{d=0} END{print n+0}' "$SRC")" ]; then
		echo "every description must show {{ \$value }}"
		rc=1
	fi
	return $rc
}

c_runbook_urls() {
	local rc=0 name sev sum desc rb base file bases f
	for f in "$SRC" "$GEN"; do
		bases=""
		while IFS='|' read -r name sev sum desc rb; do
			file=${rb##*/}
			base=${rb%/*}
			if [ "$file" != "$name.md" ]; then
				echo "$f: $name: runbook_url $rb does not end in /$name.md"
				rc=1
			fi
			if [ ! -f "runbooks/$file" ]; then
				echo "$f: $name: runbooks/$file does not exist"
				rc=1
			fi
			case $base in
			https://*/runbooks | http://*/runbooks) ;;
			*) echo "$f: $name: base $base does not end in /runbooks"; rc=1 ;;
			esac
			case " $bases " in
			*" $base "*) ;;
			*) bases="$bases $base" ;;
			esac
			echo "$f: $name -> runbooks/$file"
		done < <(alerts_of "$f")
		# shellcheck disable=SC2086 # word-split on purpose: count the bases
		if [ "$(echo $bases | wc -w)" -ne 1 ]; then
			echo "$f: runbook_urls must share one base, found:$bases"
			rc=1
		fi
	done
	for f in runbooks/*.md; do
		name=$(basename "$f" .md)
		grep -q "^[[:space:]]*- alert: $name\$" "$SRC" || { echo "$f: no alert named $name"; rc=1; }
	done
	return $rc
}

c_alerts_unit_tested() {
	local rc=0 name
	for name in $(alerts_of "$SRC" | cut -d'|' -f1); do
		if ! grep -q "alertname: $name\$" rules/tests/*.yml; then
			echo "$name: no alert_rule_test in rules/tests/"
			rc=1
		fi
		# at least one case where it fires and one where it does not
		# shellcheck disable=SC2015 # either failing is the same finding
		grep -q "^[[:space:]]*alertname: $name\$" rules/tests/*.yml &&
			awk -v n="$name" '
				$0 ~ "^[ \t]*alertname: " n "$" { cur = 1; next }
				/^[ \t]*alertname:/ { cur = 0 }
				cur && /exp_alerts: \[\]/ { quiet = 1; cur = 0 }
				cur && /exp_alerts:$/ { loud = 1; cur = 0 }
				END { exit !(quiet && loud) }' rules/tests/*.yml ||
			{ echo "$name: needs a firing and a non-firing test case"; rc=1; }
	done
	return $rc
}

# The rule's constants are the daemon's defaults, as deployed. The card size
# is the fallback's alone (one line); the floor is every comparison of a
# free-VRAM series with a number (GPUVRAMLow, GPUVRAMExhaustionPredicted),
# and the number appears in no other rule line.
c_constants_match_deployment() {
	local total floor floors d_total d_floor rc=0 n_floor
	total=$(grep -E '^[[:space:]]*[0-9]+ - sum by \(node, gpu, uuid\) \(gpu_pod_memory_used_bytes\)' "$SRC" | grep -oE '^[[:space:]]*[0-9]+' | tr -d '[:space:]')
	floors=$(grep -v '^[[:space:]]*#' "$SRC" | grep 'gpu_vram_free_mib' | grep -oE '(<|>=|>|<=) [0-9]+' | grep -oE '[0-9]+$' | sort -u)
	floor=$floors
	n_floor=$(grep -v '^[[:space:]]*#' "$SRC" | grep 'gpu_vram_free_mib' | grep -cE '(<|>=|>|<=) [0-9]+' || true)
	d_total=$(awk '/- name: GPU_TOTAL_MIB$/ { getline; gsub(/[^0-9]/, ""); print }' deploy/base/statefulset.yaml)
	d_floor=$(awk '/- name: FLOOR_MIB$/ { getline; gsub(/[^0-9]/, ""); print }' deploy/base/statefulset.yaml)
	# a deployment that leaves a setting out runs the SPEC default
	d_total=${d_total:-15360}
	d_floor=${d_floor:-1536}
	echo "rule: total=$total floor=$(echo $floors) ($n_floor comparisons); deployment: GPU_TOTAL_MIB=$d_total FLOOR_MIB=$d_floor; SPEC defaults 15360/1536"
	[ "$(printf '%s\n' "$floors" | grep -c .)" -eq 1 ] || { echo "the floor comparisons use several numbers:" $floors; rc=1; }
	[ "$n_floor" -ge 3 ] || { echo "expected the floor in GPUVRAMLow and both sides of GPUVRAMExhaustionPredicted, found $n_floor"; rc=1; }
	# one place each: a constant written twice could drift from itself
	[ "$(grep -v '^[[:space:]]*#' "$SRC" | grep -cw "$total")" -eq 1 ] || { echo "$total must appear in exactly one rule line of $SRC"; rc=1; }
	[ "$(grep -v '^[[:space:]]*#' "$SRC" | grep -cw "$floor")" -eq "$n_floor" ] || { echo "$floor appears in a rule line that is not a floor comparison"; rc=1; }
	[ -n "$total" ] && [ "$total" = "$d_total" ] || rc=1
	[ -n "$floor" ] && [ "$floor" = "$d_floor" ] || rc=1
	return $rc
}

# setting NAME DEFAULT -- a setting as deploy/base/statefulset.yaml sets
# it, else its SPEC default.
setting() {
	local v
	v=$(awk -v n="$1" '$0 ~ "- name: " n "$" { getline; sub(/^[ \t]*value:[ \t]*/, ""); gsub(/"/, ""); print }' deploy/base/statefulset.yaml)
	printf '%s\n' "${v:-$2}"
}

# GPUVRAMExhaustionPredicted (issue #29): the daemon's PREDICT_WINDOW and
# PREDICT_HORIZON, judged on the device series only, its `for:` said in its
# description and runbook, delivered by GPUVRAMLow's fast route.
c_predicted_matches_daemon() {
	local rc=0 expr window horizon d_window d_horizon for
	expr=$(awk '/- alert: GPUVRAMExhaustionPredicted$/ { a = 1; next } a && /^[ \t]*for:/ { exit } a' "$SRC")
	window=$(printf '%s\n' "$expr" | sed -nE 's/.*predict_linear\([^[]*\[([0-9a-z]+)\], *([0-9]+)\).*/\1/p')
	horizon=$(printf '%s\n' "$expr" | sed -nE 's/.*predict_linear\([^[]*\[([0-9a-z]+)\], *([0-9]+)\).*/\2/p')
	d_window=$(setting PREDICT_WINDOW 2m)
	d_horizon=$(setting PREDICT_HORIZON 2m)
	for=$(awk '/- alert: GPUVRAMExhaustionPredicted$/ { a = 1 } a && /^[ \t]*for:/ { print $2; exit }' "$SRC")
	echo "rule: window $window, horizon ${horizon}s, for $for; daemon: PREDICT_WINDOW=$d_window PREDICT_HORIZON=$d_horizon"
	[ -n "$window" ] && [ "$(secs "$window")" = "$(secs "$d_window")" ] || { echo "predict_linear range '$window' is not PREDICT_WINDOW $d_window"; rc=1; }
	[ -n "$horizon" ] && [ "$horizon" = "$(secs "$d_horizon")" ] || { echo "predict_linear horizon '$horizon' s is not PREDICT_HORIZON $d_horizon"; rc=1; }
	# the device's own figure, never the fallback (no card size to extrapolate)
	if printf '%s\n' "$expr" | grep -qE 'node_gpu:gpu_vram_free_mib([^:]|$)|total_minus_used'; then
		echo "GPUVRAMExhaustionPredicted must judge node_gpu:gpu_vram_free_mib:device only"
		rc=1
	fi
	[ "$(printf '%s\n' "$expr" | grep -c 'node_gpu:gpu_vram_free_mib:device')" -ge 2 ] || { echo "the prediction is not gated on the current device level"; rc=1; }
	[ -n "$(secs "$for")" ] && [ "$(secs "$for")" -lt "$(secs "$d_horizon")" ] || { echo "for: $for leaves no lead time inside the $d_horizon horizon"; rc=1; }
	grep -q "pointed below the floor for $for\." "$SRC" || { echo "$SRC: GPUVRAMExhaustionPredicted description does not say 'for $for'"; rc=1; }
	grep -q "\`for: $for\`" runbooks/GPUVRAMExhaustionPredicted.md || { echo "runbooks/GPUVRAMExhaustionPredicted.md does not say \`for: $for\`"; rc=1; }
	return $rc
}

# GPUPodOverBudget / GPUPodPendingOnBudget (issue #28): the resource label is
# the daemon's GPUMEM_RESOURCE as kube-state-metrics sanitises it, and each
# description says its own `for:`.
c_budget_alerts_match_daemon() {
	local rc=0 res want a for
	res=$(setting GPUMEM_RESOURCE viktorbarzin.me/gpumem)
	want=$(printf '%s' "$res" | sed 's/[^A-Za-z0-9_]/_/g')
	echo "GPUMEM_RESOURCE=$res -> kube-state-metrics resource=\"$want\""
	grep -qE "^[^#]*kube_pod_container_resource_requests\\{resource=\"$want\"" "$SRC" ||
		{ echo "GPUPodPendingOnBudget does not select resource=\"$want\""; rc=1; }
	[ "$(grep -v '^[[:space:]]*#' "$SRC" | grep -oE 'resource="[^"]*"' | sort -u | grep -vc "resource=\"$want\"" || true)" -eq 0 ] ||
		{ echo "a rule selects another resource than \"$want\""; rc=1; }
	for a in GPUPodOverBudget GPUPodPendingOnBudget; do
		for=$(awk -v n="$a" '$0 ~ "- alert: " n "$" { a = 1 } a && /^[ \t]*for:/ { print $2; exit }' "$SRC")
		awk -v n="$a" '$0 ~ "- alert: " n "$" { a = 1; next } /- alert:/ { a = 0 } a' "$SRC" | tr '\n' ' ' | grep -q "for $for\b" ||
			{ echo "$a: description does not say 'for $for'"; rc=1; }
	done
	return $rc
}

# secs DURATION -- a Prometheus duration (1m30s, 15s, 1h) in seconds; empty if not one.
secs() {
	printf '%s\n' "$1" | awk '
		/^([0-9]+[hms])+$/ {
			n = 0; s = $0
			while (match(s, /^[0-9]+[hms]/)) {
				v = substr(s, 1, RLENGTH - 1); u = substr(s, RLENGTH, 1)
				n += v * (u == "h" ? 3600 : u == "m" ? 60 : 1)
				s = substr(s, RLENGTH + 1)
			}
			print n
		}'
}

# Time to relief (issue #19): the defaults docs/time-to-relief.md announces
# are the ones the files ship, the description and runbook say the same `for:`,
# and the window still ignores short dips.
c_relief_timing() {
	local rc=0 doc=docs/time-to-relief.md sm=deploy/overlays/prometheus-operator/servicemonitor.yaml head
	local d_scrape d_eval d_for d_gw scrape timeout eval for gw
	head=$(grep -E '^## Shipped defaults: ' "$doc" || true)
	d_scrape=$(printf '%s\n' "$head" | sed -nE 's/.*scrape ([0-9a-z]+), evaluation.*/\1/p')
	d_eval=$(printf '%s\n' "$head" | sed -nE 's/.*evaluation ([0-9a-z]+), .*/\1/p')
	d_for=$(printf '%s\n' "$head" | sed -nE 's/.*`for: ([0-9a-z]+)`.*/\1/p')
	d_gw=$(printf '%s\n' "$head" | sed -nE 's/.*`group_wait: ([0-9a-z]+)`.*/\1/p')
	scrape=$(awk '/^  name: gpu-vram-watchdog-exporter$/ { e = 1 } e && /^[ \t]*interval:/ { print $2; exit }' "$sm")
	timeout=$(awk '/^  name: gpu-vram-watchdog-exporter$/ { e = 1 } e && /^[ \t]*scrapeTimeout:/ { print $2; exit }' "$sm")
	eval=$(awk '/^  - name: gpu-vram-watchdog$/ { g = 1; next } g && /^    rules:/ { exit } g && /^    interval:/ { print $2; exit }' "$SRC")
	for=$(awk '/- alert: GPUVRAMLow$/ { a = 1 } a && /^[ \t]*for:/ { print $2; exit }' "$SRC")
	gw=$(awk '/alertname=~"([^"]*[|(])?GPUVRAMLow([|)][^"]*)?"/ { r = 1 } r && /^[ \t]*group_wait:/ { print $2; exit }' "$AMCFG")
	echo "$doc: scrape $d_scrape, evaluation $d_eval, for $d_for, group_wait $d_gw"
	echo "shipped: exporter scrape $scrape (timeout $timeout), group interval $eval, GPUVRAMLow for $for, route group_wait $gw"
	for v in d_scrape d_eval d_for d_gw scrape timeout eval for gw; do
		[ -n "$(secs "${!v}")" ] || { echo "$v: '${!v}' is not a duration (not found?)"; rc=1; }
	done
	[ $rc -eq 0 ] || return 1
	[ "$scrape" = "$d_scrape" ] || { echo "$sm: exporter interval $scrape, $doc says $d_scrape"; rc=1; }
	[ "$eval" = "$d_eval" ] || { echo "$SRC: group interval $eval, $doc says $d_eval"; rc=1; }
	[ "$for" = "$d_for" ] || { echo "$SRC: GPUVRAMLow for $for, $doc says $d_for"; rc=1; }
	[ "$gw" = "$d_gw" ] || { echo "$AMCFG: GPUVRAMLow group_wait $gw, $doc says $d_gw"; rc=1; }
	[ "$(secs "$timeout")" -le "$(secs "$scrape")" ] || { echo "$sm: scrapeTimeout $timeout exceeds interval $scrape (Prometheus rejects it)"; rc=1; }
	# a dip shorter than for - scrape - evaluation never fires: keep that positive
	if [ $(($(secs "$for") - $(secs "$scrape") - $(secs "$eval"))) -le 0 ]; then
		echo "for $for <= scrape $scrape + evaluation $eval: any dip a scrape catches may fire"
		rc=1
	fi
	grep -q "below the watchdog floor, for $for\." "$SRC" || { echo "$SRC: GPUVRAMLow description does not say 'for $for'"; rc=1; }
	grep -q "\`for: $for\`" runbooks/GPUVRAMLow.md || { echo "runbooks/GPUVRAMLow.md does not say \`for: $for\`"; rc=1; }
	return $rc
}

# ------------------------------------------------------------- alertmanager
c_amtool_check() {
	amtool check-config "$AMCFG"
}

c_amtool_routes() {
	local rc=0 a gw_low gw
	for a in $WATCHDOG_ALERTS; do
		amtool config routes test --config.file="$AMCFG" --verify.receivers=gpu-vram-watchdog \
			alertname=$a node=gpu1 uuid=GPU-0000 severity=critical >/dev/null 2>&1 ||
			{ echo "$a{node=gpu1} does not route to gpu-vram-watchdog"; rc=1; }
		amtool config routes test --config.file="$AMCFG" --verify.receivers=gpu-vram-watchdog \
			alertname=$a severity=critical >/dev/null 2>&1 ||
			{ echo "$a without node does not route to gpu-vram-watchdog"; rc=1; }
	done
	for a in $EXPECTED_ALERTS; do
		case " $WATCHDOG_ALERTS " in *" $a "*) continue ;; esac
		if amtool config routes test --config.file="$AMCFG" alertname=$a namespace=llm pod=llama-0 node=gpu1 2>/dev/null | grep -qw gpu-vram-watchdog; then
			echo "$a must not go to the watchdog (only TRIGGER_ALERTS)"
			rc=1
		fi
	done
	# the same fast delivery: every trigger is matched by the one route that
	# carries GPUVRAMLow's group_wait
	gw_low=$(awk '/alertname=~"([^"]*[|(])?GPUVRAMLow([|)][^"]*)?"/ { r = 1 } r && /^[ \t]*group_wait:/ { print $2; exit }' "$AMCFG")
	for a in $WATCHDOG_ALERTS; do
		gw=$(awk -v n="$a" '$0 ~ "alertname=~\"([^\"]*[|(])?" n "([|)][^\"]*)?\"" { r = 1 } r && /^[ \t]*group_wait:/ { print $2; exit }' "$AMCFG")
		[ -n "$gw" ] && [ "$gw" = "$gw_low" ] || { echo "$a: group_wait '$gw', GPUVRAMLow's is '$gw_low'"; rc=1; }
	done
	[ $rc -eq 0 ] && echo "$WATCHDOG_ALERTS -> gpu-vram-watchdog (group_wait $gw_low); other alerts -> elsewhere"
	return $rc
}

c_am_receiver_matches_service() {
	local rc=0 url
	url=http://gpu-vram-watchdog.gpu-vram-watchdog.svc:9808/webhook
	grep -q "url: $url\$" "$AMCFG" || { echo "webhook url is not $url"; rc=1; }
	grep -q 'send_resolved: true' "$AMCFG" || { echo "send_resolved: true missing"; rc=1; }
	grep -q 'credentials_file: /' "$AMCFG" || { echo "http_config.authorization.credentials_file missing"; rc=1; }
	# per GPU: a second GPU's alert in a group already sent would wait group_interval
	grep -q 'group_by: \[alertname, node, uuid\]' "$AMCFG" || { echo "group_by [alertname, node, uuid] missing"; rc=1; }
	# the Service really is gpu-vram-watchdog/gpu-vram-watchdog:9808
	# shellcheck disable=SC2015 # any of the three failing is the same finding
	grep -q '^  name: gpu-vram-watchdog$' deploy/base/service.yaml &&
		grep -q '^  namespace: gpu-vram-watchdog$' deploy/base/service.yaml &&
		grep -q 'port: 9808$' deploy/base/service.yaml || { echo "deploy/base/service.yaml is not gpu-vram-watchdog.gpu-vram-watchdog:9808"; rc=1; }
	return $rc
}

# ------------------------------------------------------------------- deploy
c_kustomize_default() {
	local rc=0 kind
	kubectl kustomize deploy/ > "$tmp/rendered.yaml" || return 1
	for kind in Namespace ServiceAccount ClusterRole ClusterRoleBinding Role RoleBinding Secret StatefulSet DaemonSet Service; do
		grep -q "^kind: $kind\$" "$tmp/rendered.yaml" || { echo "rendered output has no $kind"; rc=1; }
	done
	for kind in ServiceMonitor PrometheusRule; do
		if grep -q "^kind: $kind\$" "$tmp/rendered.yaml"; then
			echo "$kind needs CRDs; keep it out of the default kustomization"
			rc=1
		fi
	done
	echo "$(grep -c '^kind:' "$tmp/rendered.yaml") objects rendered"
	return $rc
}

# The optional CRD-backed manifests parse too (kustomize renders without CRDs).
c_kustomize_optional() {
	local d=$tmp/optional
	mkdir -p "$d"
	cp deploy/overlays/prometheus-operator/servicemonitor.yaml deploy/overlays/prometheus-operator/prometheusrule.yaml "$d/"
	printf 'resources:\n- servicemonitor.yaml\n- prometheusrule.yaml\n' > "$d/kustomization.yaml"
	kubectl kustomize "$d" > "$tmp/optional.yaml" || return 1
	grep -q '^kind: ServiceMonitor$' "$tmp/optional.yaml" &&
		grep -q '^kind: PrometheusRule$' "$tmp/optional.yaml"
}

# Every deploy/base/*.yaml is either in the kustomization or one of the optional files.
c_deploy_files_accounted() {
	local rc=0 f b
	for f in deploy/base/*.yaml; do
		b=$(basename "$f")
		case $b in
		kustomization.yaml | servicemonitor.yaml | prometheusrule.yaml) continue ;;
		esac
		grep -q "^  - $b\$" deploy/base/kustomization.yaml || { echo "$f is not listed in deploy/base/kustomization.yaml"; rc=1; }
	done
	return $rc
}

c_deployment_hardening() {
	local rc=0 d=deploy/base/statefulset.yaml p
	while IFS= read -r p; do
		grep -qE -- "$p" "$d" || { echo "missing: $p"; rc=1; }
	done <<'PATTERNS'
^kind: StatefulSet$
^  replicas: 2$
podManagementPolicy: Parallel$
maxUnavailable: 2$
name: LEADER_ELECTION$
fieldPath: metadata.name$
fieldPath: metadata.namespace$
volumeClaimTemplates:$
accessModes: \["ReadWriteOnce"\]$
storage: 1Gi$
runAsNonRoot: true$
runAsUser: 65532$
readOnlyRootFilesystem: true$
allowPrivilegeEscalation: false$
drop: \["ALL"\]$
type: RuntimeDefault$
path: /healthz$
path: /readyz$
containerPort: 9808$
cpu: 10m$
memory: 32Mi$
memory: 64Mi
name: DRY_RUN$
value: "true"$
name: WEBHOOK_TOKEN_FILE$
value: "/var/lib/gpu-vram-watchdog/audit.db"$
serviceAccountName: gpu-vram-watchdog$
PATTERNS
	awk '/- name: DRY_RUN$/ { getline; if ($0 !~ /value: "true"$/) exit 1 }' "$d" || { echo "DRY_RUN must ship as \"true\""; rc=1; }
	awk '/- name: LEADER_ELECTION$/ { getline; if ($0 !~ /value: "true"$/) exit 1 }' "$d" || { echo "LEADER_ELECTION must ship as \"true\" (two replicas)"; rc=1; }
	# the Lease: get/update on the one name, create (no resourceNames possible), nothing else
	if [ "$(grep -v '^[[:space:]]*#' deploy/base/lease-rbac.yaml | grep -cE '^[[:space:]]*verbs:')" -ne 2 ] ||
		! grep -qE '^[[:space:]]*resourceNames: \["gpu-vram-watchdog"\]$' deploy/base/lease-rbac.yaml ||
		! grep -qE '^[[:space:]]*verbs: \["get", "update"\]$' deploy/base/lease-rbac.yaml ||
		! grep -qE '^[[:space:]]*verbs: \["create"\]$' deploy/base/lease-rbac.yaml ||
		! grep -q '^kind: Role$' deploy/base/lease-rbac.yaml; then
		echo "deploy/base/lease-rbac.yaml must be a Role granting get/update on the Lease by name, and create"
		rc=1
	fi
	# least privilege: no wildcard, no secrets, nothing beyond the documented verbs
	if grep -v '^[[:space:]]*#' deploy/base/rbac.yaml | grep -nE '"(\*|secrets|watch|update|escalate|bind|impersonate)"'; then
		echo "rbac.yaml grants more than SPEC needs"
		rc=1
	fi
	return $rc
}

# The node exporter: hostPID, node name from the downward API, NVML through the
# nvidia runtime class, restricted-profile hardening otherwise, list-pods-only RBAC.
c_exporter_daemonset() {
	local rc=0 d=deploy/base/exporter-daemonset.yaml p
	while IFS= read -r p; do
		grep -qE -- "$p" "$d" || { echo "$d: missing: $p"; rc=1; }
	done <<'PATTERNS'
^kind: DaemonSet$
^  namespace: gpu-vram-watchdog-exporter$
hostPID: true$
runtimeClassName: nvidia$
nvidia.com/gpu.present: "true"$
key: nvidia.com/gpu$
command: \["gpu-vram-watchdog", "exporter"\]$
fieldPath: spec.nodeName$
name: NODE_NAME$
containerPort: 9809$
path: /healthz$
runAsNonRoot: true$
runAsUser: 65532$
readOnlyRootFilesystem: true$
allowPrivilegeEscalation: false$
drop: \["ALL"\]$
type: RuntimeDefault$
cpu: 10m$
memory: 64Mi
serviceAccountName: gpu-vram-watchdog-exporter$
PATTERNS
	if grep -v '^[[:space:]]*#' "$d" | grep -nE 'privileged: true|hostNetwork: true|hostPath:|add: '; then
		echo "$d: the exporter needs hostPID only (no privileged, host network, hostPath or added capabilities)"
		rc=1
	fi
	# RBAC: list pods, nothing else
	if [ "$(grep -v '^[[:space:]]*#' deploy/base/exporter-rbac.yaml | grep -cE '^[[:space:]]*verbs:')" -ne 1 ] ||
		! grep -qE '^[[:space:]]*verbs: \["list"\]$' deploy/base/exporter-rbac.yaml ||
		! grep -qE '^[[:space:]]*resources: \["pods"\]$' deploy/base/exporter-rbac.yaml; then
		echo "deploy/base/exporter-rbac.yaml must grant exactly: list pods"
		rc=1
	fi
	grep -q '^  clusterIP: None$' deploy/base/exporter-service.yaml || { echo "exporter Service is not headless"; rc=1; }
	grep -q 'port: 9809$' deploy/base/exporter-service.yaml || { echo "exporter Service port is not 9809"; rc=1; }
	grep -q '^  name: gpu-vram-watchdog-exporter$' deploy/base/exporter-service.yaml ||
		{ echo "exporter Service must be named gpu-vram-watchdog-exporter (the rules' job)"; rc=1; }
	grep -q 'honorLabels: true$' deploy/overlays/prometheus-operator/servicemonitor.yaml ||
		{ echo "the exporter's ServiceMonitor must honour its namespace/pod labels"; rc=1; }
	grep -q 'pod-security.kubernetes.io/enforce: privileged$' deploy/base/exporter-namespace.yaml ||
		{ echo "hostPID needs Pod Security enforce=privileged in the exporter's namespace"; rc=1; }
	return $rc
}

c_dockerfile() {
	local rc=0 p
	while IFS= read -r p; do
		grep -qE -- "$p" deploy/Dockerfile || { echo "missing: $p"; rc=1; }
	done <<'PATTERNS'
^FROM docker\.io/library/debian:bookworm-slim AS build$
cmake -S \. -B build -DGVW_TESTS=OFF
cmake --build build
^FROM scratch$
^USER 65532:65532$
^ENTRYPOINT \["/usr/local/bin/gpu-vram-watchdog"\]$
^CMD \["serve"\]$
PATTERNS
	return $rc
}

# ----------------------------------------------------------------- runbooks
# Only what SPEC defines: subcommands, flags, audit words, settings.
c_runbooks_follow_spec() {
	local rc=0 f line flag word sub
	local flags=" --node --gpu --format --db --merge --since --namespace --result --limit --once --suggest --window --headroom --help --version "
	local settings=" LEADER_ELECTION LEASE_NAME POD_NAME POD_NAMESPACE EXPORTER_LISTEN_ADDR NODE_NAME NVML_LIBRARY PROC_ROOT POLL_INTERVAL GPU_LABEL ALERT_GPU_LABEL LISTEN_ADDR DRY_RUN FLOOR_MIB GPU_TOTAL_MIB GPUMEM_RESOURCE GPUMEM_CAPACITY_MIB GPU_NODE_SELECTOR ADVERTISE_INTERVAL PROMETHEUS_URL USED_QUERY FREE_QUERY POD_LABEL NAMESPACE_LABEL KUBE_API_URL KUBE_TOKEN_FILE KUBE_CA_FILE WEBHOOK_TOKEN_FILE WEBHOOK_AUTH AUDIT_DB AUDIT_RETENTION TRIGGER_ALERTS ALERT_NODE_LABEL ACTION MIN_RUNTIME SETTLE MAX_RECYCLES_PER_HOUR PROTECT_ANNOTATION EXCLUDE_NAMESPACES FALLBACK LOG_FORMAT GPUMEM_RESERVE_MIB RELEASE_ANNOTATION RELEASE_WAIT EVENTS PREDICT PREDICT_WINDOW PREDICT_HORIZON PREDICT_MIN_GROWTH MAX_CONCURRENT_DECISIONS "
	# not settings: an exporter metric and the runbook's own shell variables
	local others=" DCGM_FI_DEV_FB_USED REPLACE_WITH_THE_JOB_ABOVE "
	for f in runbooks/*.md; do
		for s in "What it means" "Impact" "Confirm" "Mitigate" "Escalate"; do
			grep -q "^## $s\$" "$f" || { echo "$f: no '## $s' section"; rc=1; }
		done
		grep -q "^# $(basename "$f" .md)\$" "$f" || { echo "$f: title is not the alert name"; rc=1; }
		while IFS= read -r line; do
			sub=$(printf '%s\n' "$line" | sed -E 's/.*-- gpu-vram-watchdog ([^ ]+).*/\1/')
			case $sub in
			serve | audit | check | advertise | budgets | exporter | --help | --version) ;;
			*) echo "$f: unknown subcommand '$sub': $line"; rc=1 ;;
			esac
			for flag in $(printf '%s\n' "$line" | sed -E 's/.*-- gpu-vram-watchdog //' | grep -oE -- '--[a-z][a-z-]*' || true); do
				case $flags in
				*" $flag "*) ;;
				*) echo "$f: flag $flag is not in SPEC: $line"; rc=1 ;;
				esac
			done
			if [ "$sub" = audit ]; then
				word=$(printf '%s\n' "$line" | sed -E 's/.*-- gpu-vram-watchdog audit ?//' | awk '{print $1}')
				case $word in
				"" | show | alerts | stats | --*) ;;
				*) echo "$f: unknown audit word '$word'"; rc=1 ;;
				esac
			fi
		done < <(grep -h -- '-- gpu-vram-watchdog' "$f")
		# shellcheck disable=SC2013 # the matches are single words
		for word in $(grep -oE '\b[A-Z][A-Z0-9]*(_[A-Z0-9]+)+\b' "$f" | sort -u); do
			case "$settings$others" in
			*" $word "*) ;;
			*) echo "$f: $word is not a SPEC setting"; rc=1 ;;
			esac
		done
		# shellcheck disable=SC2013 # the matches are single words
		for word in $(grep -oE '\]\([A-Za-z]+\.md(#[a-z-]+)?\)' "$f" | sed -E 's/^\]\(//; s/#.*//; s/\)$//'); do
			[ -f "runbooks/$word" ] || { echo "$f: link to missing runbooks/$word"; rc=1; }
		done
		grep -q 'kubectl -n gpu-vram-watchdog exec sts/gpu-vram-watchdog -- gpu-vram-watchdog' "$f" ||
			{ echo "$f: no pasteable watchdog command"; rc=1; }
	done
	return $rc
}

# -------------------------------------------------------------------- run it
echo "== gpu-vram-watchdog rules/runbooks/deploy checks ($root)"

if have promtool; then
	check "promtool check rules $SRC" c_promtool_check_source
	check "promtool test rules rules/tests/*.yml" c_promtool_test
	check "$GEN is up to date with $SRC (regenerated and diffed)" c_generated_up_to_date
	check "promtool check rules on the groups inside $GEN" c_promtool_check_generated
else
	failed "promtool" "promtool not found: install the Debian package 'prometheus' (apt-get install prometheus), or put promtool on PATH"
	check "$GEN is up to date with $SRC (regenerated and diffed)" c_generated_up_to_date
fi
check "RUNBOOK_BASE_URL rebases every runbook_url" c_generator_rebases
check "every alert has severity, summary, description (with \$value), runbook_url" c_alert_fields
check "every runbook_url is <one base>/<AlertName>.md and runbooks/<AlertName>.md exists" c_runbook_urls
check "every alert has firing and non-firing unit tests" c_alerts_unit_tested
check "rule constants (GPU_TOTAL_MIB, FLOOR_MIB) match deploy/base/statefulset.yaml" c_constants_match_deployment
check "GPUVRAMExhaustionPredicted: PREDICT_WINDOW/PREDICT_HORIZON, device series only, for: said" c_predicted_matches_daemon
check "budget alerts: GPUMEM_RESOURCE as kube-state-metrics names it, for: said" c_budget_alerts_match_daemon
check "time to relief: docs/time-to-relief.md's defaults are the shipped scrape, interval, for:, group_wait" c_relief_timing

if have amtool; then
	check "amtool check-config $AMCFG" c_amtool_check
	check "amtool routes: GPUVRAMLow and GPUVRAMExhaustionPredicted reach the watchdog fast, nothing else does" c_amtool_routes
else
	failed "amtool" "amtool not found: install the Debian package 'prometheus-alertmanager'"
fi
check "Alertmanager receiver points at the watchdog Service with a token" c_am_receiver_matches_service

if have kubectl; then
	check "kubectl kustomize deploy/ (default: built-in kinds only)" c_kustomize_default
	check "optional manifests render (servicemonitor.yaml, prometheusrule.yaml)" c_kustomize_optional
else
	skipped "kubectl kustomize deploy/" "kubectl not found; YAML of deploy/ not validated"
	skipped "optional manifests render" "kubectl not found"
fi
check "every deploy/base/*.yaml is in the kustomization or documented optional" c_deploy_files_accounted
check "StatefulSet/RBAC follow the contract (two replicas, hardening, probes, dry-run, the Lease)" c_deployment_hardening
check "exporter DaemonSet/RBAC/Service: hostPID only, hardened, list pods only" c_exporter_daemonset
check "deploy/Dockerfile: multi-stage, runtime from scratch, non-root, binary entrypoint, serve by default" c_dockerfile
check "runbooks: sections, links, only SPEC subcommands/flags/settings" c_runbooks_follow_spec

echo "== $skip skipped"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
