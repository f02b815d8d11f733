// A profiling run in real VS Code (code-server) driven by headless Chromium (playwright-core):
// usage: node vscode_run_e2e.js URL OUT_DIR
// Opens train.py of the transformer sample, clicks the "▶ Profile" lens of train_step and
// records, with the time since the click: the cancellable progress notification, the first
// per-line hints (provisional, "(so far)") and the final ones; the call line's inclusive hint;
// "kernlens: Show run" (the webview's hottest lines); a click on the hottest line and the hover
// there (kernel rows, widths). Writes OUT_DIR/run-report.json and screenshots run-*.png.
const fs = require('fs');
const path = require('path');
const { launch, openFile, renderedLines, hintsOn } = require('./vscode_page');

const [url, out] = process.argv.slice(2);
const log = (...a) => console.log('[vscode-run-e2e]', ...a);
const PREFIX = '◷';

(async () => {
  const t0 = Date.now();
  const { ctx, close } = await launch({ width: 1500, height: 950 });
  const report = { timeline: [] };
  const mark = (what, extra) => {
    const e = Object.assign({ what, ms: report.clickAt ? Date.now() - report.clickAt : null }, extra || {});
    report.timeline.push(e);
    log(what, e.ms === null ? '' : `+${e.ms} ms`, extra ? JSON.stringify(extra) : '');
  };
  try {
    const page = ctx.pages()[0] || (await ctx.newPage());
    page.on('console', (m) => { if (m.type() === 'error') fs.appendFileSync(path.join(out, 'run-console.log'), m.text() + '\n'); });
    await page.goto(url);
    await page.waitForSelector('.monaco-workbench', { timeout: 90000 });
    await page.waitForTimeout(1500);
    const command = async (title) => {
      await page.keyboard.press('F1');
      await page.waitForSelector('.quick-input-widget', { state: 'visible' });
      await page.keyboard.type(title);
      await page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first().click({ timeout: 30000 });
    };
    await openFile(page, 'train.py');
    const lines = () => renderedLines(page);
    const hints = () => hintsOn(page, PREFIX);

    // The ▶ Profile lens of train_step: the lens row right above `def train_step`.
    const def = page.locator('.editor-instance .view-lines .view-line', { hasText: 'def train_step' }).first();
    await def.waitFor({ timeout: 30000 });
    const lens = page.locator('.codelens-decoration a', { hasText: '▶ Profile' });
    await lens.first().waitFor({ timeout: 60000 });
    const defBox = await def.boundingBox();
    let target = null;
    for (const l of await lens.all()) {
      const b = await l.boundingBox();
      if (b && b.y < defBox.y && defBox.y - b.y < 2 * defBox.height) target = l;
    }
    if (!target) throw new Error('no ▶ Profile lens above def train_step');
    report.clickAt = Date.now();
    await target.click();
    mark('clicked ▶ Profile (train_step)');

    // Until the run ends: the notification, its cancel button, the first (provisional) hints.
    const toast = page.locator('.notification-toast', { hasText: 'kernlens: profiling' });
    let firstHints = null, notified = false;
    const end = Date.now() + 300000;
    while (Date.now() < end) {
      if (!notified && await toast.count() > 0) {
        notified = true;
        report.progress = {
          text: (await toast.first().innerText()).replace(/\s+/g, ' '),
          cancel: await toast.first().locator('.codicon-notifications-clear, a.action-label[aria-label*="Cancel"], .monaco-button', { hasText: /cancel/i }).count()
            + await toast.first().locator('[aria-label*="Cancel"], [title*="Cancel"]').count(),
        };
        mark('progress notification', report.progress);
        await page.screenshot({ path: path.join(out, 'run-1-progress.png') });
      }
      const h = await hints();
      if (!firstHints && h.length > 0) {
        firstHints = h;
        mark('first hints', { hints: h });
        report.first_hints = h;
        report.first_hints_ms = Date.now() - report.clickAt;
        await page.screenshot({ path: path.join(out, 'run-2-first-hints.png') });
      }
      const done = await page.locator('.notification-toast', { hasText: /kernlens: (converged|round_budget|failed|cancelled)/ }).count();
      if (done > 0 && h.length > 0 && !h.some((x) => x.label.includes('(so far)'))) break;
      await page.waitForTimeout(100);
    }
    report.done_ms = Date.now() - report.clickAt;
    report.final_message = await page.locator('.notification-toast', { hasText: /kernlens: / }).allInnerTexts();
    await page.waitForTimeout(1500);
    report.final_hints = await hints();
    mark('run ended', { hints: report.final_hints, message: report.final_message });
    report.status_bar = await page.locator('.statusbar-item', { hasText: 'kernlens' }).allInnerTexts();
    await page.screenshot({ path: path.join(out, 'run-3-hints.png') });
    // Dismiss notifications so that they do not cover the hover.
    for (const b of await page.locator('.notification-toast .codicon-notifications-clear').all()) await b.click().catch(() => {});

    // The run view.
    await command('kernlens: Show run');
    let frame = null;
    const fend = Date.now() + 30000;
    while (!frame && Date.now() < fend) {
      for (const f of page.frames()) if (await f.$('#hottest').catch(() => null)) frame = f;
      if (!frame) await page.waitForTimeout(250);
    }
    if (!frame) throw new Error('the run view did not open');
    report.run_view = {
      text: (await frame.locator('body').innerText()).slice(0, 4000),
      hottest: await frame.locator('#hottest tr').evaluateAll((rows) => rows.slice(1).map((r) => [...r.cells].map((c) => c.innerText))),
    };
    mark('run view', { rows: report.run_view.hottest.length });
    await page.screenshot({ path: path.join(out, 'run-4-run-view.png') });

    // Click the hottest line in the run view, then hover it in the editor.
    const first = report.run_view.hottest.find((r) => !r[0].includes('total'));
    const where = first[2];  // columns: GPU, share, line (path:line), code, kernels
    const [file, lineNo] = [where.split(':')[0], parseInt(where.split(':')[1], 10)];
    await frame.locator('a[data-i]').nth(report.run_view.hottest.indexOf(first)).click();
    await page.waitForTimeout(2000);
    report.hover_target = { file, line: lineNo };
    const rows = await lines();
    const row = rows.find((r) => r.line === lineNo);
    if (!row) throw new Error(`line ${lineNo} of ${file} is not rendered`);
    const el = page.locator('.editor-instance .view-lines .view-line').filter({ hasText: row.text.split(PREFIX)[0].trim() }).first();
    const box = await el.boundingBox();
    const indent = row.text.search(/\S/);
    await page.keyboard.press('Escape');
    await page.mouse.move(box.x + 9 * (indent + 2), box.y + box.height / 2);
    const hover = page.locator('.monaco-hover').filter({ hasText: 'GPU' }).first();
    await hover.waitFor({ state: 'visible', timeout: 20000 });
    await page.waitForTimeout(500);
    report.hover = await hover.evaluate((h) => {
      const c = h.querySelector('.hover-contents') || h;
      // Every kernel table of the hover (forward, backward, recompute, optimizer groups).
      const tables = [...h.querySelectorAll('table')];
      return {
        text: h.innerText,
        width: h.getBoundingClientRect().width,
        scrollWidth: c.scrollWidth, clientWidth: c.clientWidth,
        tableWidth: Math.max(0, ...tables.map((t) => t.getBoundingClientRect().width)),
        rows: tables.flatMap((t) => [...t.querySelectorAll('tr')].slice(1).map((r) => [...r.cells].map((x) => x.innerText))),
        clipped: [...h.querySelectorAll('*')].some((e) => e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflowX !== 'visible'),
        // Cells whose text takes more than one line box (a value such as "240 µs" wrapped).
        wrapped: tables.flatMap((t) => [...t.querySelectorAll('td')]).filter((td) => {
          const r = document.createRange();
          r.selectNodeContents(td);
          return new Set([...r.getClientRects()].map((x) => Math.round(x.top))).size > 1;
        }).map((td) => td.innerText),
      };
    });
    mark('hover', { rows: report.hover.rows.length, width: report.hover.width, tableWidth: report.hover.tableWidth });
    // VS Code opens a hover at most ~250 px tall (the rest scrolls); a user drags its lower edge to
    // see the whole table at once: so does the test, for the screenshot.
    const south = page.locator('.monaco-resizable-hover .monaco-sash.orthogonal-edge-south.horizontal').first();
    if (await south.count()) {
      const sb = await south.boundingBox();
      await page.mouse.move(sb.x + sb.width / 2, sb.y + sb.height / 2);
      await page.mouse.down();
      await page.mouse.move(sb.x + sb.width / 2, sb.y + 160, { steps: 8 });
      await page.mouse.up();
      await page.waitForTimeout(300);
    }
    report.hover.resized = await hover.evaluate((h) => {
      const c = h.querySelector('.hover-contents') || h;
      return { height: h.getBoundingClientRect().height, scrollHeight: c.scrollHeight, clientHeight: c.clientHeight };
    });
    const hb = await hover.boundingBox();
    await page.screenshot({ path: path.join(out, 'run-5-hover.png'),
      clip: { x: Math.max(0, hb.x - 10), y: Math.max(0, hb.y - 30), width: Math.min(1500 - Math.max(0, hb.x - 10), hb.width + 20), height: hb.height + 60 } });
  } finally {
    fs.writeFileSync(path.join(out, 'run-report.json'), JSON.stringify(report, null, 1));
    await close();
    log('total', Date.now() - t0, 'ms');
  }
})().catch((e) => { console.error('FAILED', e); process.exit(1); });
