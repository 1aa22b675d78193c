// SPDX-License-Identifier: GPL-2.0
// Opens a flame graph SVG in headless Chromium and reports what a person
// would see: script errors, the share of the width taken by FUNCTION's
// frames, what the Search box reports for it, the width after clicking its
// largest frame (zoom). Saves a screenshot. Prints key=value lines.
// Usage: node svg_check.mjs FILE.svg SCREENSHOT.png FUNCTION
import { chromium } from 'playwright-core';
import { resolve } from 'node:path';

const [svg, shot, fn] = process.argv.slice(2);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
         '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
const errors = [];
page.on('pageerror', (e) => errors.push(String(e)));
page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
await page.goto('file://' + resolve(svg));

const widths = () => page.evaluate((fn) => {
  const gs = [...document.querySelectorAll('#frames > g')];
  const w = (g) => parseFloat(g.querySelector('rect').getAttribute('width'));
  const visible = (g) => g.style.display !== 'none';
  const all = gs.find((g) => g.querySelector('title').textContent.startsWith('all ('));
  const mine = gs.filter((g) => visible(g) && g.querySelector('title').textContent.startsWith(fn + ' ('));
  const biggest = mine.reduce((a, g) => (!a || w(g) > w(a) ? g : a), null);
  return { total: w(all), fn: mine.reduce((s, g) => s + w(g), 0), frames: gs.length,
           biggest: biggest ? gs.indexOf(biggest) : -1,
           label: biggest ? biggest.querySelector('text').textContent : '' };
}, fn);

const before = await widths();
page.once('dialog', (d) => d.accept(fn));
await page.click('#search');
const matched = await page.textContent('#matched');
await page.screenshot({ path: shot });
let zoomed = 0;
if (before.biggest >= 0) {
  await page.click(`#frames > g:nth-child(${before.biggest + 1}) rect`);
  zoomed = await page.evaluate((i) => parseFloat(document.querySelectorAll('#frames > g')[i]
    .querySelector('rect').getAttribute('width')), before.biggest);
}
await browser.close();
console.log(`errors=${errors.length}${errors.length ? ' ' + errors[0] : ''}`);
console.log(`frames=${before.frames}`);
console.log(`share=${(100 * before.fn / before.total).toFixed(1)}`);
console.log(`label=${before.label}`);
console.log(`matched=${matched}`);
console.log(`zoomed=${zoomed.toFixed(1)}`);
