"""Shared pieces of the Python scenario programs (compat/README.md, "Scenarios").

Each program is run as `<program> <scenario> <bootstrap> <prefix>` and prints one JSON object on stdout:
{"result": <observable outcome>, "violations": [<Kafka semantics the broker broke>]}.
"""
import hashlib
import json
import sys
import time
import traceback

WAIT_S = 15.0
BIG = 1 << 20


def pattern(n):
    """The suite's deterministic payload: byte i is i mod 251."""
    return bytes(i % 251 for i in range(n))


def repr_bytes(b):
    """null stays null; short printable ASCII stays text; anything else is '<len> bytes sha256:<16 hex>'."""
    if b is None:
        return None
    if isinstance(b, str):
        b = b.encode()
    if len(b) <= 64 and all(0x20 <= c < 0x7F for c in b):
        return b.decode('ascii')
    return '%d bytes sha256:%s' % (len(b), hashlib.sha256(b).hexdigest()[:16])


# The five records of produce-consume: (key, value, headers), all to partition 0.
STANDARD = [
    (b'k0', b'v0', [('h1', b'a')]),
    (None, b'v1', []),
    (b'k2', None, []),
    (b'k3', b'', [('x', b'1'), ('x', b'2')]),
    (b'big', pattern(BIG), [('size', str(BIG).encode())]),
]


def standard_repr(i):
    k, v, h = STANDARD[i]
    return {'p': 0, 'o': i, 'k': repr_bytes(k), 'v': repr_bytes(v), 'h': [[hk, repr_bytes(hv)] for hk, hv in h]}


def wait_for(cond, timeout=WAIT_S, interval=0.1):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if cond():
                return True
        except Exception:  # a probe that throws is simply "not yet"
            pass
        time.sleep(interval)
    try:
        return bool(cond())
    except Exception:
        return False


class Run:
    """Collects the result and violations of one scenario and prints them."""

    def __init__(self, prefix, err_name):
        self.prefix = prefix
        self.result = {}
        self.violations = []
        self._err_name = err_name
        self._closers = []

    def check(self, ok, what):
        if not ok:
            self.violations.append(what)

    def closing(self, obj, close):
        self._closers.insert(0, lambda: close(obj))
        return obj

    def attempt(self, fn):
        """Runs a step: its value, 'ok' when it has none, or {'error': NAME} when it raised."""
        try:
            v = fn()
            return 'ok' if v is None else v
        except Exception as e:  # the error is the observable outcome
            return {'error': self._err_name(e)}

    def mine(self, names):
        return sorted(n for n in names if n.startswith(self.prefix))

    def finish(self, fn):
        try:
            fn()
        except Exception as e:
            traceback.print_exc()
            self.violations.append('aborted: %s: %s' % (self._err_name(e), str(e).split('\n')[0]))
        for close in self._closers:
            try:
                close()
            except Exception:
                pass
        sys.stdout.write(json.dumps({'result': self.result, 'violations': self.violations}) + '\n')
        sys.stdout.flush()


def main(scenarios, make_run):
    if len(sys.argv) != 4:
        sys.stderr.write('usage: %s <scenario> <bootstrap> <prefix>\n' % sys.argv[0])
        sys.exit(2)
    scenario, bootstrap, prefix = sys.argv[1:]
    fn = scenarios.get(scenario)
    if fn is None:
        sys.stderr.write('unknown scenario %s\n' % scenario)
        sys.exit(2)
    run = make_run(bootstrap, prefix)
    run.finish(lambda: fn(run))


# The compaction scenario (compat/README.md; the Java program's Compaction.java says why these numbers):
# batches of one record with a 200,000-byte 'pad' header, five to a 1 MiB segment; keys k0..k3 over six
# rounds, k1 deleted in round 3 and written again, k3 deleted in the last; six 'roll' records after.
COMPACTION_PAD = 200000
COMPACTION_TOPIC_CONFIGS = {
    'cleanup.policy': 'compact',
    'delete.retention.ms': '86400000',
    'min.cleanable.dirty.ratio': '0.01',
    'min.compaction.lag.ms': '0',
    'segment.bytes': '1048576',
    'segment.ms': '604800000',
}
# Bounds of the wait for the cleaner: its first removal, then a surviving set unchanged this long.
COMPACTION_FIRST_SHRINK_S = 45.0
COMPACTION_STABLE_S = 5.0


def compaction_workload():
    """(key, value) in produce order; value None for a tombstone."""
    w = []
    for rnd in range(6):
        for k in range(4):
            tombstone = (k == 1 and rnd == 3) or (k == 3 and rnd == 5)
            w.append(('k%d' % k, None if tombstone else 'k%d-r%d' % (k, rnd)))
    w.extend(('roll', 'roll-%d' % i) for i in range(6))
    return w


def compaction_check(survivors, work):
    """Kafka's guarantees for a compacted log, whatever the segment boundaries: a survivor
    ('<offset> <key> <value>') is what was produced at its offset, and the latest record of every key
    survives (tombstones too, within delete.retention.ms)."""
    def line(o):
        k, v = work[o]
        return '%d %s %s' % (o, k, 'null' if v is None else v)
    out = []
    for s in survivors:
        o = int(s.split(' ', 1)[0])
        if not (o < len(work)) or s != line(o):
            out.append('offset %d holds %s, not what was produced there' % (o, s.split(' ', 1)[1]))
    latest = {}
    for i, (k, _) in enumerate(work):
        latest[k] = i
    for k, o in latest.items():
        if line(o) not in survivors:
            out.append('the latest record of %s (offset %d) is gone' % (k, o))
    return out
