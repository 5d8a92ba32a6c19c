"""A PostgreSQL 15 cluster on loopback for the fault suite (DESIGN-postgres.md §6).

One primary and one or two streaming standbys, each a postmaster of its own on
a free port, run as the user "nobody" (PostgreSQL refuses root), data under
one /tmp directory. Every node has `cluster_name` = its name, which is also
its walreceiver's application_name, and every node carries the same
`synchronous_standby_names` (e.g. 'ANY 1 (n0, n1, n2)'), so whichever node is
promoted enforces the quorum at once (the design's §2.10 rule).

Faults and repairs, all by PID or by path, never by a process name:
  kill(node)            SIGKILL to the postmaster and every child of it
  delete_data(node)     kill, then rm -rf its data directory
  promote(node)         pg_ctl promote, then re-point the other standbys
  most_advanced()       the live standby with the highest received LSN
  fill_disk(node)       a standby made with wal_tmpfs has pg_wal on a small
                        tmpfs (mounted here, root only); fill it with a file
  cut(node) / heal()    a network cut of one node: iptables DROP rules on the
                        loopback interface for its port, both directions
                        (chosen over `ip netns`: every node stays on
                        127.0.0.1, libpq multi-host strings need no routing,
                        and a DROP leaves open TCP connections hanging, as a
                        real partition does). Rules live in a chain of their
                        own (AMHA_<pid>), removed on exit.
  cut_addr(addr)        a cut of whatever reaches the postmasters through
                        127.0.0.2 or 127.0.0.3 (every node listens on both
                        besides 127.0.0.1): one adaptmon node (its --db
                        names that address), or the walreceivers
                        (repl_host), while the other clients go on
  rejoin(node, primary) pg_rewind the old primary against the new one, start
                        it as a standby, and check that it *streams* (its row
                        in the new primary's pg_stat_replication reaches
                        state 'streaming' with sync_state quorum/sync/
                        potential-with-flush); when rewind fails or the node
                        never streams it is rebuilt with pg_basebackup — the
                        "rejoined primary that never streams" of the design
                        §3, detected instead of assumed.

Everything is undone on close(), on interpreter exit and on SIGTERM/SIGINT:
postmasters stopped by PID, tmpfs unmounted, iptables chain dropped,
directories removed. fsync is off by default: the faults here kill processes
and delete directories, none crashes the kernel, so the page cache survives
every fault and fsync would only slow the shared machine down.
"""
import atexit
import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time

PG_BIN = None
for _d in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
    if os.path.exists(os.path.join(_d, "pg_ctl")):
        PG_BIN = _d
        break

_LIVE = []  # clusters to tear down on exit or signal (this process only)


def free_port():
    """A TCP port free on 127.0.0.1 at the time of the call."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def available():
    """None when the harness can run here, else the reason it cannot."""
    if PG_BIN is None:
        return "PostgreSQL server binaries absent (tools/deps.sh installs postgresql-15)"
    if os.geteuid() != 0:
        return "needs root (tmpfs mounts, iptables, running PostgreSQL as nobody)"
    if shutil.which("iptables") is None:
        return "iptables absent (tools/deps.sh installs it)"
    return None


class Node:
    """One postmaster: name, port, data directory, optional tmpfs for pg_wal."""

    def __init__(self, cluster, name):
        self.cluster = cluster
        self.name = name
        self.port = free_port()
        self.data = os.path.join(cluster.dir, name)
        self.log = os.path.join(cluster.dir, name + ".log")
        self.wal_mount = None  # tmpfs mount point holding pg_wal, when made so
        self.standby = False

    def dsn(self, db="postgres"):
        return "host=127.0.0.1 port=%d user=am dbname=%s" % (self.port, db)

    def pid(self):
        """The postmaster's PID from postmaster.pid, or None."""
        try:
            with open(os.path.join(self.data, "postmaster.pid")) as f:
                pid = int(f.readline())
        except (OSError, ValueError):
            return None
        try:
            os.kill(pid, 0)
        except OSError:
            return None
        return pid

    def __repr__(self):
        return "%s:%d" % (self.name, self.port)


