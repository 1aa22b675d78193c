'use strict';
// A DEPTH-deep JavaScript recursion (argv[3], default 50) whose leaf loops
// for argv[2] seconds (default 10): make bench's node-kernel section (issue
// 48) measures what a sample of it costs in the kernel beside a native
// frame-pointer recursion of the same depth. Its frames stay frames of
// their own (V8 does not inline a recursion into itself).

function leaf(n) {
  let s = 0;
  for (let i = 0; i < n; i++) {
    s = (s * 31 + i) % 1000003;
  }
  return s;
}

function down(depth, until) {
  if (depth > 1) {
    return down(depth - 1, until) + 1;
  }
  let s = 0;
  while (Date.now() < until) {
    s += leaf(20000);
  }
  return s;
}

const seconds = Number(process.argv[2] || 10);
const depth = Number(process.argv[3] || 50);
const until = Date.now() + seconds * 1000;
let total = 0;
while (Date.now() < until) {
  total += down(depth, until);
}
console.log(total);
