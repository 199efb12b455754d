"""A cluster for fault tests: a PostgreSQL of its own (so it can be restarted and stopped), any
number of trifactord instances on it, and nginx balancing between them, as scripts/cluster.sh
starts them. Every process can be killed with SIGKILL and started again."""

import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import requests

from conftest import _binary, free_port

PGBIN = Path("/usr/lib/postgresql/15/bin")
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"




class Postgres:
    """initdb in a temp dir; start, stop (fast or immediate) and restart with pg_ctl."""

    def __init__(self, root: Path):
        self.dir = root / "pg"
        self.dir.mkdir()
        self.port = free_port()
        self.as_pg = []
        if os.geteuid() == 0:
            shutil.chown(self.dir, "postgres")
            self.as_pg = ["runuser", "-u", "postgres", "--"]
        subprocess.run(self.as_pg + [str(PGBIN / "initdb"), "-D", str(self.dir / "data"), "-U", "postgres", "-A", "trust",
                                     "-E", "UTF8", "--no-sync"], check=True, capture_output=True)
        self.start()

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def _ctl(self, *args):
        subprocess.run(self.as_pg + [str(PGBIN / "pg_ctl"), "-D", str(self.dir / "data"), "-l", str(self.dir / "log"), *args],
                       check=True, capture_output=True, timeout=60)

    def start(self):
        self._ctl("-w", "-t", "30", "-o", f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c max_connections=200", "start")

    def stop(self, mode="fast"):
        self._ctl("-m", mode, "-w", "stop")

    def restart(self):
        self._ctl("-m", "fast", "-w", "-t", "30", "-o", f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c max_connections=200",
                  "restart")

    def close(self):
        try:
            self.stop("immediate")
        except subprocess.CalledProcessError:
            pass


class Instance:
    """One `trifactord serve` on a fixed port, with its stderr kept."""

    def __init__(self, root: Path, name: str, database_url: str, extra=()):
        self.root, self.name, self.database_url, self.extra = root, name, database_url, list(extra)
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = root / f"{name}.log"
        self.process = None
        self.start()

    def start(self, wait=True):
        if self.process and self.process.poll() is None:
            return  # still running (a test that failed before its kill): never a second process on the port
        args = [_binary(), "serve", "--dev", "--listen", f"127.0.0.1:{self.port}", "--database-url", self.database_url,
                "--key-file", str(self.root / "trifactor.key"), "--trusted-proxies", "127.0.0.1",
                # Instances that start together migrate the shared database once (an advisory lock).
                "--migrate-on-start", "always", *self.extra]
        self.process = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=open(self.log, "a"))
        if wait:
            self.wait_ready()

    def wait_ready(self, timeout=20.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"{self.name} exited {self.process.returncode}: {self.tail()}")
            try:
                if requests.get(self.base + "/ready", timeout=1).status_code == 200:
                    return
            except requests.RequestException:
                pass
            time.sleep(0.05)
        raise AssertionError(f"{self.name} not ready after {timeout}s: {self.tail()}")

    def kill9(self):
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def tail(self, n=20) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return ""


class Nginx:
    """nginx balancing over `instances`, configured as scripts/cluster.sh does."""

    def __init__(self, root: Path, instances):
        self.dir = root / "nginx"
        self.dir.mkdir()
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        servers = "\n".join(f"    server 127.0.0.1:{i.port} max_fails=1 fail_timeout=5s;" for i in instances)
        d = self.dir
        (d / "nginx.conf").write_text(f"""
worker_processes 1;
daemon off;
error_log {d}/error.log warn;
pid {d}/nginx.pid;
events {{ worker_connections 2048; }}
http {{
  access_log off;
  client_body_temp_path {d}/body; proxy_temp_path {d}/proxy; fastcgi_temp_path {d}/fastcgi;
  uwsgi_temp_path {d}/uwsgi; scgi_temp_path {d}/scgi;
  upstream trifactord {{
{servers}
    keepalive 32;
  }}
  server {{
    listen 127.0.0.1:{self.port};
    location / {{
      proxy_pass http://trifactord;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_next_upstream error timeout http_502 http_503;
      proxy_next_upstream_tries 2;
      proxy_connect_timeout 2s;
      proxy_read_timeout 70s;
    }}
  }}
}}
""")
        self.process = subprocess.Popen([NGINX, "-p", str(d), "-c", str(d / "nginx.conf")], stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL, stderr=open(d / "stderr", "w"))
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                requests.get(self.base + "/health", timeout=1)
                return
            except requests.RequestException:
                time.sleep(0.05)
        raise AssertionError("nginx did not start: " + (d / "stderr").read_text())

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=10)


def create_api_key(database_url: str):
    out = subprocess.run([_binary(), "keys", "create", "--name", "cluster", "--json", "--database-url", database_url,
                          "--migrate-on-start", "always"],
                         check=True, capture_output=True, text=True).stdout
    import json
    created = json.loads(out)
    return created["api_key"], created["api_secret"]


class Load:
    """`threads` threads calling `work(i)` until stopped; each outcome kept as (i, result)."""

    def __init__(self, work, threads=8):
        self.work, self.results, self.lock = work, [], threading.Lock()
        self.stopped = threading.Event()
        self.counter = iter(range(10**9))
        self.threads = [threading.Thread(target=self._run, daemon=True) for _ in range(threads)]
        for t in self.threads:
            t.start()

    def _run(self):
        while not self.stopped.is_set():
            with self.lock:
                i = next(self.counter)
            try:
                result = self.work(i)
            except requests.RequestException as e:
                result = ("error", type(e).__name__)
            with self.lock:
                self.results.append((i, result))

    def stop(self):
        self.stopped.set()
        for t in self.threads:
            t.join(timeout=30)
        return self.results


def tmpdir(prefix: str) -> Path:
    path = Path(tempfile.mkdtemp(prefix=prefix))
    path.chmod(0o755)  # the postgres user must reach its data dir inside
    return path
