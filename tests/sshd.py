"""Real SSH servers for the tests: each `Sshd` is its own sshd on 127.0.0.1 and a free port, with
a generated host key, one authorized key, a throwaway sshd_config and a known_hosts entry of
its own. Each plays one "host": `SetEnv` points sessidx there at the host's own agent home,
cache and PATH (stub agents), and HOME at a login folder of the host's own whose shell rc
files are empty, as on a plain host: sshd's bash sources ~/.bashrc for every command, and
this machine's root ~/.bashrc runs `pyenv init` (about a second a call; it would also put
pyenv's shims before the PATH given here). No system sshd or system ssh configuration is touched: the
client reads only the `ssh_config` written here (`SESSIDX_SSH="ssh -F ..."`)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

SSHD = shutil.which("sshd") or next((p for p in ("/usr/sbin/sshd", "/usr/local/sbin/sshd") if os.access(p, os.X_OK)),
                                    None)


def need_sshd() -> str:
    """sshd and ssh, or a skip that says why: only when they are truly not installed (CI
    installs openssh-server, so there these tests run)."""
    if SSHD is None or shutil.which("ssh") is None or shutil.which("ssh-keygen") is None:
        if os.environ.get("CI"):
            raise AssertionError("sshd/ssh not installed; .ci/run must install openssh-server")
        pytest.skip("openssh-server (sshd) is not installed: apt-get install openssh-server")
    if os.geteuid() == 0 and not os.path.isdir("/run/sshd"):
        os.makedirs("/run/sshd", mode=0o755, exist_ok=True)  # sshd's privilege separation folder, when root
    return SSHD


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Client:
    """The ssh client side: a user key, a known_hosts file and an ssh_config naming the hosts."""

    def __init__(self, folder: Path) -> None:
        need_sshd()
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.key = folder / "id_ed25519"
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(self.key)], check=True)
        self.known_hosts = folder / "known_hosts"
        self.known_hosts.write_text("")
        self.config = folder / "ssh_config"
        self.config.write_text("")
        # A short ControlPath folder (sockets have a path limit of about 100 bytes).
        self.runtime = Path(tempfile.mkdtemp(prefix="sx-", dir="/tmp"))
        self.servers: list[Sshd] = []

    def add_host(self, alias: str, port: int, host_key: Path | None) -> None:
        if host_key is not None:
            with self.known_hosts.open("a") as f:
                f.write(f"[127.0.0.1]:{port} {' '.join(host_key.read_text().split()[:2])}\n")
        with self.config.open("a") as f:
            f.write(f"Host {alias}\n  HostName 127.0.0.1\n  Port {port}\n  User {os.environ.get('USER') or 'root'}\n"
                    f"  IdentityFile {self.key}\n  IdentitiesOnly yes\n  UserKnownHostsFile {self.known_hosts}\n"
                    "  GlobalKnownHostsFile /dev/null\n  StrictHostKeyChecking yes\n  LogLevel ERROR\n")

    def env(self, hosts: str) -> dict[str, str]:
        """What sessidx needs to reach these hosts."""
        return {"SESSIDX_SSH": f"ssh -F {self.config}", "SESSIDX_HOSTS": hosts, "XDG_RUNTIME_DIR": str(self.runtime)}

    def control(self, alias: str) -> str:
        """The socket of sessidx's shared connection to the host `alias`."""
        from sessidx.hosts import control_socket

        return control_socket(f"{self.runtime}/sessidx", ["ssh", "-F", str(self.config)], alias)

    def close(self) -> None:
        for server in self.servers:
            server.stop()
        shutil.rmtree(self.runtime, ignore_errors=True)


class Sshd:
    """One host: an sshd of its own whose sessions see `home` as the agent home."""

    def __init__(self, client: Client, alias: str, folder: Path, home: Path, path: str = "/usr/bin:/bin",
                 password_only: bool = False) -> None:
        self.alias, self.folder, self.home = alias, folder, home
        folder.mkdir(parents=True, exist_ok=True)
        home.mkdir(parents=True, exist_ok=True)
        self.cache = folder / "cache"
        self.login = folder / "login"  # the host's HOME for ssh's commands: plain rc files
        self.login.mkdir(exist_ok=True)
        for rc in (".bashrc", ".profile", ".zshenv"):
            (self.login / rc).write_text("")
        host_key = folder / "host_key"
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(host_key)], check=True)
        authorized = folder / "authorized_keys"
        authorized.write_text("" if password_only else (client.key.with_suffix(".pub")).read_text())
        authorized.chmod(0o600)
        self.port = free_port()
        auth = ("PasswordAuthentication yes\nKbdInteractiveAuthentication yes\nAuthenticationMethods password\n"
                if password_only else "PasswordAuthentication no\nKbdInteractiveAuthentication no\n")
        config = folder / "sshd_config"
        config.write_text(
            f"Port {self.port}\nListenAddress 127.0.0.1\nHostKey {host_key}\nAuthorizedKeysFile {authorized}\n"
            f"PidFile {folder}/sshd.pid\nUsePAM no\nStrictModes no\nPermitRootLogin prohibit-password\n{auth}"
            "AllowTcpForwarding no\nX11Forwarding no\nPrintMotd no\nPrintLastLog no\nSubsystem sftp internal-sftp\n"
            f"SetEnv HOME={self.login} SESSIDX_HOME={home} XDG_CACHE_HOME={self.cache} PATH={path} LC_ALL=C.UTF-8\n")
        self.log = folder / "sshd.log"
        self.proc = subprocess.Popen([need_sshd(), "-D", "-e", "-f", str(config)], stdout=subprocess.DEVNULL,
                                     stderr=self.log.open("wb"), start_new_session=True)
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(f"sshd did not start: {self.log.read_text()}") from None
                time.sleep(0.05)
        client.add_host(alias, self.port, host_key.with_suffix(".pub"))
        client.servers.append(self)
        self.client = client

    def stop(self) -> None:
        # the shared connection first (its master would live on for ControlPersist), then sshd
        subprocess.run(["ssh", "-F", str(self.client.config), "-o", f"ControlPath={self.client.control(self.alias)}",
                        "-O", "exit", self.alias], capture_output=True, timeout=10)
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=10)


class Silent:
    """A "host" that accepts the connection and never says a word: ssh waits for a banner."""

    def __init__(self, client: Client, alias: str) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = int(self.sock.getsockname()[1])
        client.add_host(alias, self.port, None)

    def close(self) -> None:
        self.sock.close()


def dead_host(client: Client, alias: str) -> None:
    """A "host" where nothing listens: the connection is refused."""
    client.add_host(alias, free_port(), None)
