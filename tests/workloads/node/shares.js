'use strict';
// JavaScript functions that each run a known share of the time (issue 48's
// bench, tests/bench/node.py): shareA, shareB and shareC take turns in slices
// of about 2, 3 and 5 ms, each a real computation until its slice is over.
// The slices' lengths and order are jittered by a fixed PRNG so that no
// sampling rate (499 Hz is 5 samples a 10 ms cycle) beats with a fixed cycle.
// What each function really got is the truth the bench compares with, in ns:
// its CPU time (process.cpuUsage(), getrusage: the calling thread's run time
// is brought up to date at each call) and, for information, its wall time
// (hrtime). They differ when the host is busy: the main thread waits for a
// CPU unevenly across slices (up to 85% of a run with other VMs running here)
// and a CPU-time sampler sees none of that wait. The CPU time is the whole
// process's; V8's helper threads are idle once the three are compiled.
// Written as JSON to argv[3] if given, else to stdout.
// Usage: node shares.js [SECONDS] [TRUTH_FILE]
//
// The three are called from one call site through an array: that site sees
// several targets, so V8's optimizers do not inline them into the driver
// (an inlined function has no frame of its own to sample). None calls another.

const now = () => process.hrtime.bigint();

// Integer hashing (xorshift-multiply).
function shareA(until) {
  let h = 0x9e3779b9 | 0;
  do {
    for (let i = 0; i < 20000; i++) {
      h ^= h << 13;
      h ^= h >>> 17;
      h = Math.imul(h ^ i, 0x5bd1e995);
    }
  } while (now() < until);
  return h;
}

// Floating point: a partial sum of the series for pi, with square roots.
function shareB(until) {
  let s = 0;
  do {
    for (let k = 0; k < 10000; k++) {
      s += (k & 1 ? -4 : 4) / (2 * k + 1) + Math.sqrt(k) * 1e-12;
    }
  } while (now() < until);
  return s;
}

// A sieve of Eratosthenes over a typed array it reuses (no garbage).
const sieve = new Uint8Array(8192);
function shareC(until) {
  let primes = 0;
  do {
    sieve.fill(1);
    for (let p = 2; p * p < sieve.length; p++) {
      if (sieve[p]) {
        for (let m = p * p; m < sieve.length; m += p) sieve[m] = 0;
      }
    }
    for (let p = 2; p < sieve.length; p++) primes += sieve[p];
  } while (now() < until);
  return primes;
}

const fns = [shareA, shareB, shareC];
const nominalMs = [2, 3, 5];    // 20% / 30% / 50%
const spent = [0n, 0n, 0n];
const cpu = [0, 0, 0];
// user + system CPU time of the process so far, in us.
function cpuUs() {
  const u = process.cpuUsage();
  return u.user + u.system;
}

// xorshift32: deterministic jitter, the same every run.
let seed = 2463534242;
function rand() {
  seed ^= seed << 13;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  return (seed >>> 0) / 4294967296;
}

const seconds = Number(process.argv[2] || 5);
const end = now() + BigInt(Math.round(seconds * 1e9));
let sink = 0;
let t = now();
let used = cpuUs();
while (t < end) {
  // A random rotation of the three, each slice 0.5x to 1.5x its nominal length:
  // the mean ratio stays 2:3:5, the measured one is what counts.
  const first = Math.floor(rand() * 3);
  for (let j = 0; j < 3; j++) {
    const i = (first + j) % 3;
    const slice = BigInt(Math.round(nominalMs[i] * (0.5 + rand()) * 1e6));
    sink += Number(fns[i](t + slice)) | 0;
    const after = now();
    const usedAfter = cpuUs();
    spent[i] += after - t;    // consecutive stamps: all the loop's time is counted
    cpu[i] += usedAfter - used;
    t = after;
    used = usedAfter;
  }
}

const names = ['shareA', 'shareB', 'shareC'];
const byName = (xs) => Object.fromEntries(names.map((f, i) => [f, Number(xs[i])]));
const truth = JSON.stringify({
  cpu: byName(cpu.map((us) => us * 1000)),
  wall: byName(spent),
  sink,
});
if (process.argv[3]) {
  require('fs').writeFileSync(process.argv[3], truth + '\n');
} else {
  process.stdout.write(truth + '\n');
}
