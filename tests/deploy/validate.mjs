// validate.mjs -- checks rendered Kubernetes manifests as a cluster would, offline.
//
//   node validate.mjs RENDERED.yaml [OPTIONAL.yaml]
//
// 1. Schema: every object against the Kubernetes OpenAPI schema (the
//    kubernetes-models package: the upstream OpenAPI compiled to validators;
//    prometheus-operator CRDs from @kubernetes-models/prometheus-operator).
//    An object of a kind with no schema fails: nothing is skipped. Those
//    validators let unknown fields through (OpenAPI has no
//    additionalProperties: false), while kubectl apply's strict field
//    validation rejects them; so each object is also type-checked by tsc
//    against the same models' TypeScript types, whose excess-property check
//    names any field the API does not have (a misspelt readOnlyRootFilesystem).
// 2. Workloads (every pod template: Deployment, DaemonSet, StatefulSet, Job,
//    CronJob, ReplicaSet, Pod): requests and a memory limit, liveness and
//    readiness probes on named ports that exist, the container hardening, and
//    Pod Security "restricted" where the namespace enforces it.
// 3. References: service accounts, PVCs, secrets and config maps a pod uses,
//    and Service selectors and target ports, resolve within the output.
// 4. RBAC: every (apiGroup, resource, verb) granted, against ALLOWED below;
//    and every API call the code makes (read from its request labels) granted.
// Prints "ok   - ..." / "FAIL - ..." lines and "N passed, N failed".
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";

// Least privilege: exactly the calls the code makes (receiver/clients/kube.c),
// one line each. A grant not listed here fails the test; add it here, with
// the call that needs it, in the same change that adds the call.
const ALLOWED = new Map([
  ["/pods:list", "budgets: GET /api/v1/pods?fieldSelector=spec.nodeName=N (kube_list_pods); the exporter lists its node's pods too"],
  ["/pods/eviction:create", "ACTION=evict: POST .../pods/P/eviction (kube_evict; also its ?dryRun=All probe)"],
  ["/pods:delete", "ACTION=delete: DELETE .../pods/P with a UID precondition (kube_delete_pod)"],
  ["/nodes:list", "GPU nodes: GET /api/v1/nodes?labelSelector=GPU_NODE_SELECTOR (kube_list_nodes)"],
  ["/nodes:get", "the seating chart's capacity: GET /api/v1/nodes/N (kube_get_node_capacity; GET / and budgets)"],
  ["/nodes/status:patch", "capacity: PATCH /api/v1/nodes/N/status (kube_patch_capacity)"],
  // SPEC "Kubernetes Events" (EVENTS=true by default):
  ["events.k8s.io/events:create", "an events.k8s.io/v1 Event per decision that names a victim"],
  // SPEC "High availability" (LEADER_ELECTION=true, as deploy/ ships it):
  // receiver/lease/lease.c; get and update on the one Lease (resourceNames).
  ["coordination.k8s.io/leases:get", "the Lease, read every retry period (GET .../leases/LEASE_NAME)"],
  ["coordination.k8s.io/leases:update", "the Lease renewed, taken over, fenced, released (PUT with its resourceVersion)"],
  ["coordination.k8s.io/leases:create", "the Lease made by the first replica (POST .../leases)"],
  // BUDGET_SOURCES=dra, granted by the component deploy/components/dra only:
  ["resource.k8s.io/resourceclaims:get", "dra: GET .../namespaces/NS/resourceclaims/NAME per claim a pod names (common/kube/pods_claims.c start_claims)"],
]);
// Calls a kustomize component grants, not deploy/ itself: the base render need
// not grant them; check.sh renders deploy/ with each component and checks there.
// What the daemon cannot work without today.
const REQUIRED = ["/pods:list", "/pods/eviction:create", "/nodes:list", "/nodes:get",
  "/nodes/status:patch", "events.k8s.io/events:create", "coordination.k8s.io/leases:get",
  "coordination.k8s.io/leases:update", "coordination.k8s.io/leases:create"];

const WORKLOAD_KINDS = new Set(["Deployment", "DaemonSet", "StatefulSet", "ReplicaSet", "Job", "CronJob", "Pod"]);
// Pod Security "restricted": the volume types it allows.
const RESTRICTED_VOLUMES = new Set(["configMap", "csi", "downwardAPI", "emptyDir", "ephemeral",
  "persistentVolumeClaim", "projected", "secret"]);

