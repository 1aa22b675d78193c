// SPDX-License-Identifier: GPL-2.0
// Decodes a gzip'ed pprof file with pprof-format (an independent decoder) and
// prints its mappings and locations, one a line, for the inline tests:
//   mapping ID FILE build=HEX|- start=0x.. limit=0x.. off=0x.. fn=0|1 file=0|1 line=0|1 inline=0|1
//   loc ID 0xADDR MAPPING_ID leaf=0|1 LINES<TAB>func@file:line(start_line)<TAB>...
// (tabs: names have spaces, as "[Missed User Stack]" and C++'s do)
// leaf=1: the location is the first of every sample that has it. Lines are
// innermost first, as in the file.
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { Profile } from 'pprof-format';

const profile = Profile.decode(gunzipSync(readFileSync(process.argv[2])));
const str = (i) => profile.stringTable.strings[Number(i)];
const hex = (n) => '0x' + BigInt(n).toString(16);
const functions = new Map(profile.function.map((f) => [Number(f.id), f]));
const leaf = new Map();
for (const s of profile.sample)
  s.locationId.forEach((id, i) => {
    const k = Number(id);
    leaf.set(k, (leaf.get(k) ?? true) && i === 0);
  });
for (const m of profile.mapping)
  console.log(`mapping ${m.id} ${str(m.filename)} build=${str(m.buildId) || "-"} start=${hex(m.memoryStart)} ` +
    `limit=${hex(m.memoryLimit)} off=${hex(m.fileOffset)} fn=${+!!m.hasFunctions} ` +
    `file=${+!!m.hasFilenames} line=${+!!m.hasLineNumbers} inline=${+!!m.hasInlineFrames}`);
for (const l of profile.location) {
  const lines = l.line.map((ln) => {
    const f = functions.get(Number(ln.functionId));
    return `${str(f.name)}@${str(f.filename)}:${ln.line}(${f.startLine})`;
  });
  console.log(`loc ${l.id} ${hex(l.address)} ${l.mappingId} leaf=${+!!leaf.get(Number(l.id))} ` +
    `${lines.length}${lines.map((text) => '\t' + text).join('')}`);
}
