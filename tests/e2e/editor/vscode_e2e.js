// Drives code-server (real VS Code in a browser) with headless Debian Chromium via playwright-core.
// usage: node vscode_e2e.js URL OUT_DIR FILE_NAME
// Opens FILE_NAME via Quick Open, waits for kernlens' inlay hints, records every hint with the
// line number it is drawn on, hovers each hinted line, reads the code lenses, inserts two lines at
// the top and records the hints again. Writes OUT_DIR/report.json and screenshots 01..04 *.png.
const fs = require('fs');
const path = require('path');
const { launch, openFile, hintsOn } = require("./vscode_page");

const [url, out, fileName] = process.argv.slice(2);
const log = (...a) => console.log('[vscode-e2e]', ...a);

(async () => {
  const t0 = Date.now();
  const { ctx, close } = await launch({ width: 1400, height: 1800 });
  const report = {};
  try {
    const page = ctx.pages()[0] || (await ctx.newPage());
    page.on('console', (m) => { if (m.type() === 'error') fs.appendFileSync(path.join(out, 'console.log'), m.text() + '\n'); });
    await page.goto(url);
    await page.waitForSelector('.monaco-workbench', { timeout: 90000 });
    log('workbench after', Date.now() - t0, 'ms');
    await page.waitForTimeout(1500);
    await openFile(page, fileName);
    const hints = () => hintsOn(page, '◷');
    const waitHints = async (pred, ms) => {
      const end = Date.now() + ms;
      let h = [];
      while (Date.now() < end) {
        h = await hints();
        if (pred(h)) return h;
        await page.waitForTimeout(250);
      }
      return h;
    };
    report.hints_before = await waitHints((h) => h.length > 0, 60000);
    log('hints:', JSON.stringify(report.hints_before));
    await page.waitForTimeout(1000);
    report.hints_before = await hints();
    await page.screenshot({ path: path.join(out, '01-hints.png') });

    const lensTitles = () => page.evaluate(() =>
      [...document.querySelectorAll('.codelens-decoration a, .codelens-decoration span')]
        .map((e) => e.textContent.replace(/\u00a0/g, ' ').trim()).filter((t) => t.length > 0));
    const waitLenses = async () => {
      const end = Date.now() + 30000;
      let t = [];
      while (Date.now() < end) {
        t = await lensTitles();
        if (t.some((x) => x.startsWith('GPU '))) return [...new Set(t)];
        await page.waitForTimeout(250);
      }
      return [...new Set(t)];
    };
    report.lens_titles_before = await waitLenses();
    log('lenses:', JSON.stringify(report.lens_titles_before));

    // Hover each hinted line over its code (not over the hint).
    report.hovers = {};
    for (const h of report.hints_before) {
      // Hide the previous hover first, then hover the code (not the hint) of this line and wait
      // for a hover whose header is this line's: "GPU <time> · <n> kernels".
      await page.keyboard.press('Escape');
      await page.mouse.move(5, 5);
      await page.locator('.monaco-hover:visible').first().waitFor({ state: 'hidden', timeout: 5000 }).catch(() => {});
      const row = page.locator('.editor-instance .view-lines .view-line', { hasText: h.code }).first();
      const box = await row.boundingBox();
      if (!box) continue;
      const indent = (await row.innerText()).replace(/\u00a0/g, ' ').search(/\S/);
      await page.mouse.move(box.x + 9 * (indent + 2), box.y + box.height / 2);
      const header = h.label.replace('◷ ', 'GPU ');
      const hover = page.locator('.monaco-hover').filter({ hasText: header });
      report.hovers[h.line] = await hover.first().waitFor({ state: 'visible', timeout: 15000 })
        .then(() => hover.first().innerText()).catch(() => '');
      if (Object.keys(report.hovers).length === 1) await page.screenshot({ path: path.join(out, '02-hover.png') });
    }
    await page.mouse.move(5, 5);
    await page.keyboard.press('Escape');

    // Insert two lines at the top; hints must stay on their code.
    const first = page.locator('.editor-instance .view-lines .view-line').first();
    await first.click();
    await page.keyboard.press('Control+Home');
    await page.keyboard.type('# inserted by the e2e test\n# and a second line\n');
    const moved = (h) => h.length === report.hints_before.length &&
      h.every((x, i) => x.line === report.hints_before[i].line + 2);
    report.hints_after = await waitHints(moved, 20000);
    report.lens_titles_after = await waitLenses();
    log('hints after edit:', JSON.stringify(report.hints_after));
    await page.screenshot({ path: path.join(out, '03-after-edit.png') });
  } finally {
    fs.writeFileSync(path.join(out, 'report.json'), JSON.stringify(report, null, 1));
    await close();
    log('total', Date.now() - t0, 'ms');
  }
})().catch((e) => { console.error('FAILED', e); process.exit(1); });
