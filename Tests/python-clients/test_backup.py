"""`trifactord backup`: an online copy of the SQLite database taken while sign-ups are being
written, restored under a new server that then signs the user in."""

import subprocess
import tempfile
import threading
from pathlib import Path

import requests

from conftest import Server, _binary, _Daemon

PASSWORD = "backup-correct-horse-battery"


def start(binary, tmp, database_url):
    daemon = _Daemon(binary, ["--listen", "127.0.0.1:0", "--database-url", database_url, "--dev",
                              "--key-file", str(tmp / "trifactor.key")], tmp)
    return daemon, Server(process=daemon.process, port=daemon.port, api_key="", api_secret="", cert=None,
                          lines=daemon.lines, lock=daemon.lock, scheme="http")


def test_an_online_backup_restores_to_a_server_that_signs_the_user_in():
    binary = _binary()
    tmp = Path(tempfile.mkdtemp(prefix="trifactor-backup."))
    live_url = f"sqlite:{tmp / 'live.db'}"
    daemon, live = start(binary, tmp, live_url)
    try:
        live.create_account("saved@example.com", PASSWORD, "Saved")
        # Sign-ups keep writing while the copy is taken.
        stop = threading.Event()
        written = []

        def burst():
            i = 0
            while not stop.is_set():
                r = requests.post(live.base_url + "/v1/accounts", timeout=10,
                                  json={"email": f"burst{i}@example.com", "password": PASSWORD})
                if r.status_code == 202:
                    written.append(i)
                i += 1

        writer = threading.Thread(target=burst)
        writer.start()
        copy = tmp / "copy.db"
        done = subprocess.run([binary, "backup", str(copy), "--database-url", live_url], capture_output=True, text=True, timeout=60)
        stop.set()
        writer.join()
        assert done.returncode == 0, done.stderr
        assert "integrity check ok" in done.stdout and copy.exists()
        # The copy was made in a private folder of its own, gone afterwards: nothing else is left beside it.
        assert sorted(p.name for p in tmp.iterdir() if p.name.startswith((".trifactor-backup", "copy.db"))) == ["copy.db"]
        assert len(written) > 0, "no sign-up ran during the backup"

        # A second backup to the same path is refused, and nothing is overwritten.
        size = copy.stat().st_size
        again = subprocess.run([binary, "backup", str(copy), "--database-url", live_url], capture_output=True, text=True, timeout=60)
        assert again.returncode != 0 and "already exists" in again.stderr and copy.stat().st_size == size
        # PostgreSQL is backed up with its own tools: the command says so.
        pg = subprocess.run([binary, "backup", str(tmp / "pg.db"), "--database-url", "postgres://u@127.0.0.1:1/db"],
                            capture_output=True, text=True, timeout=60)
        assert pg.returncode != 0 and "pg_dump" in pg.stderr
        missing = subprocess.run([binary, "backup"], capture_output=True, text=True, timeout=60)
        assert missing.returncode != 0 and "backup PATH" in missing.stderr
    finally:
        daemon.stop()

    # Restore: a server on the copy (with the same key file) signs the user in.
    restored_tmp = tmp
    daemon2, restored = start(binary, restored_tmp, f"sqlite:{copy}")
    try:
        token = restored.sign_in("saved@example.com", PASSWORD)
        me = requests.get(restored.base_url + "/v1/session", headers={"Authorization": f"Bearer {token}"}, timeout=10)
        assert me.status_code == 200
    finally:
        daemon2.close(restored, tmp)
