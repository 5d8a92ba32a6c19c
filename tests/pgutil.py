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

Server(standby=True) adds one streaming standby (cluster_name "s1", a
pg_basebackup of the primary) named in the primary's
synchronous_standby_names, and waits until it streams as 'sync': every commit
then waits for its second copy, so adaptmon runs with --pg-require-sync on as
users run it.

A cluster shared by many test processes (tests/run.sh's PostgreSQL pass):

    python3 tests/pgutil.py start STATEFILE   # primary + synchronous standby;
                                              # prints PORT, writes it and the
                                              # directory to STATEFILE
    python3 tests/pgutil.py stop STATEFILE    # immediate stop, directory removed

and in a test process Attached(PORT) (what shared() returns when
ADAPTMON_TEST_PG_SHARED=PORT is set) has the same psql/query/url/create_db as a
Server, for databases on that cluster.
"""
import atexit
import glob
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import time


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


class Attached:
    """A PostgreSQL server on 127.0.0.1:port that someone else started and
    stops (user "am", trusted): psql, query, url, create_db."""

    def __init__(self, port, bin_dir=None):
        self.bindir = bin_dir or bindir()
        self.port = int(port)

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

    def drop_db(self, name):
        """Drops database name (its connections are ended first); errors ignored:
        a test's clean-up must not hide its result."""
        self.psql('DROP DATABASE IF EXISTS "%s" WITH (FORCE)' % name, stop=False)


def shared():
    """The cluster of ADAPTMON_TEST_PG_SHARED (a port; tests/run.sh starts it
    with `pgutil.py start`), or None when the variable is unset."""
    port = os.environ.get("ADAPTMON_TEST_PG_SHARED", "")
    return Attached(port) if port else None


class Server(Attached):
    """A PostgreSQL cluster in a temporary directory; stop() removes it (also
    at interpreter exit, so a failing test leaves no server behind)."""

    def __init__(self, bin_dir=None, extra=(), standby=False, keep=False):
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
        self.standby = None
        if standby:
            self._conf(self.data, "synchronous_standby_names = 's1'")
        self.start()
        if not keep:
            atexit.register(self.stop)
        if standby:
            try:
                self._start_standby()
            except BaseException:
                self.stop()
                raise

    def _conf(self, data, line):
        """Appends line to data's postgresql.conf (the file stays its owner's)."""
        with open(os.path.join(data, "postgresql.conf"), "a") as f:
            f.write(line + "\n")

    def _start_standby(self, timeout=30):
        """A pg_basebackup of the primary started as the standby "s1", then
        waits until the primary reports it streaming as 'sync' (before that
        a commit would not wait for it, and adaptmon's --pg-require-sync
        probe would refuse writes)."""
        self.standby = os.path.join(self.dir, "standby")
        self.standby_port = free_port()
        self.run("pg_basebackup", "-h", "127.0.0.1", "-p", str(self.port), "-U", "am", "-D",
                 self.standby, "-R", "-X", "stream", "--no-sync")
        self._conf(self.standby, "cluster_name = 's1'")
        self._conf(self.standby, "wal_receiver_status_interval = 1s")
        opts = "-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200" \
            % (self.standby_port, self.dir)
        self.run("pg_ctl", "-D", self.standby, "-l", os.path.join(self.dir, "standby.log"), "-w",
                 "-o", opts, "start")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            rows = self.query("SELECT state, sync_state FROM pg_stat_replication "
                              "WHERE application_name = 's1'")
            if rows == [["streaming", "sync"]]:
                return
            time.sleep(0.1)
        raise RuntimeError("the standby s1 did not stream as synchronous within %d s" % timeout)

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

    def stop(self):
        if self.stopped:
            return
        self.stopped = True
        stop_dir(self.dir, self.bindir, self.as_user)


def stop_dir(path, bin_dir, as_user):
    """Stops at once the primary ("data") and the standby ("standby") of a
    Server's directory, when running, and removes the directory."""
    def drop():
        os.setgid(as_user[1])
        os.setuid(as_user[0])
    for name in ("standby", "data"):
        data = os.path.join(path, name)
        if not os.path.exists(os.path.join(data, "postmaster.pid")):
            continue
        subprocess.run([os.path.join(bin_dir, "pg_ctl"), "-D", data, "-m", "immediate", "-w",
                        "stop"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       cwd=path, preexec_fn=drop if as_user else None)
    shutil.rmtree(path, ignore_errors=True)


def main(argv):
    """`start STATEFILE`: a primary with one synchronous standby that outlives
    this process (tests/run.sh's PostgreSQL pass); prints its port and writes
    "PORT DIR" to STATEFILE. `stop STATEFILE`: stops it and removes it."""
    if len(argv) != 3 or argv[1] not in ("start", "stop"):
        sys.stderr.write("usage: pgutil.py start|stop STATEFILE\n")
        return 2
    if argv[1] == "start":
        srv = Server(standby=True, keep=True)
        with open(argv[2], "w") as f:
            f.write("%d %s\n" % (srv.port, srv.dir))
        print(srv.port)
        return 0
    try:
        with open(argv[2]) as f:
            _port, path = f.read().split()
    except (OSError, ValueError):
        return 0  # never started: nothing to stop
    as_user = None
    if os.geteuid() == 0:
        nobody = pwd.getpwnam("nobody")
        as_user = (nobody.pw_uid, nobody.pw_gid)
    stop_dir(path, bindir(), as_user)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
