// What the code-server browser tests share: the headless Chromium they drive, opening a file with
// Quick Open, and reading the rendered lines of the active editor.
const { chromium } = require('playwright-core');
const fs = require('fs');
const os = require('os');
const path = require('path');

/** A persistent headless Debian Chromium context; `close()` also removes its profile dir. */
async function launch(viewport) {
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'kl-pw-chrome-'));
  const ctx = await chromium.launchPersistentContext(userDataDir, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    viewport,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  const close = async () => {
    await ctx.close();
    fs.rmSync(userDataDir, { recursive: true, force: true });
  };
  return { ctx, close };
}

/** Opens `name` through Quick Open (clicking the row: Enter races with the list being filled). */
async function openFile(page, name) {
  await page.keyboard.press('Control+P');
  await page.waitForSelector('.quick-input-widget', { state: 'visible' });
  await page.keyboard.type(name);
  await page.locator('.quick-input-list .monaco-list-row', { hasText: name }).first().click({ timeout: 30000 });
  await page.waitForSelector('.monaco-editor .view-lines', { timeout: 30000 });
}

/** Every rendered line of the active editor: its number (gutter, matched by `top`) and text
 * (spaces are U+00A0 in the DOM). */
function renderedLines(page) {
  return page.evaluate(() => {
    const ed = document.querySelector('.editor-instance .monaco-editor') || document.querySelector('.monaco-editor');
    const nums = {};
    for (const n of ed.querySelectorAll('.margin-view-overlays > div')) {
      const ln = n.querySelector('.line-numbers');
      if (ln) nums[n.style.top] = parseInt(ln.textContent, 10);
    }
    return [...ed.querySelectorAll('.view-lines .view-line')].map((v) => ({
      line: nums[v.style.top], top: parseFloat(v.style.top), text: v.innerText.replace(/\u00a0/g, ' '),
    })).sort((a, b) => a.top - b.top);
  });
}

/** The inlay hints starting with `prefix` on the rendered lines: {line, label, code}. */
async function hintsOn(page, prefix) {
  return (await renderedLines(page)).filter((l) => l.text.includes(prefix)).map((l) => ({
    line: l.line, label: l.text.slice(l.text.indexOf(prefix)).trim(), code: l.text.slice(0, l.text.indexOf(prefix)).trim(),
  }));
}

module.exports = { launch, openFile, renderedLines, hintsOn };
