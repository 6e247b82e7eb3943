#!/usr/bin/env bash
# seeds.sh -- (re)writes the seed corpora in tests/fuzz/corpus/ from tests/data/
# and the hand-written seeds below. Deterministic: run it, then `git diff`.
#
#   tests/fuzz/seeds.sh
#
# Needs jq (the real-shaped documents are compacted, and the rules PodList is
# split into one-pod lists so each rule is its own small seed).
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
DATA=$(cd "$HERE/../data" && pwd)
C=$HERE/corpus

command -v jq >/dev/null 2>&1 || {
    echo "fuzz/seeds.sh: jq not found; install the Debian package: jq" >&2
    exit 1
}
rm -rf "$C"
mkdir -p "$C/alert" "$C/quantity" "$C/prom" "$C/pods" "$C/jscan" "$C/termtext"

# seed TARGET NAME TEXT: one file, no trailing newline.
seed() {
    printf '%s' "$3" >"$C/$1/$2"
}
# doc TARGET FILE: a document from tests/data, compacted.
doc() {
    jq -c . "$DATA/$2" | tr -d '\n' >"$C/$1/$(basename "$2" .json)"
}

# --- the webhook payload ---------------------------------------------------
doc alert alertmanager-0.25-webhook.json
doc alert alertmanager-0.27-webhook.json
seed alert empty-batch '{"version":"4","alerts":[]}'
seed alert no-version '{"alerts":[{"status":"firing","labels":{"alertname":"GPUVRAMLow","node":"gpu-node-1"}}]}'
seed alert version-3 '{"version":"3","alerts":[]}'
seed alert version-number '{"version":4,"alerts":[]}'
seed alert resolved-null-annotations '{"version":"4","alerts":[{"status":"resolved","labels":{"alertname":"A"},"annotations":null,"fingerprint":null,"startsAt":"2026-06-02T10:00:00Z","endsAt":"2026-06-02T10:05:00Z"}]}'
seed alert pending '{"alerts":[{"status":"pending","labels":{"alertname":"A"}}]}'
seed alert label-number '{"alerts":[{"status":"firing","labels":{"alertname":"A","n":1}}]}'
seed alert empty-alertname '{"alerts":[{"status":"firing","labels":{"alertname":""}}]}'
seed alert duplicate-key '{"alerts":[],"alerts":[]}'
seed alert unicode '{"alerts":[{"status":"firing","labels":{"alertname":"GPU\u00e9\ud83d\ude00","namespace":"a\"b\\c\n"},"annotations":{"summary":"\u2028"}}]}'
seed alert not-object '[{"status":"firing"}]'
seed alert truncated '{"version":"4","alerts":[{"status":"firing","labels":{"alertname":"A"'

# --- quantities ------------------------------------------------------------
i=0
while IFS= read -r q; do
    seed quantity "$(printf 'q%02d' $i)" "$q"
    i=$((i + 1))
done <<'EOF'
5k
1536Mi
1.5e3
-1
100m
0
1536
14000
1k
1.5Gi
0.5Ki
0.001Ki
1Ei
0.0000000000000000001Ei
8Ei
9223372036854775807
-9223372036854775808
9223372036854775808
10000000000000000000
12345678901234567890e-10
0.000000000000000000000000001
2.000000000000000000000000001
1e-400
1e400
1e-100001
1e100001
1e000000000000000000000000003
1E3
1e+3
1e-2
100e-2
15e-1
1.5E3
1n
1u
1000000000n
1001m
2M
2G
2T
2P
2E
1Ti
1Pi
.5
5.
+5
-0.5
-0
+0.0
00
5e
5e+
5e1.5
5Mib
5KI
5K
0x10
1,5
1.2.3
5 
EOF
printf '3k\0junk' >"$C/quantity/nul-inside"
printf '5\377' >"$C/quantity/high-byte"

# --- Prometheus answers ----------------------------------------------------
for f in "$DATA"/prom-*.json "$DATA"/remedy-prom-*.json; do
    doc prom "$(basename "$f")"
