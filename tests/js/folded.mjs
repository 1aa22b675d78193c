// SPDX-License-Identifier: GPL-2.0
// Decodes a gzip'ed pprof file with pprof-format (an independent decoder) and
// prints it as profile's folded output would be: "comm;root..leaf count",
// identical stacks merged, sorted by count then text. With --summary, prints
// a JSON summary instead (sample types, period, totals, mappings, labels).
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { Profile } from 'pprof-format';

const [file, mode] = process.argv.slice(2);
const profile = Profile.decode(gunzipSync(readFileSync(file)));
const str = (i) => profile.stringTable.strings[Number(i)];
const functions = new Map(profile.function.map((f) => [Number(f.id), str(f.name)]));
const locations = new Map(profile.location.map((l) => [Number(l.id), l]));

const merged = new Map();
let total = 0n, cpu = 0n;
for (const s of profile.sample) {
  const comm = s.label.find((l) => str(l.key) === 'comm');
  // A location's last line is the function holding the code (the ones before
  // are inlined into it); a location no symbol named has no line.
  const names = s.locationId.map((id) => {
    const loc = locations.get(Number(id));
    const last = loc.line[loc.line.length - 1];
    return last ? functions.get(Number(last.functionId)) : '[unknown]';
  });
  const line = [comm ? str(comm.str) : '?', ...names.reverse()].join(';');
  merged.set(line, (merged.get(line) ?? 0n) + BigInt(s.value[0]));
  total += BigInt(s.value[0]);
  cpu += BigInt(s.value[1]);
}

if (mode === '--summary') {
  console.log(JSON.stringify({
    sampleTypes: profile.sampleType.map((t) => `${str(t.type)}/${str(t.unit)}`),
    periodType: `${str(profile.periodType.type)}/${str(profile.periodType.unit)}`,
    period: Number(profile.period),
    samples: Number(total),
    cpuNanoseconds: Number(cpu),
    mappings: profile.mapping.map((m) => str(m.filename)),
    buildIds: profile.mapping.filter((m) => Number(m.buildId)).length,
    labels: [...new Set(profile.sample.flatMap((s) => s.label.map((l) => str(l.key))))].sort(),
  }));
} else {
  const lines = [...merged].sort((a, b) =>
    a[1] !== b[1] ? (a[1] < b[1] ? -1 : 1) : (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  for (const [text, count] of lines) console.log(`${text} ${count}`);
}