let passed = 0, failed = 0;
const ok = (name) => { passed++; console.log(`ok   - ${name}`); };
const bad = (name, why) => { failed++; console.log(`FAIL - ${name}${why ? `: ${why}` : ""}`); };
const check = (name, problems) => (problems.length ? bad(name, problems.join("; ")) : ok(name));

function load(file) {
  const docs = parseAllDocuments(readFileSync(file, "utf8"));
  const objs = [];
  for (const d of docs) {
    if (d.errors.length) throw new Error(`${file}: ${d.errors[0].message}`);
    const o = d.toJS();
    if (o != null) objs.push(o);
  }
  return objs;
}

async function modelFor(apiVersion, kind) {
  const group = apiVersion.includes("/") ? apiVersion : `core/${apiVersion}`;
  const [g, v] = group.split("/");
  const candidates = g === "core" ? [`kubernetes-models/${v}/${kind}`]
    : g === "monitoring.coreos.com" ? [`@kubernetes-models/prometheus-operator/${g}/${v}/${kind}`]
    : [`kubernetes-models/${g}/${v}/${kind}`];
  for (const path of candidates) {
    try { return (await import(path))[kind]; } catch { /* next */ }
  }
  return null;
}

const id = (o) => `${o.kind}/${o.metadata?.namespace ? o.metadata.namespace + "/" : ""}${o.metadata?.name}`;

async function schemas(objs) {
  for (const o of objs) {
    const Model = o.apiVersion && o.kind ? await modelFor(o.apiVersion, o.kind) : null;
    if (!Model) { bad(`schema: ${id(o)}`, `no schema for ${o.apiVersion} ${o.kind}`); continue; }
    try {
      new Model(o).validate();
      ok(`schema: ${id(o)} (${o.apiVersion})`);
    } catch (e) {
      bad(`schema: ${id(o)} (${o.apiVersion})`, String(e.message ?? e).split("\n").slice(0, 6).join(" | "));
    }
  }
}

function modulePath(apiVersion, kind) {
  const [g, v] = apiVersion.includes("/") ? apiVersion.split("/") : ["core", apiVersion];
  if (g === "core") return `kubernetes-models/${v}/${kind}`;
  if (g === "monitoring.coreos.com") return `@kubernetes-models/prometheus-operator/${g}/${v}/${kind}`;
  return `kubernetes-models/${g}/${v}/${kind}`;
}

