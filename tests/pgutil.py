"""A throwaway PostgreSQL server for tests (shared: tests/api/harness.py with
ADAPTMON_TEST_PG=1, tests/store/test_pg_*.py; other suites may import it).

    import pgutil
    pg = pgutil.Server()           # initdb + pg_ctl start on a free loopback port
    url = pg.create_db("t1")       # a fresh database: "postgresql://am@127.0.0.1:PORT/t1"
    ...
    pg.stop()                      # immediate stop, data directory removed

The cluster lives in a temporary directory under /tmp, listens on 127.0.0.1
only, trusts local connections (user "am"), and runs as the user "nobody" when
the tests run as root (PostgreSQL refuses to run as root). fsync is off: these
servers test behaviour, not durability (the HA suite starts its own).
pgutil.bindir() is None when the server binaries are absent (tools/deps.sh
installs postgresql-15); callers then skip with a message.
"""
import atexit
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile


def bindir():
    """The newest /usr/lib/postgresql/N/bin with initdb and pg_ctl, or None."""
    for d in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if os.path.exists(os.path.join(d, "initdb")) and os.path.exists(os.path.join(d, "pg_ctl")):
            return d
    return None


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A PostgreSQL cluster in a temporary directory; stop() removes it (also
    at interpreter exit, so a failing test leaves no server behind)."""

    def __init__(self, bin_dir=None, extra=()):
        self.bindir = bin_dir or bindir()
        if not self.bindir:
            raise RuntimeError("PostgreSQL server binaries not found (tools/deps.sh installs "
                               "postgresql-15)")
        self.dir = tempfile.mkdtemp(prefix="am-pg-")
        self.port = free_port()
        self.as_user = None
        if os.geteuid() == 0:  # initdb refuses root
            nobody = pwd.getpwnam("nobody")
            self.as_user = (nobody.pw_uid, nobody.pw_gid)
            os.chown(self.dir, nobody.pw_uid, nobody.pw_gid)
        os.chmod(self.dir, 0o700)
        self.data = os.path.join(self.dir, "data")
        self.stopped = False
        self.run("initdb", "-D", self.data, "-A", "trust", "-U", "am", "-E", "UTF8",
                 "--locale=C", "--no-sync")
        self.opts = "-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off " \
            "-c max_connections=200" % (self.port, self.dir)
        for e in extra:
            self.opts += " -c " + e
        self.start()
        atexit.register(self.stop)

    def start(self):
        """Starts the server (again, after halt(): same port, same data)."""
        self.run("pg_ctl", "-D", self.data, "-l", os.path.join(self.dir, "log"), "-w", "-o",
                 self.opts, "start")

    def halt(self):
        """Stops the server at once (as a crash would), keeping its data for start()."""
        self.run("pg_ctl", "-D", self.data, "-m", "immediate", "-w", "stop")

    def run(self, prog, *args):
        def drop():
            os.setgid(self.as_user[1])
            os.setuid(self.as_user[0])
        subprocess.run([os.path.join(self.bindir, prog)] + list(args), check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=self.dir,
                       preexec_fn=drop if self.as_user else None)

    def psql(self, sql, db="postgres", stop=True):
        """Runs sql with psql (unaligned, tuples only): (returncode, stdout, stderr)."""
        p = subprocess.run(
            [os.path.join(self.bindir, "psql"), "-X", "-q", "-At", "-h", "127.0.0.1", "-p",
             str(self.port), "-U", "am", "-d", db, "-v",
             "ON_ERROR_STOP=%d" % (1 if stop else 0)],
            input=sql, capture_output=True, text=True)
        return p.returncode, p.stdout, p.stderr

    def query(self, sql, db="postgres"):
        """sql's rows as lists of strings (psql -At, '|' separated); raises on error."""
        rc, out, err = self.psql(sql, db)
        if rc != 0:
            raise RuntimeError("psql: " + err.strip())
        return [line.split("|") for line in out.splitlines() if line]

    def url(self, db="postgres"):
        return "postgresql://am@127.0.0.1:%d/%s" % (self.port, db)

    def create_db(self, name):
        """A fresh empty database called name (dropped first if it exists); its URL."""
        self.query('DROP DATABASE IF EXISTS "%s" WITH (FORCE)' % name)
        self.query('CREATE DATABASE "%s"' % name)
        return self.url(name)

    def stop(self):
        if self.stopped:
            return
        self.stopped = True
        try:
            self.run("pg_ctl", "-D", self.data, "-m", "immediate", "-w", "stop")
        except (subprocess.CalledProcessError, OSError):
            pass
        shutil.rmtree(self.dir, ignore_errors=True)
