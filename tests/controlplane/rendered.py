#!/usr/bin/env python3
"""rendered.py -- reads what `kubectl kustomize` rendered, for the overlay test.

  rendered.py objects FILE     one line per object: KIND[.GROUP] NAMESPACE|- NAME
  rendered.py env FILE         the watchdog container's environment as the pod
                               would get it, NAME=VALUE, NUL-separated (the
                               downward API's metadata.name/namespace resolved
                               as for the StatefulSet's first pod)
  rendered.py pod FILE         NAMESPACE SERVICEACCOUNT POD: the StatefulSet's
                               namespace, its pods' ServiceAccount, its first pod
  rendered.py mount FILE PATH  SECRET KEY: the Secret (and key) the container
                               reads as file PATH through a secret volume

The StatefulSet is the one named gpu-vram-watchdog, its container the one of
that name. Anything the pod would get that this cannot resolve (another
valueFrom, a projected volume) is an error (exit 2), never a guess.
"""
import os
import sys

import yaml


def load(path):
    with open(path) as f:
        return [d for d in yaml.safe_load_all(f) if d]


def statefulset(docs):
    for d in docs:
        if d.get("kind") == "StatefulSet" and d["metadata"]["name"] == "gpu-vram-watchdog":
            return d
    sys.exit("rendered.py: no StatefulSet gpu-vram-watchdog")


def container(sts):
    for c in sts["spec"]["template"]["spec"]["containers"]:
        if c["name"] == "gpu-vram-watchdog":
            return c
    sys.exit("rendered.py: no container gpu-vram-watchdog")


def main():
    cmd, docs = sys.argv[1], load(sys.argv[2])
    if cmd == "objects":
        for d in docs:
            group = d["apiVersion"].rpartition("/")[0]
            md = d["metadata"]
            print("%s%s %s %s" % (d["kind"], "." + group if group else "",
                                  md.get("namespace", "-"), md["name"]))
        return 0
    sts = statefulset(docs)
    ns, pod = sts["metadata"]["namespace"], sts["metadata"]["name"] + "-0"
    spec = sts["spec"]["template"]["spec"]
    if cmd == "pod":
        print(ns, spec.get("serviceAccountName", "default"), pod)
        return 0
    c = container(sts)
    if cmd == "env":
        fields = {"metadata.name": pod, "metadata.namespace": ns}
        out = []
        for e in c.get("env", []):
            if "value" in e:
                out.append("%s=%s" % (e["name"], e["value"]))
            elif "valueFrom" in e and e["valueFrom"].get("fieldRef", {}).get("fieldPath") in fields:
                out.append("%s=%s" % (e["name"], fields[e["valueFrom"]["fieldRef"]["fieldPath"]]))
            else:
                print("rendered.py: cannot resolve env %s: %r" % (e["name"], e), file=sys.stderr)
                return 2
        if c.get("envFrom"):
            print("rendered.py: envFrom is not resolved here", file=sys.stderr)
            return 2
        sys.stdout.write("".join(s + "\0" for s in out))
        return 0
    if cmd == "mount":
        path = sys.argv[3]
        for m in c.get("volumeMounts", []):
            rel = os.path.relpath(path, m["mountPath"])
            if rel.startswith(".."):
                continue
            vol = next(v for v in spec.get("volumes", []) if v["name"] == m["name"])
            if "secret" not in vol:
                print("rendered.py: %s is not a secret volume" % m["name"], file=sys.stderr)
                return 2
            items = vol["secret"].get("items")
            key = rel if not items else next((i["key"] for i in items if i["path"] == rel), None)
            if key is None:
                print("rendered.py: no item of %s is %s" % (m["name"], rel), file=sys.stderr)
                return 2
            print(vol["secret"]["secretName"], key)
            return 0
        print("rendered.py: nothing is mounted at %s" % path, file=sys.stderr)
        return 2
    sys.exit("rendered.py: unknown command " + cmd)


if __name__ == "__main__":
    sys.exit(main())