// One line per object, `const oN: IKind = {...}`, so tsc's line numbers name
// the object; the file sits next to node_modules so the imports resolve.
function strictFields(objs) {
  const here = fileURLToPath(new URL(".", import.meta.url));
  const dir = mkdtempSync(join(here, "strict-"));
  const lines = [];
  const known = objs.filter((o) => o.apiVersion && o.kind);
  known.forEach((o, i) => lines.push(`import type { I${o.kind} as T${i} } from "${modulePath(o.apiVersion, o.kind)}";`));
  const first = lines.length + 1;
  known.forEach((o, i) => lines.push(`export const o${i}: T${i} = ${JSON.stringify(o)};`));
  writeFileSync(join(dir, "objects.ts"), lines.join("\n") + "\n");
  let out = "";
  try {
    execFileSync(process.execPath, [join(here, "node_modules/typescript/bin/tsc"), "--noEmit", "--strict",
      "--skipLibCheck", "--module", "nodenext", "--moduleResolution", "nodenext", "--target", "es2022",
      join(dir, "objects.ts")], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  } catch (e) {
    out = `${e.stdout ?? ""}${e.stderr ?? ""}`;
    if (!out) out = String(e.message);
  }
  rmSync(dir, { recursive: true, force: true });
  const errs = new Map();
  for (const line of out.split("\n")) {
    const m = /objects\.ts\((\d+),\d+\): error (TS\d+: .*)/.exec(line);
    if (!m) continue;
    const n = Number(m[1]);
    const key = n >= first ? n - first : -1;
    errs.set(key, [...(errs.get(key) ?? []), m[2].replace(/'"?([^'"]+)"?'/g, "'$1'")]);
  }
  if (out && errs.size === 0) bad("fields: tsc ran", out.split("\n").slice(0, 5).join(" | "));
  if (errs.has(-1)) bad("fields: the models' types load", errs.get(-1).join("; "));
  known.forEach((o, i) => check(`fields: ${id(o)} has no field the API lacks, every type right`, errs.get(i) ?? []));
}

function podSpecOf(o) {
  if (o.kind === "Pod") return o.spec;
  if (o.kind === "CronJob") return o.spec?.jobTemplate?.spec?.template?.spec;
  return o.spec?.template?.spec;
}
function podLabelsOf(o) {
  if (o.kind === "Pod") return o.metadata?.labels ?? {};
  if (o.kind === "CronJob") return o.spec?.jobTemplate?.spec?.template?.metadata?.labels ?? {};
  return o.spec?.template?.metadata?.labels ?? {};
}

function workloads(objs) {
  const byKind = (k) => objs.filter((x) => x.kind === k);
  const names = (k) => new Set(byKind(k).map((x) => `${x.metadata?.namespace ?? ""}/${x.metadata?.name}`));
  const sas = names("ServiceAccount"), pvcs = names("PersistentVolumeClaim");
  const secrets = names("Secret"), cms = names("ConfigMap");
  const restrictedNs = new Set(byKind("Namespace")
    .filter((n) => n.metadata?.labels?.["pod-security.kubernetes.io/enforce"] === "restricted")
    .map((n) => n.metadata.name));
  const ws = objs.filter((o) => WORKLOAD_KINDS.has(o.kind));
  if (ws.length === 0) bad("workloads", "the rendered output has no workload");
  for (const w of ws) {
    const spec = podSpecOf(w) ?? {};
    const ns = w.metadata?.namespace ?? "";
    const psc = spec.securityContext ?? {};
    const containers = spec.containers ?? [];
    const all = [...(spec.initContainers ?? []), ...containers];
    for (const c of all) {
      const where = `${id(w)} container ${c.name}`;
      const isInit = !containers.includes(c);
      const r = c.resources ?? {};
      const p = [];
      if (!r.requests?.cpu) p.push("no cpu request");
      if (!r.requests?.memory) p.push("no memory request");
      if (!r.limits?.memory) p.push("no memory limit");
      check(`${where}: resource requests (cpu, memory) and a memory limit`, p);
      if (!isInit) {
        const q = [];
        const ports = new Set((c.ports ?? []).map((x) => x.name).filter(Boolean));
        const nums = new Set((c.ports ?? []).map((x) => x.containerPort));
        for (const kind of ["livenessProbe", "readinessProbe"]) {
          const pr = c[kind];
          if (!pr) { q.push(`no ${kind}`); continue; }
          const port = pr.httpGet?.port ?? pr.tcpSocket?.port ?? pr.grpc?.port;
          if (typeof port === "string" && !ports.has(port)) q.push(`${kind} port "${port}" is not a named port`);
          if (typeof port === "number" && !nums.has(port)) q.push(`${kind} port ${port} is not a container port`);
        }
        check(`${where}: liveness and readiness probes on its ports`, q);
      }
      const sc = c.securityContext ?? {};
      const s = [];
      if ((sc.runAsNonRoot ?? psc.runAsNonRoot) !== true) s.push("runAsNonRoot is not true");
      if ((sc.runAsUser ?? psc.runAsUser) === 0) s.push("runAsUser 0");
      if (sc.readOnlyRootFilesystem !== true) s.push("readOnlyRootFilesystem is not true");
      if (sc.allowPrivilegeEscalation !== false) s.push("allowPrivilegeEscalation is not false");
      if (!(sc.capabilities?.drop ?? []).includes("ALL")) s.push("capabilities do not drop ALL");
      if (sc.privileged === true) s.push("privileged");
      check(`${where}: securityContext (non-root, read-only root, no escalation, drop ALL)`, s);
      if (restrictedNs.has(ns)) {
        const t = [];
        const seccomp = sc.seccompProfile?.type ?? psc.seccompProfile?.type;
        if (seccomp !== "RuntimeDefault" && seccomp !== "Localhost") t.push("seccompProfile is not RuntimeDefault/Localhost");
        for (const cap of sc.capabilities?.add ?? []) if (cap !== "NET_BIND_SERVICE") t.push(`adds capability ${cap}`);
        for (const port of c.ports ?? []) if (port.hostPort) t.push(`hostPort ${port.hostPort}`);
        check(`${where}: Pod Security "restricted" (namespace ${ns} enforces it)`, t);
      }
    }
    const v = [];
    if (restrictedNs.has(ns)) {
      for (const f of ["hostPID", "hostIPC", "hostNetwork"]) if (spec[f]) v.push(`${f}: true`);
      for (const vol of spec.volumes ?? []) {
        const type = Object.keys(vol).find((k) => k !== "name");
        if (!RESTRICTED_VOLUMES.has(type)) v.push(`volume ${vol.name} is ${type}`);
      }
      check(`${id(w)}: pod-level Pod Security "restricted" (host namespaces, volume types)`, v);
    }
    const refs = [];
    const sa = spec.serviceAccountName ?? "default";
    if (sa !== "default" && !sas.has(`${ns}/${sa}`)) refs.push(`service account ${sa}`);
    for (const vol of spec.volumes ?? []) {
      if (vol.persistentVolumeClaim && !pvcs.has(`${ns}/${vol.persistentVolumeClaim.claimName}`))
        refs.push(`PVC ${vol.persistentVolumeClaim.claimName}`);
      if (vol.secret && !secrets.has(`${ns}/${vol.secret.secretName}`)) refs.push(`secret ${vol.secret.secretName}`);
      if (vol.configMap && !cms.has(`${ns}/${vol.configMap.name}`)) refs.push(`config map ${vol.configMap.name}`);
    }
    // A StatefulSet's volumeClaimTemplates are volumes of its pods too.
    const mounted = new Set([...(spec.volumes ?? []), ...(w.kind === "StatefulSet" ? w.spec?.volumeClaimTemplates ?? [] : [])]
      .map((x) => x.name ?? x.metadata?.name));
    for (const c of all) for (const m of c.volumeMounts ?? []) if (!mounted.has(m.name)) refs.push(`volume ${m.name} (container ${c.name})`);
    check(`${id(w)}: everything it references is in the output`, refs.map((x) => `missing ${x}`));
  }
  for (const svc of byKind("Service")) {
    const sel = svc.spec?.selector ?? {};
    const ns = svc.metadata?.namespace ?? "";
    const match = ws.filter((w) => (w.metadata?.namespace ?? "") === ns &&
      Object.entries(sel).every(([k, val]) => podLabelsOf(w)[k] === val));
    const p = [];
    if (Object.keys(sel).length === 0) p.push("no selector");
    else if (match.length === 0) p.push(`selector ${JSON.stringify(sel)} matches no workload`);
    for (const port of svc.spec?.ports ?? []) {
      const tp = port.targetPort ?? port.port;
      const found = match.some((w) => (podSpecOf(w)?.containers ?? []).some((c) =>
        (c.ports ?? []).some((cp) => cp.name === tp || cp.containerPort === tp)));
      if (match.length && !found) p.push(`targetPort ${tp} is no port of the selected pods`);
    }
    check(`${id(svc)}: selects a workload, target ports exist`, p);
  }
}

// The API calls the code makes, read from their request labels ("list pods on
// node %s", "create events.k8s.io events in namespace %s": verb, [group,]
// resource), so a call added without its grant fails here, not in a cluster
// (GET /api/v1/nodes/N once shipped without `get` on nodes).
// Each file with the ServiceAccounts (by name, as deploy/base names them) of the
// programs whose calls it makes: serve's and the exporter's pod list and its
// ResourceClaims are one reader (common/kube/pods_claims.c).
const WATCHDOG_SA = "gpu-vram-watchdog", EXPORTER_SA = "gpu-vram-watchdog-exporter";
const CALL_SOURCES = [
  ["receiver/clients/kube.c", [WATCHDOG_SA]],
  ["common/kube/pods_claims.c", [WATCHDOG_SA, EXPORTER_SA]],
  ["exporter/podmap.c", [EXPORTER_SA]],
  ["receiver/lease/lease.c", [WATCHDOG_SA]],
];
// Map "group/resource:verb" -> the ServiceAccounts that make the call.
function codeCallsBySA() {
  const root = process.env.GVW_SOURCE_DIR ?? process.cwd();
  const calls = new Map();
  for (const [f, sas] of CALL_SOURCES) {
    const text = readFileSync(join(root, f), "utf8");
    for (const m of text.matchAll(/"(list|get|create|delete|patch|update|watch) ([a-z0-9.\/-]+)(?: ([a-z0-9\/-]+))?/g)) {
      const [, verb, a, b] = m;
      const key = a.includes(".") ? `${a}/${b}:${verb}` : `/${a}:${verb}`;
      calls.set(key, new Set([...(calls.get(key) ?? []), ...sas]));
    }
  }
  return calls;
}
function codeCalls() {
  return [...codeCallsBySA().keys()].sort();
}

function rbac(objs) {
  const grants = new Map();
  const p = [];
  for (const role of objs.filter((o) => o.kind === "ClusterRole" || o.kind === "Role")) {
    if (role.aggregationRule) p.push(`${id(role)} aggregates other roles`);
    for (const rule of role.rules ?? []) {
      if (rule.nonResourceURLs) p.push(`${id(role)} grants nonResourceURLs`);
      if (rule.resourceNames) { /* narrows a grant: fine */ }
      for (const g of rule.apiGroups ?? [])
        for (const r of rule.resources ?? [])
          for (const v of rule.verbs ?? []) {
            const key = `${g}/${r}:${v}`;
            grants.set(key, [...(grants.get(key) ?? []), role.metadata?.name]);
          }
    }
  }
  console.log(`     granted: ${[...grants.keys()].sort().join(", ") || "(nothing)"}`);
  for (const [key, roles] of grants) if (!ALLOWED.has(key)) p.push(`${key} (in ${roles.join(", ")}) is not in the allow-list`);
  check("RBAC: every verb and resource granted is in the allow-list (least privilege)", p);
  check("RBAC: the calls the daemon makes are granted", REQUIRED.filter((k) => !grants.has(k)).map((k) => `${k} missing`));
  // Calls a component grants with the setting that makes them (ACTION=delete:
  // deploy/components/action-delete); check.sh names them only after checking
  // that the component renders and grants them.
  const fromComponents = new Set((process.env.GVW_CALLS_FROM_COMPONENTS ?? "").split(",").filter(Boolean));
  const calls = codeCalls();
  for (const k of calls) if (fromComponents.has(k) && !grants.has(k)) console.log(`     ${k}: granted by a component, not here`);
  check("RBAC: every call in the code (its request labels) is granted",
    calls.length ? calls.filter((k) => !grants.has(k) && !fromComponents.has(k)).map((k) => `${k} missing`)
                 : ["no request label found in the sources"]);
  // Per ServiceAccount: the exporter's calls granted to the exporter, serve's to
  // serve (a grant to the other identity does not make the call work).
  const bySA = new Map();
  for (const b of objs.filter((o) => o.kind === "ClusterRoleBinding" || o.kind === "RoleBinding")) {
    const role = objs.find((o) => o.kind === b.roleRef?.kind && o.metadata?.name === b.roleRef?.name);
    for (const s of b.subjects ?? []) {
      if (s.kind !== "ServiceAccount") continue;
      const got = bySA.get(s.name) ?? new Set();
      for (const rule of role?.rules ?? [])
        for (const g of rule.apiGroups ?? [])
          for (const r of rule.resources ?? [])
            for (const v of rule.verbs ?? []) got.add(`${g}/${r}:${v}`);
      bySA.set(s.name, got);
    }
  }
  const missing = [];
  for (const [k, sas] of codeCallsBySA())
    for (const sa of sas)
      if (!fromComponents.has(k) && !(bySA.get(sa)?.has(k))) missing.push(`${k} missing for service account ${sa}`);
  check("RBAC: each program's calls are granted to its own service account", missing);
  const q = [];
  for (const b of objs.filter((o) => o.kind === "ClusterRoleBinding" || o.kind === "RoleBinding")) {
    const roles = new Set(objs.filter((o) => o.kind === b.roleRef?.kind).map((o) => o.metadata?.name));
    if (!roles.has(b.roleRef?.name)) q.push(`${id(b)} binds ${b.roleRef?.kind} ${b.roleRef?.name}, not in the output`);
    for (const s of b.subjects ?? []) {
      if (s.kind !== "ServiceAccount") q.push(`${id(b)} binds ${s.kind} ${s.name}`);
      else if (!objs.some((o) => o.kind === "ServiceAccount" && o.metadata?.name === s.name && o.metadata?.namespace === s.namespace))
        q.push(`${id(b)} binds service account ${s.namespace}/${s.name}, not in the output`);
    }
  }
  check("RBAC: bindings give the roles only to service accounts of this output", q);
}

const [rendered, optional] = process.argv.slice(2);
if (!rendered) { console.error("usage: node validate.mjs RENDERED.yaml [OPTIONAL.yaml]"); process.exit(2); }
const objs = load(rendered);
console.log(`     ${objs.length} objects rendered`);
const extra = optional ? load(optional) : [];
await schemas(objs);
await schemas(extra);
strictFields([...objs, ...extra]);
workloads(objs);
rbac(objs);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
