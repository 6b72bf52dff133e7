#!/usr/bin/env python3
"""kubernetes-manifest.py [FILE...]: deploy/kubernetes.yaml checked offline (no cluster here).

Every document must load as YAML and be an object of a kind listed below with the fields
Kubernetes' API has for it (an unknown or misspelt field is an error, as `kubectl apply
--validate=strict` would say), and the objects must fit together: a workload's selector matches
its pod template's labels, a Service selects some workload's pods, every volume mount names a
volume of its pod (or a StatefulSet's claim template), every container port a probe names is one
of its container's, env entries have a value or a source, a Job restarts Never or OnFailure, a
StatefulSet's serviceName is a Service here, a Secret referenced is made by hand (the file holds
none), and a script the image runs (/opt/mattersim/...) is one scripts/docker ships. Prints one
line per fault and "kubernetes-manifest: N objects, N faults"; exits 1 on any fault.
"""
import os
import re
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# The fields this checker knows per object part: a subset of the API's (the ones a manifest
# of this project may use); anything else is reported.
KINDS = {
    ("v1", "Service"), ("v1", "PersistentVolumeClaim"), ("v1", "ConfigMap"),
    ("apps/v1", "Deployment"), ("apps/v1", "StatefulSet"), ("batch/v1", "Job"),
}
TOP = {"apiVersion", "kind", "metadata", "spec", "data"}
METADATA = {"name", "labels", "annotations", "namespace"}
SPEC = {
    "Service": {"selector", "ports", "clusterIP", "type", "sessionAffinity"},
    "PersistentVolumeClaim": {"accessModes", "resources", "storageClassName"},
    "Deployment": {"replicas", "selector", "template", "strategy", "minReadySeconds"},
    "StatefulSet": {"serviceName", "replicas", "selector", "template", "volumeClaimTemplates", "podManagementPolicy", "updateStrategy"},
    "Job": {"backoffLimit", "template", "completions", "parallelism", "activeDeadlineSeconds", "ttlSecondsAfterFinished"},
}
POD_SPEC = {"containers", "initContainers", "volumes", "restartPolicy", "hostNetwork", "securityContext", "terminationGracePeriodSeconds"}
CONTAINER = {"name", "image", "command", "args", "env", "ports", "volumeMounts", "readinessProbe", "livenessProbe", "resources", "securityContext", "workingDir"}
ENV_SOURCES = {"secretKeyRef": {"name", "key", "optional"}, "configMapKeyRef": {"name", "key", "optional"}, "fieldRef": {"fieldPath"}}
PROBE_KINDS = {"httpGet", "tcpSocket", "exec"}
PROBE = PROBE_KINDS | {"periodSeconds", "failureThreshold", "initialDelaySeconds", "timeoutSeconds", "successThreshold"}
VOLUME_SOURCES = {"secret", "persistentVolumeClaim", "emptyDir", "configMap"}
SERVICE_PORT = {"name", "port", "targetPort", "protocol"}
CONTAINER_PORT = {"containerPort", "name", "protocol"}
MOUNT = {"name", "mountPath", "readOnly", "subPath"}
DNS_1123 = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")

faults = []


def fault(where, message):
    faults.append(f"{where}: {message}")


def known(where, mapping, allowed):
    if not isinstance(mapping, dict):
        fault(where, f"expected a mapping, got {type(mapping).__name__}")
        return False
    for key in mapping:
        if key not in allowed:
            fault(where, f"unknown field '{key}' (expected one of {', '.join(sorted(allowed))})")
    return True


def check_container(where, c, volumes, secrets):
    if not known(where, c, CONTAINER):
        return
    for field in ("name", "image"):
        if not isinstance(c.get(field), str) or not c.get(field):
            fault(where, f"needs a {field}")
    ports = set()
    for p in c.get("ports", []):
        if known(f"{where}.ports", p, CONTAINER_PORT):
            if not isinstance(p.get("containerPort"), int) or not 1 <= p["containerPort"] <= 65535:
                fault(where, f"containerPort {p.get('containerPort')!r} is not 1...65535")
            if p.get("protocol", "TCP") not in ("TCP", "UDP", "SCTP"):
                fault(where, f"protocol {p.get('protocol')!r}")
            ports.add(p.get("containerPort"))
            ports.add(p.get("name"))
    for e in c.get("env", []):
        if not isinstance(e, dict) or not isinstance(e.get("name"), str):
            fault(f"{where}.env", f"entry without a name: {e!r}")
            continue
        if ("value" in e) == ("valueFrom" in e):
            fault(f"{where}.env.{e['name']}", "needs exactly one of value and valueFrom")
        if "value" in e and not isinstance(e["value"], str):
            fault(f"{where}.env.{e['name']}", "a value must be a string (quote numbers)")
        source = e.get("valueFrom", {})
        if "valueFrom" in e and known(f"{where}.env.{e['name']}.valueFrom", source, set(ENV_SOURCES)):
            for kind, body in source.items():
                known(f"{where}.env.{e['name']}.{kind}", body, ENV_SOURCES[kind])
                if kind == "secretKeyRef":
                    secrets.add(body.get("name"))
    for m in c.get("volumeMounts", []):
        if known(f"{where}.volumeMounts", m, MOUNT):
            if m.get("name") not in volumes:
                fault(where, f"mounts volume '{m.get('name')}', which the pod does not have")
            if not str(m.get("mountPath", "")).startswith("/"):
                fault(where, f"mountPath {m.get('mountPath')!r} is not absolute")
    for probe_name in ("readinessProbe", "livenessProbe"):
        probe = c.get(probe_name)
        if probe is None:
            continue
        if known(f"{where}.{probe_name}", probe, PROBE):
            kinds = PROBE_KINDS & set(probe)
            if len(kinds) != 1:
                fault(f"{where}.{probe_name}", "needs exactly one of httpGet, tcpSocket, exec")
            for kind in kinds & {"httpGet", "tcpSocket"}:
                if probe[kind].get("port") not in ports:
                    fault(f"{where}.{probe_name}", f"port {probe[kind].get('port')!r} is not one of the container's")
    for word in (c.get("command") or []) + (c.get("args") or []):
        for script in re.findall(r"/opt/mattersim/([\w.-]+\.(?:sh|cfg))", str(word)):
            if not os.path.exists(os.path.join(ROOT, "scripts", "docker", script)):
                fault(where, f"runs /opt/mattersim/{script}, which scripts/docker does not ship")


