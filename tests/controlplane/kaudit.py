#!/usr/bin/env python3
"""kaudit.py -- reads the API server's audit log (JSON lines, level Metadata) for what
this project's ServiceAccounts did, against what deploy/'s RBAC grants them.

  kaudit.py calls AUDIT USER...            one line per request: "CODE VERB GROUP/RESOURCE[/SUB] URI"
  kaudit.py forbidden AUDIT USER...        the requests answered 401 or 403 (nothing: exit 0)
  kaudit.py unused AUDIT ROLES.json USER...
      ROLES.json: the ClusterRoles bound to them (kubectl get clusterrole A B -o json).
      Prints each granted "VERB GROUP/RESOURCE" that no authorized request used
      (a request is a use when the authorizer let it through: any answer but
      401/403; a dry run counts, it needs the verb too).

A resource is written "pods", "pods/eviction", "events.k8s.io/events" (core
group: no prefix). Only ResponseComplete events of this project's binaries
(User-Agent gpu-vram-watchdog/...) are read: a test's own probes with a
token (curl) are not what the RBAC serves.
"""
import json
import sys


def events(path, users):
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            try:
                e = json.loads(line)
            except ValueError:
                continue
            if e.get("stage") != "ResponseComplete":
                continue
            if e.get("user", {}).get("username") not in users:
                continue
            if not e.get("userAgent", "").startswith("gpu-vram-watchdog/"):
                continue
            yield e


def resource_of(e):
    o = e.get("objectRef") or {}
    r = o.get("resource", "")
    if o.get("subresource"):
        r += "/" + o["subresource"]
    if o.get("apiGroup"):
        r = o["apiGroup"] + "/" + r
    return r


def code_of(e):
    return (e.get("responseStatus") or {}).get("code", 0)


def main():
    cmd, path = sys.argv[1], sys.argv[2]
    if cmd == "calls":
        for e in events(path, set(sys.argv[3:])):
            print(code_of(e), e.get("verb"), resource_of(e), e.get("requestURI"))
    elif cmd == "forbidden":
        for e in events(path, set(sys.argv[3:])):
            if code_of(e) in (401, 403):
                print(e["user"]["username"], code_of(e), e.get("verb"), resource_of(e), e.get("requestURI"))
    elif cmd == "unused":
        with open(sys.argv[3]) as f:
            roles = json.load(f)
        used = set()
        for e in events(path, set(sys.argv[4:])):
            if code_of(e) not in (401, 403):
                used.add((e.get("verb"), resource_of(e)))
        for role in roles.get("items", [roles]):
            for rule in role.get("rules", []):
                for g in rule.get("apiGroups", [""]):
                    for r in rule.get("resources", []):
                        for v in rule.get("verbs", []):
                            res = (g + "/" + r) if g else r
                            if (v, res) not in used:
                                print("%s %s (ClusterRole %s)" % (v, res, role["metadata"]["name"]))
    else:
        sys.exit("kaudit.py: unknown command %s" % cmd)


if __name__ == "__main__":
    main()
