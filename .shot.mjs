import { chromium } from '@playwright/test';
const [,, url, out, width = '1280', clip = ''] = process.argv;
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu'] });
const page = await browser.newPage({ viewport: { width: Number(width), height: 900 } });
page.on('pageerror', (e) => console.log('pageerror', e.message));
page.on('console', (m) => { if (m.type() === 'error') console.log('console', m.text()); });
await page.goto(url);
await page.waitForFunction(() => window.__slablabSlab?.ready, null, { timeout: 30000 }).catch(() => console.log('not ready'));
await page.waitForTimeout(1200);
const h = await page.evaluate(() => window.__slablabSlab);
console.log(JSON.stringify({ stop: h?.stop, stops: h?.stops, caption: h?.caption?.slice(0, 300) }));
if (clip) { const [x, y, w, hh] = clip.split(',').map(Number); await page.screenshot({ path: out, fullPage: true, clip: { x, y, width: w, height: hh } }); }
else await page.screenshot({ path: out, fullPage: true });
await browser.close();
