"""A stand-in for ``spec-check`` on a test host: ``fake_remote.py MODES.json probe --format json``.

The host is recognised by ``SPEC_CHECK_HOST`` (local transport) or by its own source
address towards ``MODES["gateway"]`` (a netns host reached over ssh). Its mode says how it
misbehaves: ``ok`` (a node facts document), ``doc:PATH`` (that document), ``hang``,
``die`` (half a document, then the session is killed), ``garbage``, ``fail``.
"""

import json
import os
import socket
import sys
import time


def whoami(modes):
    if os.environ.get("SPEC_CHECK_HOST"):
        return os.environ["SPEC_CHECK_HOST"]
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.connect((modes.get("gateway", "127.0.0.1"), 9))
    return s.getsockname()[0]


def session_leader():
    """The nearest ancestor that is sshd (the connection), else the parent."""
    pid = os.getppid()
    while pid > 1:
        with open(f"/proc/{pid}/stat") as fh:
            stat = fh.read()
        comm = stat[stat.index("(") + 1 : stat.rindex(")")]
        if comm.startswith("sshd"):
            return pid
        pid = int(stat[stat.rindex(")") + 2 :].split()[1])
    return os.getppid()


def node_doc(name, **gpu):
    facts = {
        "host.hostname": {"value": "clone"},
        "gpu.vendor": {"value": "nvidia" if gpu else "none"},
        "gpu.count": {"value": 8 if gpu else 0},
    }
    if gpu:
        facts.update(
            {
                "gpu.models": {"value": [gpu.get("model", "NVIDIA H100 80GB HBM3")]},
                "gpu.driver_version": {"value": gpu.get("driver", "550.54.15")},
                "gpu.cuda_version": {"value": gpu.get("cuda", "12.4")},
                "gpu.devices": {
                    "items": [
                        {
                            "id": f"GPU{i}",
                            "fields": {
                                "vbios_version": {"value": gpu.get("vbios", "96.00.74.00.01")}
                            },
                        }
                        for i in range(8)
                    ]
                },
                "rdma.ports": {
                    "items": [
                        {
                            "id": "mlx5_0:1",
                            "fields": {
                                "fw_ver": {"value": gpu.get("fw", "28.39.1002")},
                                "state": {"value": "ACTIVE"},
                            },
                        }
                    ]
                },
            }
        )
    return {
        "schema": "spec-check/facts/1",
        "tool_version": "0.1.0",
        # collected now, as a real probe's: the run's clock (SOURCE_DATE_EPOCH when pinned)
        "collected_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(int(os.environ.get("SOURCE_DATE_EPOCH")
                                                                              or time.time()))),
        "subject": {"kind": "node", "name": "clone"},
        "facts": facts,
    }


def main():
    with open(sys.argv[1]) as fh:
        modes = json.load(fh)
    me = whoami(modes)
    mode = modes.get(me, modes.get("*", "ok"))
    if mode == "ok":
        print(json.dumps(node_doc(me)))
    elif mode.startswith("gpu"):
        kv = dict(p.split("=", 1) for p in mode.split(":")[1:])
        print(json.dumps(node_doc(me, **kv) if kv else node_doc(me, model="NVIDIA H100 80GB HBM3")))
    elif mode.startswith("doc:"):
        with open(mode[4:]) as fh:
            sys.stdout.write(fh.read())
    elif mode == "hang":
        time.sleep(600)
    elif mode == "die":
        sys.stdout.write(json.dumps(node_doc(me))[:40])
        sys.stdout.flush()
        time.sleep(0.3)
        os.kill(session_leader(), 9)  # the host's sshd session (or the local shell) dies
        os._exit(137)
    elif mode == "garbage":
        print("Segmentation fault? not JSON")
    elif mode == "fail":
        print("spec-check: error: cannot open /sys", file=sys.stderr)
        sys.exit(3)


if __name__ == "__main__":
    main()
