'use strict';
// Off-CPU JavaScript (tests/integration/node, issue 48): serve waits for a
// child in waitChild (execSync: the thread blocks in the kernel under V8's
// and node's C++ frames), then spins a little. Runs for argv[2] seconds.
const { execSync } = require('child_process');

function waitChild() {
  execSync('sleep 0.02');
}

function spin(n) {
  let s = 0;
  for (let i = 0; i < n; i++) {
    s = (s * 31 + i) % 1000003;
  }
  return s;
}

function serve() {
  waitChild();
  return spin(200000);
}

const end = Date.now() + Number(process.argv[2] || 3) * 1000;
let total = 0;
while (Date.now() < end) {
  total += serve();
}
process.stdout.write(`total ${total}\n`);
