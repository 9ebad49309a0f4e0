"""How a command reaches a host: OpenSSH, Slurm's ``srun``, or this machine.

Only engines that already exist and that sites already trust (docs/cluster.md): no agent, no
protocol of our own. A transport only *builds the local argv* that runs a shell command
on a host; running, timing out and killing it is ``proc``'s job, the same for all three.

SSH is run the way an operator's own ``ssh`` would run, with three additions: BatchMode
(a prompt would hang a fleet run), a connect timeout, and connection reuse through a
ControlMaster socket in a private temporary directory (probing and then measuring a host
opens one TCP/SSH session, not five). Host keys are checked exactly as the user's
configuration says; StrictHostKeyChecking is never touched here.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from typing import Protocol

from validator.errors import SpecCheckError


class Transport(Protocol):
    name: str

    def argv(self, host: str, command: str, *, tty: bool = False) -> list[str]:
        """The local argv that runs shell ``command`` on ``host``.

        ``tty``: the remote command must end when the local one is killed (measurement
        tools); over ssh this takes a pseudo-terminal, whose hang-up ends the command.
        """
        ...

    def address(self, host: str) -> str:
        """The address other hosts reach ``host`` at (for measurements)."""
        ...

    def close(self) -> None:
        """Release shared resources (ssh masters, temp dirs)."""
        ...


def _need(program: str) -> str:
    path = shutil.which(program)
    if path is None:
        raise SpecCheckError(
            f"{program} is not installed or not on PATH (needed by this transport)"
        )
    return path


class SshTransport:
    """``ssh -o BatchMode=yes ... HOST -- COMMAND`` with a shared ControlMaster per host."""

    name = "ssh"

    def __init__(
        self,
        *,
        ssh_config: str | None = None,
        connect_timeout: int = 10,
        persist_s: int = 120,
        extra_options: Sequence[str] = (),
        parallel: int = 32,
    ):
        self.parallel = max(1, parallel)
        self.ssh = _need("ssh")
        if ssh_config is not None and not os.path.isfile(ssh_config):
            raise SpecCheckError("no such ssh config file", file=ssh_config)
        self.ssh_config = ssh_config
        # short path: a unix socket path must stay under ~104 bytes
        self.control_dir = tempfile.mkdtemp(prefix="sc-ssh-")
        os.chmod(self.control_dir, 0o700)
        self.options = [
            "-o",
            "BatchMode=yes",
            "-o",
            f"ConnectTimeout={connect_timeout}",
            "-o",
            "ServerAliveInterval=5",
            "-o",
            "ServerAliveCountMax=3",
            "-o",
            "ControlMaster=auto",
            "-o",
            f"ControlPath={self.control_dir}/%C",
            "-o",
            f"ControlPersist={persist_s}",
            *extra_options,
        ]
        self._used: set[str] = set()
        self._addresses: dict[str, str] = {}

    def _base(self) -> list[str]:
        return [self.ssh, *(["-F", self.ssh_config] if self.ssh_config else []), *self.options]

    def argv(self, host: str, command: str, *, tty: bool = False) -> list[str]:
        self._used.add(host)
        return [*self._base(), "-tt" if tty else "-T", host, "--", command]

    def address(self, host: str) -> str:
        """The HostName ssh would connect to (``ssh -G``), so aliases measure the real host."""
        if host not in self._addresses:
            addr = host.rsplit("@", 1)[-1]
            try:
                out = subprocess.run(
                    [*self._base(), "-G", host],
                    capture_output=True,
                    text=True,
                    timeout=10,
                    check=False,
                ).stdout
                for line in out.splitlines():
                    key, _, val = line.partition(" ")
                    if key == "hostname" and val.strip():
                        addr = val.strip()
                        break
            except (OSError, subprocess.TimeoutExpired):
                pass
            self._addresses[host] = addr
        return self._addresses[host]

    def close(self) -> None:
        """Stop the masters this run started (at most ``parallel`` at once: 1,000 hosts
        must not mean 1,000 ``ssh -O exit`` processes), then remove their sockets' directory."""
        from concurrent.futures import ThreadPoolExecutor

        def stop(host: str) -> None:
            with contextlib.suppress(OSError, subprocess.TimeoutExpired):
                subprocess.run(
                    [*self._base(), "-O", "exit", host],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    stdin=subprocess.DEVNULL,
                    timeout=5,
                    check=False,
                )

        hosts = sorted(self._used)
        if hosts:
            with ThreadPoolExecutor(max_workers=min(self.parallel, len(hosts))) as pool:
                list(pool.map(stop, hosts))
        shutil.rmtree(self.control_dir, ignore_errors=True)