done
seed prom scalar '{"status":"success","data":{"resultType":"scalar","result":[1780394400.123,"560"]}}'
seed prom special-values '{"status":"success","data":{"resultType":"vector","result":[{"metric":{"namespace":"a","pod":"p"},"value":[1,"NaN"]},{"metric":{"namespace":"a","pod":"q"},"value":[1,"+Inf"]},{"metric":{"namespace":"a","pod":"r"},"value":[1,"-Inf"]},{"metric":{"namespace":"a","pod":"s"},"value":[1,"-1e3"]}]}}'
seed prom number-value '{"status":"success","data":{"resultType":"vector","result":[{"metric":{"namespace":"a","pod":"p"},"value":[1,1048576]}]}}'
seed prom labels-odd '{"status":"success","data":{"resultType":"vector","result":[{"metric":{"namespace":"","pod":"p"},"value":[1,"5"]},{"metric":{"namespace":"a","pod":7},"value":[1,"5"]},{"value":[1,"5"]}]}}'
seed prom exported '{"status":"success","data":{"resultType":"vector","result":[{"metric":{"exported_namespace":"a","exported_pod":"p","namespace":"monitoring","pod":"exporter"},"value":[1,"1.1489e+10"]}]}}'
seed prom two-series-one-pod '{"status":"success","data":{"resultType":"vector","result":[{"metric":{"namespace":"a","pod":"p","pid":"1"},"value":[1,"1048576"]},{"metric":{"namespace":"a","pod":"p","pid":"2"},"value":[1,"2097152"]}]}}'
seed prom bad-value '{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1," 0x10"]}]}}'
seed prom status-missing '{"data":{"resultType":"vector","result":[]}}'

# --- Kubernetes pod lists --------------------------------------------------
for f in pods-incident.json kube-pods-node.json remedy-pods-incident.json \
    remedy-pods-replaced.json kube-status-401.json kube-status-403-evict.json \
    kube-status-404.json kube-status-500.json; do
    doc pods "$f"
done
# One PodList per pod of the rules fixture: each broken declaration its own seed.
n=$(jq '.items | length' "$DATA/pods-rules.json")
for ((k = 0; k < n; k++)); do
    name=$(jq -r ".items[$k].metadata.name" "$DATA/pods-rules.json")
    jq -c "{kind, apiVersion, metadata, items: [.items[$k]]}" "$DATA/pods-rules.json" |
        tr -d '\n' >"$C/pods/rules-$name"
done
seed pods empty-list '{"kind":"PodList","apiVersion":"v1","metadata":{},"items":[]}'
seed pods no-kind '{"items":[{"metadata":{"name":"p","namespace":"n","uid":"u"}}]}'
seed pods start-offsets '{"kind":"PodList","items":[{"metadata":{"name":"p","namespace":"n","uid":"u","ownerReferences":[{"controller":true}]},"status":{"phase":"Running","startTime":"2024-02-29T23:59:60.123456789+14:00"},"spec":{"containers":[{"name":"a","resources":{"limits":{"viktorbarzin.me/gpumem":"1536Mi"}}}]}},{"metadata":{"name":"q","namespace":"n","uid":"v"},"status":{"phase":"Running","startTime":"1970-01-01T00:00:01-00:01"}}]}'
seed pods duplicate-names '{"kind":"PodList","items":[{"metadata":{"name":"p","namespace":"n","uid":"u1","ownerReferences":[{"controller":true}]},"status":{"phase":"Running","startTime":"2026-06-02T10:00:00Z"},"spec":{"containers":[{"resources":{"limits":{"viktorbarzin.me/gpumem":"1k"}}}]}},{"metadata":{"name":"p","namespace":"n","uid":"u2","ownerReferences":[{"controller":true}]},"status":{"phase":"Running","startTime":"2026-06-02T10:00:00Z"},"spec":{"containers":[{"resources":{"requests":{"viktorbarzin.me/gpumem":"2k"}}}]}}]}'
seed pods finished-mixed '{"kind":"PodList","items":[{"metadata":{"name":"done","namespace":"n","uid":"u1","annotations":{"gpu-vram-watchdog/release":"8080/unload"}},"status":{"phase":"Succeeded","podIP":"10.0.0.1"},"spec":{"containers":[{"resources":{"limits":{"viktorbarzin.me/gpumem":"5q"}}}]}},{"metadata":{"name":"p","namespace":"n","uid":"u2","ownerReferences":[{"controller":true}]},"status":{"phase":"Running","startTime":"2026-06-02T10:00:00Z"},"spec":{"containers":[{"resources":{"limits":{"viktorbarzin.me/gpumem":"1k"}}}]}},{"status":{"phase":"F\u0061iled"},"metadata":{"name":"f","namespace":"n","uid":"u3"}},{"metadata":{"name":"g","namespace":"n"},"status":{"phase":"Failed"}}]}'
seed pods long-names "{\"kind\":\"PodList\",\"items\":[{\"metadata\":{\"name\":\"$(printf 'x%.0s' $(seq 1 3000))\",\"namespace\":\"n\",\"uid\":\"u\"},\"status\":{\"phase\":\"Running\"}},{\"metadata\":{\"name\":\"$(printf 'y%.0s' $(seq 1 3000))\",\"namespace\":\"n\",\"uid\":\"v\"},\"status\":{\"phase\":\"Succeeded\"}}]}"
seed pods huge-budgets '{"kind":"PodList","items":[{"metadata":{"name":"p","namespace":"n","uid":"u","ownerReferences":[{"controller":true}]},"status":{"phase":"Running","startTime":"2026-06-02T10:00:00Z"},"spec":{"containers":[{"resources":{"limits":{"viktorbarzin.me/gpumem":"8Ei"}}},{"resources":{"limits":{"viktorbarzin.me/gpumem":9.3e18}}}]}}]}'

