'use strict';
// The JavaScript workload of tests/unit/node/check_node_walk.c (issue 48): a
// class method render calls a 10-deep recursion descend down to a leaf loop
// scoreRow. Runs for argv[2] seconds (default 30), then prints its total.
// It says "ready" on stdout once its functions run. The test finds each
// function's first line by its text here: keep one definition per line.
// With argv[3] "zlib" (tests/integration/node), each round also compresses
// a buffer: compressBatch -> zlib.deflateSync, native zlib under JavaScript.

function scoreRow(row, n) {
  let s = 0;
  for (let i = 0; i < n; i++) {
    s = (s * 31 + row + i) % 1000003;
  }
  return s;
}

function descend(depth, row) {
  if (depth === 0) {
    return scoreRow(row, 20000);
  }
  return descend(depth - 1, row) + 1;
}

function compressBatch(buf) {
  return require('zlib').deflateSync(buf).length;
}

class Renderer {
  render(rows) {
    let total = 0;
    for (let r = 0; r < rows; r++) {
      total += descend(10, r);
    }
    return total;
  }
}

const seconds = Number(process.argv[2] || 30);
const zlibToo = process.argv[3] === 'zlib';
const batch = Buffer.alloc(1 << 16);
for (let i = 0; i < batch.length; i++) {
  batch[i] = (i * 7919) % 251 ^ (i >> 9);
}
const end = Date.now() + seconds * 1000;
const renderer = new Renderer();
let total = renderer.render(1);
process.stdout.write('ready\n');
while (Date.now() < end) {
  total += renderer.render(8);
  if (zlibToo) {
    total += compressBatch(batch);
  }
}
process.stdout.write(`total ${total}\n`);