def _children(pid):
    """PIDs whose parent is pid (from /proc)."""
    out = []
    for st in glob.glob("/proc/[0-9]*/stat"):
        try:
            with open(st) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(st.split("/")[2]))
    return out


class Cluster:
    """A primary (n0) and `standbys` streaming standbys (n1, n2).

    sync: the synchronous_standby_names rule over all node names ('ANY 1',
    'FIRST 1') or '' for asynchronous replication. wal_tmpfs: names of
    standbys whose pg_wal goes on a tmpfs of tmpfs_mb MiB (for fill_disk).
    extra: more postgresql.conf lines for every node."""

    def __init__(self, standbys=2, sync="ANY 1", wal_tmpfs=(), tmpfs_mb=128, extra=(),
                 fsync=False, repl_host="127.0.0.1"):
        why = available()
        if why:
            raise RuntimeError(why)
        nobody = pwd.getpwnam("nobody")
        self.uid, self.gid = nobody.pw_uid, nobody.pw_gid
        self.dir = tempfile.mkdtemp(prefix="am-ha-")
        os.chown(self.dir, self.uid, self.gid)
        os.chmod(self.dir, 0o700)
        self.chain = "AMHA_%d" % os.getpid()
        self.repl_host = repl_host  # the address standbys stream from (cut_addr)
        self.cuts = []
        self.closed = False
        self.events = []  # what the harness saw and did, for the run's report
        self.t0 = time.time()
        _LIVE.append(self)
        self.nodes = [Node(self, "n%d" % i) for i in range(standbys + 1)]
        names = ", ".join(n.name for n in self.nodes)
        self.sync_names = "%s (%s)" % (sync, names) if sync else ""
        self.conf = [
            # 127.0.0.2 and .3 are other doors to the same postmasters, so
            # one kind of client (an adaptmon node, the walreceivers) can be
            # cut by address while the others go on (cut_addr)
            "listen_addresses = '127.0.0.1,127.0.0.2,127.0.0.3'",
            "unix_socket_directories = '%s'" % self.dir,
            "wal_level = replica", "max_wal_senders = 10", "max_replication_slots = 10",
            "hot_standby = on", "wal_log_hints = on", "wal_keep_size = '64MB'",
            "wal_receiver_status_interval = 1s", "wal_sender_timeout = 5s",
            "wal_receiver_timeout = 5s", "wal_retrieve_retry_interval = 500ms",
            "fsync = %s" % ("on" if fsync else "off"),
            "synchronous_standby_names = '%s'" % self.sync_names,
            "max_connections = 60", "shared_buffers = 32MB", "min_wal_size = 32MB",
            "max_wal_size = 64MB",
            "log_min_messages = warning",
            # A client cut off by the network leaves its backend idle in a
            # transaction, holding row locks (an adaptmon node's session
            # rows), until the server notices: with the kernel's defaults
            # that is 2 h of keepalive idle time. These make it ~3 s, as a
            # deployment must (tests/RELIABILITY.md, node_cut).
            "tcp_keepalives_idle = 1", "tcp_keepalives_interval = 1",
            "tcp_keepalives_count = 2", "tcp_user_timeout = 3000",
        ] + list(extra)
        self.wal_tmpfs = set(wal_tmpfs)
        self.tmpfs_mb = tmpfs_mb
        self.primary = self.nodes[0]
        self._init_primary()
        for n in self.nodes[1:]:
            self.build_standby(n, self.primary)
        for n in self.nodes[1:]:
            self.wait_streaming(n, self.primary, timeout=30)

    # ---- running commands ------------------------------------------------

    def _drop(self):
        os.setgid(self.gid)
        os.setuid(self.uid)

    def run(self, prog, *args, check=True, timeout=120):
        """Runs a PostgreSQL program as nobody; returns the CompletedProcess."""
        p = subprocess.run([os.path.join(PG_BIN, prog)] + list(args), cwd=self.dir,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           preexec_fn=self._drop, timeout=timeout)
        if check and p.returncode != 0:
            raise RuntimeError("%s %s: %s" % (prog, " ".join(args), p.stderr.strip()))
        return p

    def psql(self, node, sql, timeout=10):
        """Runs sql on node (tuples only, unaligned, '|' separated); the
        output text, or None when the node cannot be reached or the SQL
        fails within timeout seconds."""
        try:
            p = subprocess.run(
                [os.path.join(PG_BIN, "psql"), "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1",
                 "-d", node.dsn() + " connect_timeout=3", "-c", sql],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return None
        return p.stdout if p.returncode == 0 else None

    def note(self, text):
        """Records an event (with the time) for the run's report."""
        self.events.append("+%.2f s %s" % (time.time() - self.t0, text))

    def log_tail(self, node, nbytes=2000):
        try:
            with open(node.log, errors="replace") as f:
                return f.read()[-nbytes:]
        except OSError:
            return ""

    # ---- building nodes --------------------------------------------------

    def _write_conf(self, node):
        with open(os.path.join(node.data, "postgresql.conf"), "a") as f:
            f.write("\n# tests/ha/pgcluster.py\n" + "\n".join(self.conf) + "\n")

    def _init_primary(self):
        n = self.primary
        self.run("initdb", "-D", n.data, "-A", "trust", "-U", "am", "-E", "UTF8",
                 "--locale=C", "--no-sync")
        self._write_conf(n)
        self.start(n)

    def _make_wal_mount(self, node):
        """Mounts a fresh tmpfs for node's pg_wal; returns the pg_wal path."""
        mnt = os.path.join(self.dir, node.name + "-wal")
        if node.wal_mount is None:
            os.makedirs(mnt, exist_ok=True)
            subprocess.run(["mount", "-t", "tmpfs", "-o",
                            "size=%dm,uid=%d,gid=%d,mode=0700" % (self.tmpfs_mb, self.uid,
                                                                  self.gid),
                            "tmpfs", mnt], check=True)
            node.wal_mount = mnt
        for f in os.listdir(mnt):
            p = os.path.join(mnt, f)
            shutil.rmtree(p) if os.path.isdir(p) else os.unlink(p)
        return os.path.join(mnt, "pg_wal")

    def build_standby(self, node, source):
        """(Re)builds node from source with pg_basebackup -R and starts it."""
        if node.pid():
            self.kill(node)
        shutil.rmtree(node.data, ignore_errors=True)
        args = ["-h", "127.0.0.1", "-p", str(source.port), "-U", "am", "-D", node.data,
                "-R", "-X", "stream", "-c", "fast", "--no-sync"]
        if node.name in self.wal_tmpfs:
            args += ["--waldir", self._make_wal_mount(node)]
        self.run("pg_basebackup", *args)
        node.standby = True
        self._point(node, source, reload=False)
        self.start(node)

    def _point(self, node, primary, reload=True):
        """Sets node's primary_conninfo to primary (postgresql.auto.conf)."""
        ci = "host=%s port=%d user=am application_name=%s" % (self.repl_host, primary.port,
                                                              node.name)
        auto = os.path.join(node.data, "postgresql.auto.conf")
        lines = []
        if os.path.exists(auto):
            with open(auto) as f:
                lines = [ln for ln in f if not ln.startswith("primary_conninfo")]
        lines.append("primary_conninfo = '%s'\n" % ci)
        with open(auto, "w") as f:
            f.writelines(lines)
        os.chown(auto, self.uid, self.gid)
        if reload and node.pid():
            os.kill(node.pid(), signal.SIGHUP)

    # ---- life cycle ------------------------------------------------------

    def start(self, node):
        self.run("pg_ctl", "-D", node.data, "-l", node.log, "-w", "-t", "60", "-o",
                 "-p %d -c cluster_name=%s" % (node.port, node.name), "start")

    def stop(self, node):
        """A clean-ish stop (immediate mode: no checkpoint wait)."""
        if node.pid():
            self.run("pg_ctl", "-D", node.data, "-m", "immediate", "-w", "stop", check=False)

    def kill(self, node):
        """SIGKILL to node's postmaster and all its children at once."""
        pid = node.pid()
        if pid is None:
            return False
        for p in [pid] + _children(pid):
            try:
                os.kill(p, signal.SIGKILL)
            except OSError:
                pass
        deadline = time.time() + 10
        while time.time() < deadline and (_alive(pid) or _children(pid)):
            time.sleep(0.05)
        # A killed postmaster is a zombie until init reaps it, and PostgreSQL
        # takes a lock file whose PID still answers kill(pid, 0) for a live
        # postmaster ("Is another postmaster (PID …) running"), which fails
        # pg_rewind and the restart. The process is dead: its lock files go.
        for f in (os.path.join(node.data, "postmaster.pid"),
                  os.path.join(self.dir, ".s.PGSQL.%d.lock" % node.port),
                  os.path.join(self.dir, ".s.PGSQL.%d" % node.port)):
            try:
                os.unlink(f)
            except OSError:
                pass
        return True

    def delete_data(self, node):
        """kill -9, then the data directory (and its pg_wal tmpfs content) gone."""
        self.kill(node)
        shutil.rmtree(node.data, ignore_errors=True)
        if node.wal_mount:
            self._make_wal_mount(node)

    def is_recovery(self, node):
        out = self.psql(node, "SELECT pg_is_in_recovery()")
        return None if out is None else out.strip() == "t"

    def received_lsn(self, node):
        """The standby's last received (else replayed) WAL position as an int."""
        out = self.psql(node, "SELECT coalesce(pg_last_wal_receive_lsn(), "
                              "pg_last_wal_replay_lsn()) - '0/0'")
        return int(out.strip()) if out and out.strip() else -1

    def most_advanced(self, exclude=()):
        """The live standby with the highest received LSN (the one a manager
        must promote: it holds every commit the quorum acknowledged)."""
        best = None
        for n in self.nodes:
            if n is self.primary or n in exclude or not n.pid():
                continue
            lsn = self.received_lsn(n)
            if best is None or lsn > best[0]:
                best = (lsn, n)
        return best[1] if best else None

    def promote(self, node):
        """Promotes node; the other live standbys follow it. Returns the
        seconds promotion took (pg_ctl promote -w)."""
        t0 = time.time()
        old = self.primary
        self.run("pg_ctl", "-D", node.data, "-w", "-t", "60", "promote")
        node.standby = False
        self.primary = node
        for n in self.nodes:
            if n is not node and n is not old and n.pid():
                self._point(n, node)
        return time.time() - t0

    def wait_streaming(self, node, primary, timeout=20, steady=2.0):
        """True once primary's pg_stat_replication has shown node streaming,
        with a sync_state that counts for the rule (quorum, sync, potential;
        async when the cluster is asynchronous), without a break for steady
        seconds; False after timeout seconds. Steady, because a standby whose
        timeline forked before its own WAL end connects, shows 'streaming'
        for a moment, is told "end of WAL reached" and loops (the design's
        rejoined primary that never streams)."""
        want = ("quorum", "sync", "potential") if self.sync_names else ("async",)
        deadline = time.time() + timeout
        since = None
        while time.time() < deadline:
            st = self.replication(primary).get(node.name)
            if st and st[0] == "streaming" and st[1] in want:
                since = since or time.time()
                if time.time() - since >= steady:
                    return True
            else:
                since = None
            time.sleep(0.2)
        return False

    def replication(self, primary):
        """{application_name: (state, sync_state)} from primary."""
        out = self.psql(primary, "SELECT application_name, state, sync_state "
                                 "FROM pg_stat_replication")
        res = {}
        for ln in (out or "").splitlines():
            a, s, y = ln.split("|")
            res[a] = (s, y)
        return res

    def rejoin(self, node, timeout=20, checkpoint_first=True):
        """Brings the old primary node back as a standby of the current
        primary: pg_rewind, then start; rebuilt with pg_basebackup when the
        rewind fails or the node does not stream within timeout. Returns
        'rewind' or 'rebuild' (what brought it back streaming).

        checkpoint_first runs CHECKPOINT on the new primary before the
        rewind. pg_rewind reads the source's timeline from its control
        file, which a promotion updates only at its first checkpoint; before
        that it says "source and target cluster are on the same timeline /
        no rewind required", and its crash-recovery step has just written
        checkpoint records past the fork, so the node loops on "new
        timeline forked off current database system timeline before current
        recovery point" and never streams (the design's §3 fault, reproduced
        here by checkpoint_first=False; the streaming check catches it)."""
        self.kill(node)
        if checkpoint_first:
            self.psql(self.primary, "CHECKPOINT", timeout=60)
        how = "rewind"
        if not os.path.exists(os.path.join(node.data, "PG_VERSION")):
            how = "rebuild"
        else:
            p = self.run("pg_rewind", "-D", node.data, "--source-server",
                         self.primary.dsn(), "--no-sync", check=False)
            if p.returncode != 0:
                self.note("pg_rewind of %s failed: %s" % (node.name, p.stderr.strip()[-300:]))
                how = "rebuild"
        if how == "rewind":
            open(os.path.join(node.data, "standby.signal"), "w").close()
            os.chown(os.path.join(node.data, "standby.signal"), self.uid, self.gid)
            self._point(node, self.primary, reload=False)
            node.standby = True
            try:
                self.start(node)
            except RuntimeError:
                how = "rebuild"
            if how == "rewind" and not self.wait_streaming(node, self.primary, timeout):
                self.note("%s rewound but not streaming after %ds: %s" % (
                    node.name, timeout, self.replication(self.primary).get(node.name)))
                how = "rebuild"
        if how == "rebuild":
            self.build_standby(node, self.primary)
            if not self.wait_streaming(node, self.primary, timeout * 2):
                raise RuntimeError("%s does not stream even after a rebuild" % node.name)
        return how

    # ---- disk and network faults -----------------------------------------

    def fill_disk(self, node):
        """Fills the tmpfs under node's pg_wal (node must be in wal_tmpfs)."""
        assert node.wal_mount, "%s has no pg_wal tmpfs" % node.name
        subprocess.run(["dd", "if=/dev/zero", "of=" + os.path.join(node.wal_mount, "fill"),
                        "bs=1M", "count=%d" % (self.tmpfs_mb * 2)],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def free_disk(self, node):
        try:
            os.unlink(os.path.join(node.wal_mount, "fill"))
        except OSError:
            pass

    def _ipt(self, *args, check=True):
        return subprocess.run(["iptables", "-w"] + list(args), stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, check=check)

    def cut(self, node):
        """Drops every loopback packet to or from node's port: clients,
        standbys and the node's own walreceiver (which connects *from* an
        ephemeral port *to* its primary's port, so a standby is cut by
        cutting it and its primary is cut by its own rule)."""
        if not self.cuts:
            self._ipt("-N", self.chain, check=False)
            self._ipt("-I", "INPUT", "-i", "lo", "-j", self.chain)
        for d in ("--dport", "--sport"):
            self._ipt("-A", self.chain, "-p", "tcp", d, str(node.port), "-j", "DROP")
        self.cuts.append(node)

    def cut_addr(self, addr):
        """Drops every loopback packet to or from addr (127.0.0.2 or .3):
        the clients that reach the postmasters through that address lose
        them, the others (127.0.0.1) do not."""
        if not self.cuts:
            self._ipt("-N", self.chain, check=False)
            self._ipt("-I", "INPUT", "-i", "lo", "-j", self.chain)
        for d in ("-d", "-s"):
            self._ipt("-A", self.chain, "-p", "tcp", d, addr, "-j", "DROP")
        self.cuts.append(addr)

    def heal(self):
        """Removes every cut."""
        if self.cuts:
            self._ipt("-D", "INPUT", "-i", "lo", "-j", self.chain, check=False)
            self._ipt("-F", self.chain, check=False)
            self._ipt("-X", self.chain, check=False)
        self.cuts = []

    # ---- teardown --------------------------------------------------------

    def close(self):
        if self.closed:
            return
        self.closed = True
        self.heal()
        for n in self.nodes:
            self.kill(n)
        for n in self.nodes:
            if n.wal_mount:
                subprocess.run(["umount", "-l", n.wal_mount], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
        shutil.rmtree(self.dir, ignore_errors=True)
        if self in _LIVE:
            _LIVE.remove(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _alive(pid):
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    try:  # a zombie is not alive
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def close_all():
    for c in list(_LIVE):
        try:
            c.close()
        except Exception:  # noqa: BLE001 (teardown goes on for the other clusters)
            pass


def _on_signal(signum, _frame):
    close_all()
    raise SystemExit(128 + signum)


atexit.register(close_all)
for _s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(_s, _on_signal)
