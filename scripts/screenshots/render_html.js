// Renders local HTML pages to PNG in headless Debian Chromium (playwright-core), each cut to its
// #screen element: node render_html.js IN.html OUT.png [IN.html OUT.png ...]
const { chromium } = require('playwright-core');
const path = require('path');

(async () => {
  const args = process.argv.slice(2);
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
  const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
  for (let i = 0; i + 1 < args.length; i += 2) {
    await page.goto('file://' + path.resolve(args[i]));
    await page.locator('#screen').screenshot({ path: args[i + 1] });
  }
  await browser.close();
})().catch((e) => { console.error('render_html:', e.message); process.exit(1); });