class SlurmTransport:
    """``srun`` one task on one node; inside an allocation the step overlaps the job.

    The probes of a fleet run as one multi-node step (``slurm_step.probe_fleet``: usable
    nodes only, output framed per node); ``argv`` is for the per-host commands of the
    measurements.
    """

    name = "slurm"
    one_step = True  # probes run as one multi-node step for the fleet (slurm_step.py)

    def __init__(self, *, extra_args: Sequence[str] = ()):
        """``extra_args``: the user's srun options (``--slurm-args``: partition, account,
        time limit), given to every step, after ours so that they win."""
        self.srun = _need("srun")
        self.in_allocation = bool(os.environ.get("SLURM_JOB_ID"))
        self.extra_args = list(extra_args)

    def argv(self, host: str, command: str, *, tty: bool = False) -> list[str]:
        args = [
            self.srun,
            "--nodes=1",
            "--ntasks=1",
            f"--nodelist={host}",
            "--quiet",
            "--kill-on-bad-exit=1",
            "--job-name=spec-check",
        ]
        if self.in_allocation:
            args.append("--overlap")  # share the allocation's resources with the job's steps
        # Slurm has been seen to place a step on another node when --nodelist names an
        # unknown one; a probe from the wrong node must never pass for this host.
        q = shlex.quote(host)
        guard = (
            f'if [ "${{SLURMD_NODENAME:-}}" != {q} ]; then echo "srun ran the step on '
            f'${{SLURMD_NODENAME:-an unknown node}}, not on "{q} >&2; exit 97; fi; '
        )
        return [*args, *self.extra_args, "/bin/sh", "-c", guard + command]

    def address(self, host: str) -> str:
        return host

    def close(self) -> None:
        pass


class LocalTransport:
    """This machine: ``sh -c COMMAND``; the host name is only a label."""

    name = "local"

    def argv(self, host: str, command: str, *, tty: bool = False) -> list[str]:
        # the label travels in the environment, so a command can tell its "hosts" apart
        return ["/usr/bin/env", f"SPEC_CHECK_HOST={host}", "/bin/sh", "-c", command]

    def address(self, host: str) -> str:
        return "127.0.0.1" if host in ("localhost", "local") else host

    def close(self) -> None:
        pass


def default_remote_command(transport: str) -> str:
    """``spec-check`` remotely; locally, this very interpreter (no PATH surprises)."""
    if transport == "local":
        return f"{shlex.quote(sys.executable)} -m validator"
    return "spec-check"


def allocation_hosts() -> list[str]:
    """The nodes of the Slurm allocation we run inside (SLURM_JOB_NODELIST, expanded)."""
    nodelist = os.environ.get("SLURM_JOB_NODELIST") or os.environ.get("SLURM_NODELIST")
    if not nodelist:
        raise SpecCheckError(
            "--hosts is required outside a Slurm allocation (SLURM_JOB_NODELIST is not set)"
        )
    scontrol = _need("scontrol")
    out = subprocess.run(
        [scontrol, "show", "hostnames", nodelist],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    if out.returncode != 0:
        raise SpecCheckError(f"scontrol show hostnames {nodelist}: {out.stderr.strip()[:200]}")
    return [h for h in out.stdout.split() if h]


def make_transport(
    name: str,
    *,
    ssh_config: str | None = None,
    connect_timeout: int = 10,
    parallel: int = 32,
    slurm_args: Sequence[str] = (),
) -> Transport:
    if name == "ssh":
        return SshTransport(
            ssh_config=ssh_config, connect_timeout=connect_timeout, parallel=parallel
        )
    if name == "slurm":
        return SlurmTransport(extra_args=slurm_args)
    if name == "local":
        return LocalTransport()
    raise SpecCheckError(f'unknown transport "{name}" (known: ssh, slurm, local)')