def check_pod(where, template, claim_names, secrets):
    spec = template.get("spec", {})
    if not known(f"{where}.spec", spec, POD_SPEC):
        return
    volumes = set(claim_names)
    for v in spec.get("volumes", []):
        if not isinstance(v, dict) or "name" not in v:
            fault(f"{where}.volumes", f"entry without a name: {v!r}")
            continue
        sources = VOLUME_SOURCES & set(v)
        if len(sources) != 1 or set(v) - VOLUME_SOURCES - {"name"}:
            fault(f"{where}.volumes.{v['name']}", f"needs exactly one source of {', '.join(sorted(VOLUME_SOURCES))}")
        if "secret" in v:
            secrets.add(v["secret"].get("secretName"))
        volumes.add(v["name"])
    if not spec.get("containers"):
        fault(where, "a pod needs containers")
    for i, c in enumerate(spec.get("initContainers", []) + spec.get("containers", [])):
        check_container(f"{where}.containers[{c.get('name', i)}]", c, volumes, secrets)


def check(path):
    with open(path) as f:
        text = f.read()
    try:
        documents = [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError as e:
        fault(path, f"not YAML: {e}")
        return 0
    if re.search(r"mr[hd]_[A-Za-z0-9]{8,}", text):
        fault(path, "holds a relay token or credential")
    services, pods, secrets = {}, [], set()
    names = set()
    for d in documents:
        kind, version = d.get("kind"), d.get("apiVersion")
        name = (d.get("metadata") or {}).get("name", "?")
        where = f"{path}: {kind} {name}"
        if (version, kind) not in KINDS:
            fault(where, f"unknown apiVersion/kind {version}/{kind}")
            continue
        known(where, d, TOP)
        known(f"{where}.metadata", d.get("metadata", {}), METADATA)
        if not DNS_1123.match(str(name)):
            fault(where, "metadata.name is not a DNS-1123 label")
        if (kind, name) in names:
            fault(where, "defined twice")
        names.add((kind, name))
        spec = d.get("spec", {})
        if not known(f"{where}.spec", spec, SPEC.get(kind, set())):
            continue
        if kind == "Service":
            services[name] = spec.get("selector", {})
            for p in spec.get("ports", []):
                known(f"{where}.ports", p, SERVICE_PORT)
                if not isinstance(p.get("port"), int):
                    fault(where, f"port {p.get('port')!r} is not a number")
        if kind in ("Deployment", "StatefulSet", "Job"):
            template = spec.get("template", {})
            labels = (template.get("metadata") or {}).get("labels", {})
            pods.append((kind, name, labels, template))
            if kind != "Job":
                match = (spec.get("selector") or {}).get("matchLabels", {})
                if not match or any(labels.get(k) != v for k, v in match.items()):
                    fault(where, f"selector {match} does not match the pod template's labels {labels}")
                if not isinstance(spec.get("replicas", 1), int) or spec.get("replicas", 1) < 0:
                    fault(where, "replicas must be a whole number")
            elif template.get("spec", {}).get("restartPolicy") not in ("Never", "OnFailure"):
                fault(where, "a Job's pods restart Never or OnFailure")
            claims = [c.get("metadata", {}).get("name") for c in spec.get("volumeClaimTemplates", [])]
            check_pod(where, template, claims, secrets)
    for kind, name, labels, template in pods:
        if kind == "StatefulSet":
            spec = next(d["spec"] for d in documents if d.get("kind") == kind and d["metadata"]["name"] == name)
            if spec.get("serviceName") not in services:
                fault(f"{path}: StatefulSet {name}", f"serviceName {spec.get('serviceName')!r} is no Service here")
    for name, selector in services.items():
        if not any(all(labels.get(k) == v for k, v in selector.items()) for _, _, labels, _ in pods):
            fault(f"{path}: Service {name}", f"selector {selector} selects no pod of this file")
    made = set(re.findall(r"kubectl create secret generic (\S+)", text))
    for secret in sorted(s for s in secrets if s and s not in made):
        fault(path, f"secret '{secret}' is referenced but the file does not say how to make it (kubectl create secret generic)")
    return len(documents)


def main():
    paths = sys.argv[1:] or [os.path.join(ROOT, "deploy", "kubernetes.yaml")]
    count = sum(check(p) for p in paths)
    for line in faults:
        print(line)
    print(f"kubernetes-manifest: {count} objects, {len(faults)} faults")
    return 1 if faults else 0


if __name__ == "__main__":
    sys.exit(main())
