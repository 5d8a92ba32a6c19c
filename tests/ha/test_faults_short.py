#!/usr/bin/env python3
"""The fault plan's short variant in `make test` (issue 28 item 6: "make
test-ha, in CI if it fits the time limit, else in make test with a short
variant"): tests/ha/faults.py --short, i.e. primary_kill (kill -9 of the
primary under load from two adaptmon nodes: 0 acknowledged segments lost,
writes back within the limit), standby_kill (no write gap) and control (an
asynchronous cluster: the checker must report losses). About 2 minutes;
`make test-ha` runs the whole plan.

Output and exit status are faults.py's ("N passed, N failed"; skipped with
"0 passed, 0 failed" without PostgreSQL, psycopg2 or root).
"""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

if __name__ == "__main__":
    sys.exit(subprocess.run([sys.executable, os.path.join(HERE, "faults.py"), "--short"]).returncode)