# --- the JSON reader itself (fuzz_jscan, differential against jansson) -----
seed jscan object '{"kind":"PodList","items":[{"metadata":{"name":"p","uid":"u"},"n":-12.5e+3,"b":[true,false,null],"e":{}}]}'
seed jscan escapes '["\u00e9\ud83d\ude00\"\\\/\b\f\n\r\t","h\u0000x"]'
seed jscan numbers '[0,-0,1e3,1E+2,-0.5,123456789012345678901234567890,1e400,1e-400]'
seed jscan duplicate-key '{"a":1,"a":[2]}'
seed jscan nul-key '{"\u0000":1}'
seed jscan nested '[[[[{"a":[[],{}]}]]]]'
seed jscan scalar '"top"'
seed jscan whitespace $' \t\r\n {} \n'
seed jscan trailing-comma '[1,2,]'
seed jscan missing-colon '{"a" 1}'
seed jscan leading-zero '[01]'
seed jscan lone-surrogate '["\ud800","\udc00"]'
seed jscan truncated '{"a":[1,{"b":"c'
seed jscan trailing-bytes '{} x'
seed jscan misspelt '[tru,nul]'
printf '"h\303\251llo \342\202\254 \360\237\230\200"' >"$C/jscan/utf8"
printf '["\300\257","\355\240\200","\364\220\200\200"]' >"$C/jscan/utf8-invalid"
printf '[12\0]' >"$C/jscan/nul-after-number"
# A number of 600 characters: js_number converts at most 511, js_skip any.
printf '[%s,1]' "$(printf '1.%0598d' 0)" >"$C/jscan/long-number"

# --- text for a terminal (fuzz_termtext: buffer size, columns, then text) ---
printf '\377\377GPUVRAMLow\n2026-06-02T10:00:00Z info forged' >"$C/termtext/newline"
printf '\020\010\033[2J\007\177 ml/onnx-1' >"$C/termtext/c0-del"
printf '\040\377\302\233\233\302\205\302\237\302\240' >"$C/termtext/c1"
printf '\041\011\342\200\256abc\342\200\250\342\200\251\342\201\246\330\234' >"$C/termtext/bidi"
printf '\377\377\300\257\355\240\200\342\200\364\220\200\200\\x1b \\u{202E} "q"' >"$C/termtext/invalid-and-backslash"
printf '\005\377caf\303\251 \360\237\230\200 \363\240\201\201\357\273\277' >"$C/termtext/kept-and-tags"
