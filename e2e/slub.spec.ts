// The SLUB view end to end: each scenario played to its end through the
// controls, checked through what a reader sees (caption, inspector text,
// checker alert) and the test hook that exposes the state the canvas draws
// (window.__slablabSlub).  Screenshots of each scenario's last step go to
// docs/screenshots/ when SCREENSHOTS=1.
import { expect, test } from '@playwright/test';
import { ISOLATED_URL, PLAIN_URL } from './servers';
import { openLab, shot, stepView } from './lab';
import type { SlubTestHook } from '../web/slub/test-hook';

const LIST = { NONE: 0, CPU_SLAB: 1, CPU_PARTIAL: 2, NODE_PARTIAL: 3 };

// The step views' shared helpers (e2e/lab.ts), typed with this view's hook.
const { hook, ready, stepOnce, playToEnd, atPosition } = stepView<SlubTestHook>('__slablabSlub');
const open = openLab;

test.describe('SLUB scenarios', () => {
  test.use({ viewport: { width: 1280, height: 900 } });

  test('1. the fast path: tid advances by TID_STEP on every fast-path operation', async ({ page }) => {
    await open(page, 'scenario=fast-path&cpus=2');
    const start = await ready(page, 0);
    // The set-up's first alloc (the slow path) has moved CPU 0's tid on by TID_STEP (2 for two CPUs).
    expect(start.cpus.map((c) => c.tid)).toEqual([2, 1]);
    expect(start.slabs).toHaveLength(1);
    await expect(page.getByTestId('slub-caption')).toContainText('One CPU allocating');
    const end = await playToEnd(page);
    // 1 slow alloc, 3 fast allocs and 2 fast frees; TID_STEP is 2 for two CPUs.
    expect(end.stats.ALLOC_FASTPATH).toBe(3);
    expect(end.stats.FREE_FASTPATH).toBe(2);
    expect(end.cpus[0]?.tid).toBe(0 + 2 * 6);
    expect(end.check).toBe('');
    await expect(page.getByTestId('slub-position')).toContainText('Step 5 of 5');
    // The inspector describes the CPU freelist's head object.
    await page.getByTestId('slub-canvas').focus();
    await page.keyboard.press('ArrowDown');
    await expect(page.getByTestId('inspector')).toContainText("CPU 0's CPU slab");
    await page.keyboard.press('ArrowRight');
    await expect(page.getByTestId('inspector')).toContainText('Object 0 of slab pfn');
    await expect(page.getByTestId('inspector')).toContainText('Last allocated by step');
    await shot(page, 'scenario-1-fast-path');
  });

  test('2. why the tid: cmpxchg retries, plain writes corrupt and the checker says so', async ({ page }) => {
    await open(page, 'scenario=why-tid&cpus=2');
    await ready(page, 0);
    // Micro-step to the interrupt: the caption names the preemption point.
    let h = await hook(page);
    while (!/interrupt handler/.test(h.caption)) h = await stepOnce(page, h, 'Micro-step');
    await expect(page.getByTestId('slub-caption')).toContainText(/in the interrupt handler/i);
    await shot(page, 'scenario-2-why-tid-interrupt');
    const good = await playToEnd(page);
    expect(good.stats.CMPXCHG_DOUBLE_CPU_FAIL).toBe(1);
    expect(good.check).toBe('');
    expect(good.dupObjects).toBe(0);

    await page.getByRole('button', { name: "Replay with the RFC's plain writes" }).click();
    await expect(page).toHaveURL(/variant=plain/);
    const bad = await playToEnd(page);
    expect(bad.stats.CMPXCHG_DOUBLE_CPU_FAIL).toBe(0);
    expect(bad.check).toMatch(/checker/);
    await expect(page.getByTestId('slub-check')).toContainText('flags a corruption');
    expect(bad.dupObjects).toBeGreaterThan(0);
    await shot(page, 'scenario-2-why-tid-plain');
  });

  test('3. slow path: refills from a new slab, the CPU partial list and the node partial list', async ({ page }) => {
    await open(page, 'scenario=slow-path&cpus=2');
    const end = await playToEnd(page);
    expect(end.stats.ALLOC_SLAB).toBeGreaterThanOrEqual(3);
    expect(end.stats.CPU_PARTIAL_ALLOC).toBe(1);
    expect(end.stats.ALLOC_FROM_PARTIAL).toBe(1);
    expect(end.check).toBe('');
    await expect(page.getByTestId('timeline')).toContainText('refill from the CPU partial list');
    await expect(page.getByTestId('timeline')).toContainText('refill from the node partial list');
    await expect(page.getByTestId('timeline')).toContainText('refill from a new slab');
    await shot(page, 'scenario-3-slow-path');
  });

  test('4. remote frees: the slab moves from CPU 0 to CPU 1 via the node', async ({ page }) => {
    await open(page, 'scenario=remote-frees&cpus=2');
    const h0 = await ready(page, 0);
    // The set-up (CPU 0's slab A, four objects allocated) is on screen at the start.
    expect(h0.slabs.map((s) => [s.list, s.cpu])).toEqual([[LIST.CPU_SLAB, 0]]);
    // Jump to the op boundary after step 7 (CPU 1's free into the full slab).
    let h = await ready(page);
    for (let i = 0; i < 7; i++) h = await stepOnce(page, h);
    const moved = h.slabs.find((s) => s.list === LIST.CPU_PARTIAL);
    expect(moved?.cpu).toBe(1);
    expect(h.stats.FREE_FROZEN).toBe(2);
    const end = await playToEnd(page);
    const a = end.slabs.find((s) => s.pfn === moved?.pfn);
    expect(a?.list).toBe(LIST.CPU_SLAB);
    expect(a?.cpu).toBe(1);
    expect(end.check).toBe('');
    await shot(page, 'scenario-4-remote-frees');
  });

  test('5. bulk free: the detached freelist takes one cmpxchg per group, the generic loop one per object', async ({ page }) => {
    await open(page, 'scenario=bulk-free&cpus=2');
    // The two slabs are allocated at the start (set-up); micro-step into the bulk free until a detached group is on screen.
    expect((await ready(page, 0)).slabs.length).toBe(2);
    await page.getByRole('button', { name: 'Micro-step', exact: true }).click();
    await expect(page.getByTestId('slub-caption')).toContainText('a detached freelist is built');
    await shot(page, 'scenario-5-bulk-free-group');
    const end = await playToEnd(page);
    const detached = end.opResults[1] ?? -1;
    const generic = end.otherBulkResults[1] ?? -1;
    expect(detached).toBeGreaterThan(0);
    expect(generic).toBe(12);
    expect(detached).toBeLessThan(generic);
    await expect(page.getByTestId('bulk-compare')).toContainText(`detached form ${detached} cmpxchg`);
    await expect(page.getByTestId('bulk-compare')).toContainText('generic form 12 cmpxchgs');
    expect(end.stats.BULK_FREE_CAS).toBe(detached);
    await shot(page, 'scenario-5-bulk-free');
  });
});

test.describe('SLUB view driving', () => {
  test('Back replays to an earlier state; keyboard shortcuts step; the URL holds the step', async ({ page }) => {
    await open(page, 'scenario=fast-path&cpus=2&step=0');
    await ready(page, 0);
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowRight');
    const tid2 = (await atPosition(page, 'Step 2 of')).cpus[0]?.tid;
    await page.keyboard.press('ArrowRight');
    await atPosition(page, 'Step 3 of');
    await page.getByRole('button', { name: 'Back' }).click();
    await atPosition(page, 'Step 2 of');
    expect((await hook(page)).cpus[0]?.tid).toBe(tid2);
    const url = page.url();
    expect(url).toMatch(/step=\d+/);
    // The same URL in a fresh page shows the same moment.
    const again = await page.context().newPage();
    await again.goto(url);
    await atPosition(again, 'Step 2 of');
    expect((await hook(again)).cpus[0]?.tid).toBe(tid2);
    // The help panel lists the view's keys.
    await page.keyboard.press('?');
    const help = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
    await expect(help).toContainText('Space');
    await expect(help).toContainText('Micro-step: to the next preemption point');
    await expect(help).toContainText('Back: one operation backward');
  });

  test('operations by hand: alloc, remote free of the selected object, an injected interrupt', async ({ page }) => {
    await open(page, 'scenario=sandbox&cpus=2');
    await ready(page, 0);
    await page.getByRole('button', { name: 'Alloc on CPU 0', exact: true }).click();
    await expect(page).toHaveURL(/ops=a0/);
    await page.getByRole('button', { name: 'Alloc on CPU 0', exact: true }).click();
    await page.waitForFunction(() => (window.__slablabSlub?.stats.ALLOC_FASTPATH ?? 0) === 1);
    // Select the first object of the slab and free it from CPU 1.
    await page.getByTestId('slub-canvas').focus();
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowRight');
    await expect(page.getByTestId('inspector')).toContainText('is allocated');
    await page.getByLabel('As CPU').selectOption('1');
    await page.getByRole('button', { name: /Free selected from CPU 1 \(remote\)/ }).click();
    await page.waitForFunction(() => window.__slablabSlub?.stats.FREE_FROZEN === 1);
    // Micro-step back into the last alloc and inject an interrupt there.
    await page.getByLabel('As CPU').selectOption('0');
    await page.getByRole('button', { name: 'Alloc on CPU 0', exact: true }).click();
    await page.waitForFunction(() => (window.__slablabSlub?.stats.ALLOC_FASTPATH ?? 0) === 2);
    await page.keyboard.press(',');
    await expect(page.getByRole('button', { name: 'Interrupt here: alloc' })).toBeEnabled();
    await page.getByRole('button', { name: 'Interrupt here: alloc' }).click();
    await expect(page).toHaveURL(/\.i\d+-1-0-a/);
    await page.getByRole('button', { name: 'Step', exact: true }).click();
    await page.waitForFunction(() => window.__slablabSlub?.stats.CMPXCHG_DOUBLE_CPU_FAIL === 1);
    expect((await hook(page)).check).toBe('');
  });

  test('a bad URL parameter gets a clear message', async ({ page }) => {
    await page.goto(`${ISOLATED_URL}?scenario=nope&cpus=2`);
    await expect(page.getByTestId('url-problems')).toContainText('scenario="nope" is not valid');
    await expect(page.getByTestId('url-problems')).toContainText('fast-path');
    await page.goto(`${ISOLATED_URL}?scenario=fast-path&step=999`);
    await expect(page.getByTestId('step-problem')).toContainText('step=999 is past the end');
    await page.goto(`${ISOLATED_URL}?scenario=sandbox&ops=a0.q9`);
    await expect(page.getByTestId('url-problems')).toContainText('"q9" is not an operation');
    // A fast path that does not exist, and the bulk form's old name, which is named with its new one.
    await page.goto(`${ISOLATED_URL}?scenario=why-tid&variant=rt,irqsoff&bulk=fallback`);
    await expect(page.getByTestId('url-problems')).toContainText(
      'URL parameter variant="rt,irqsoff" is not valid: expected one of cmpxchg, locked, plain, rt, or a comma list of up to 4 different ones. Using cmpxchg.',
    );
    await expect(page.getByTestId('url-problems')).toContainText('URL parameter bulk="fallback" is not valid');
    await expect(page.getByTestId('url-problems')).toContainText('"fallback" is now called "generic"');
    // The view still runs, with the defaults in their place.
    expect((await ready(page, 0)).panes.map((p) => p.label)).toEqual(['']);
    await page.goto(`${ISOLATED_URL}?scenario=fast-path&slub_min_order=12`);
    await expect(page.getByTestId('url-problems')).toContainText('slub_min_order="12" is not valid: expected a whole number from 0 to 10, or default');
  });

  test('tuning by hand: shrink discards the empty slab the node list kept; Back brings it back', async ({ page }) => {
    await open(page, 'scenario=sandbox&cpus=2');
    await ready(page, 0);
    // One object of a new slab, the CPU flushed (the slab goes to the node list), the object freed: an empty slab kept.
    await page.getByRole('button', { name: 'Alloc on CPU 0', exact: true }).click();
    await page.waitForFunction(() => window.__slablabSlub?.ready && window.__slablabSlub.slabs.length === 1);
    await page.getByRole('button', { name: 'Flush CPU 0', exact: true }).click();
    await page.waitForFunction(() => window.__slablabSlub?.ready && window.__slablabSlub.nodePartial.length === 1);
    await page.getByTestId('slub-canvas').focus();
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowRight');
    await expect(page.getByTestId('inspector')).toContainText('is allocated');
    await page.getByRole('button', { name: /Free selected from CPU 0/ }).click();
    await page.waitForFunction(() => window.__slablabSlub?.ready && window.__slablabSlub.slabs[0]?.inuse === 0);
    expect((await hook(page)).nodePartial).toHaveLength(1);
    await page.getByRole('button', { name: 'Shrink', exact: true }).click();
    await expect(page).toHaveURL(/ops=a0\.x0\.f0-\d+-\d+\.s(&|$)/);
    await page.waitForFunction(() => window.__slablabSlub?.ready && window.__slablabSlub.slabs.length === 0);
    const shrunk = await hook(page);
    expect(shrunk.nodePartial).toEqual([]);
    await expect(page.getByTestId('slub-caption')).toContainText('You: shrink the cache.');
    await expect(page.getByTestId('timeline')).toContainText('sysfs shrink: every CPU flushed, 1 empty slab discarded');
    // The sandbox replays the shrink as any step: one Back shows the slab again.
    await page.getByRole('button', { name: 'Back', exact: true }).click();
    await page.waitForFunction((s) => window.__slablabSlub?.ready && window.__slablabSlub.stop < s && window.__slablabSlub.slabs.length === 1, shrunk.stop);
    // min_partial by hand: a step inserted after the one on screen (the shrink after it stays), its value shown.
    await page.getByLabel('min_partial', { exact: true }).fill('0');
    await page.getByRole('button', { name: /Set min_partial/ }).click();
    await expect(page).toHaveURL(/ops=a0\.x0\.f0-\d+-\d+\.m0\.s(&|$)/);
    await expect(page.getByRole('button', { name: /Set min_partial \(now 0\)/ })).toBeVisible();
  });

  test('the kernel\'s boot parameters in the URL shape the geometry shown; the Kernel picker writes them', async ({ page }) => {
    await open(page, 'scenario=fast-path&cpus=2&slub_min_order=2&nr_cpus=8192');
    const h = await ready(page, 0);
    // After the set-up's alloc: one TID_STEP (8192 for nr_cpus=8192) on CPU 0.
    expect(h.cpus.map((c) => c.tid)).toEqual([8192, 1]);
    await expect(page.getByText(/^Cache: 512-byte objects in 512-byte slots, 32 per order-2 slab; .*TID_STEP 8192;/)).toBeVisible();
    const end = await playToEnd(page);
    expect(end.slabs.map((x) => [x.order, x.objects])).toEqual([[2, 32]]);
    expect(end.cpus[0]?.tid).toBe(6 * 8192); // six operations, each moving tid on by TID_STEP 8192
    await page.getByText('Kernel', { exact: true }).click();
    await page.getByLabel('CONFIG_PREEMPTION').uncheck();
    await expect(page).toHaveURL(/preemption=off/);
    await expect(page.getByText(/TID_STEP 1;/)).toBeVisible();
    await page.getByLabel('slub_min_order').selectOption('');
    await expect(page).not.toHaveURL(/slub_min_order/);
    await expect(page.getByText(/16 per order-1 slab/)).toBeVisible();
  });

  test('the page allocator runs short: a new slab falls back to the lower order, and the inspector says so', async ({ page }) => {
    await open(page, 'scenario=sandbox&cpus=2');
    await ready(page, 0);
    const short = page.getByLabel('Page allocator runs short');
    // Each edit reloads the script: wait until its last step is on screen before the next one.
    const atEndOf = (ops: number) => page.waitForFunction((n) => window.__slablabSlub?.ready && window.__slablabSlub.stops === n + 1 && window.__slablabSlub.stop === n, ops);
    // A click, not check(): the box shows the script's state, which changes once the edited script has
    // reloaded (check() fails when that comes after its own look), so the URL and the box are awaited.
    await short.click();
    await expect(page).toHaveURL(/ops=z1(&|$)/);
    await atEndOf(1);
    await expect(short).toBeChecked();
    await page.getByRole('button', { name: 'Alloc on CPU 0', exact: true }).click();
    await page.waitForFunction(() => window.__slablabSlub?.ready && window.__slablabSlub.slabs.length === 1);
    const h = await hook(page);
    expect(h.slabs[0]).toMatchObject({ order: 0, objects: 8, inuse: 8 });
    expect(h.sysfs.order_fallback).toBe('1 C0=1');
    await page.getByTestId('slub-canvas').focus();
    await page.keyboard.press('ArrowDown');
    await expect(page.getByTestId('inspector')).toContainText('(order 0, 8 objects: a fallback slab, made when the page allocator had no order-1 block');
    await expect(page.getByTestId('timeline')).toContainText('ORDER_FALLBACK: no free order-1 block');
    await page.getByText(/^Counters under their sysfs names/).click();
    await expect(page.getByTestId('slub-counters')).toContainText('order_fallback');
    // The pages back: the next new slab has the cache's order again.
    await short.click();
    await expect(page).toHaveURL(/ops=z1\.a0\.z0(&|$)/);
    await atEndOf(3);
    await expect(short).not.toBeChecked();
    await page.getByLabel('Bulk count').fill('8');
    await page.getByRole('button', { name: 'Bulk alloc 8' }).click();
    await page.waitForFunction(() => window.__slablabSlub?.ready && window.__slablabSlub.slabs.length === 2);
    expect((await hook(page)).slabs.map((x) => [x.order, x.objects]).sort()).toEqual([[0, 8], [1, 16]]);
    expect((await hook(page)).check).toBe('');
  });
});

test.describe('SLUB embed', () => {
  test('embed.html?view=slub works in a non-isolated page with the single-threaded build', async ({ page }) => {
    await page.goto(`${PLAIN_URL}embed.html?view=slub&scenario=why-tid&step=2&cpus=2`);
    await expect(page.getByTestId('core-mode')).toHaveText('single-threaded');
    const h = await ready(page, 2);
    expect(h.stops).toBeGreaterThan(2);
    await expect(page.getByRole('button', { name: 'Micro-step', exact: true })).toBeVisible();
    await expect(page.getByLabel('Scenario')).toHaveCount(0); // minimal controls: no pickers
    const link = page.getByRole('link', { name: 'Open in slablab' });
    await expect(link).toHaveAttribute('href', /scenario=why-tid/);
    await expect(link).toHaveAttribute('href', /step=2/);
    await shot(page, 'embed-why-tid');
  });

  test('the embed inside an iframe of a plain page', async ({ page }) => {
    await page.goto(`${PLAIN_URL}`);
    await page.setContent(
      `<h1>docs</h1><iframe title="slablab" src="${PLAIN_URL}embed.html?view=slub&scenario=fast-path&step=2&cpus=2" width="1000" height="700"></iframe>`,
    );
    const frame = page.frameLocator('iframe[title=slablab]');
    await expect(frame.getByTestId('core-mode')).toHaveText('single-threaded');
    await expect(frame.getByTestId('slub-position')).toContainText('Step 1 of 5');
  });
});

test.describe('SLUB side by side', () => {
  test.use({ viewport: { width: 1280, height: 900 } });

  test('variant=cmpxchg,plain runs "why the tid" on both fast paths, stepping together, each with its own counters', async ({ page }) => {
    await open(page, 'scenario=why-tid&cpus=2&variant=cmpxchg,plain');
    const start = await ready(page, 0);
    expect(start.panes.map((p) => p.label)).toEqual(['cmpxchg', 'plain']);
    await expect(page.getByTestId('slub-pane-0')).toContainText('fast path cmpxchg');
    await expect(page.getByTestId('slub-pane-1')).toContainText('fast path plain');
    // Micro-step to the interrupt: the caption says where each pane is.
    let h = start;
    while (!/interrupt handler/.test(h.caption)) h = await stepOnce(page, h, 'Micro-step');
    expect(h.caption).toMatch(/cmpxchg \(in the interrupt handler\): CPU 0 is in slab_alloc_node.*plain \(in the interrupt handler\): CPU 0 is in/);
    const end = await playToEnd(page);
    const [kernel, rfc] = end.panes;
    expect(kernel?.stats.CMPXCHG_DOUBLE_CPU_FAIL).toBe(1);
    expect(kernel?.check).toBe('');
    expect(kernel?.dupObjects).toBe(0);
    expect(rfc?.stats.CMPXCHG_DOUBLE_CPU_FAIL).toBe(0);
    expect(rfc?.dupObjects).toBeGreaterThan(0);
    await expect(page.getByTestId('slub-check')).toContainText('plain: The checker (validate) flags a corruption');
    await expect(page.getByTestId('slub-pane-1')).toContainText('cmpxchg retries 0');
    await expect(page.getByTestId('slub-pane-0')).toContainText('cmpxchg retries 1');
    await shot(page, 'side-by-side-why-tid');
    // Back replays both worlds to the end of step 2 (the interrupted alloc): both have done the same operations again.
    await page.keyboard.press('ArrowLeft');
    await atPosition(page, 'Step 2 of 3');
    const back = await hook(page);
    expect(back.panes.map((p) => (p.stats.ALLOC_FASTPATH ?? 0) + (p.stats.ALLOC_SLOWPATH ?? 0))).toEqual([4, 4]);
    // One world again.
    await page.getByRole('button', { name: 'Show one world' }).click();
    await expect(page).not.toHaveURL(/variant=/);
    await page.waitForFunction(() => window.__slablabSlub?.ready && window.__slablabSlub.panes.length === 1);
  });

  test('the end of "why the tid" offers the three fast paths side by side; a bad list is named', async ({ page }) => {
    await open(page, 'scenario=why-tid&cpus=2');
    await playToEnd(page);
    await page.getByRole('button', { name: 'Compare all 3 side by side' }).click();
    await expect(page).toHaveURL(/variant=cmpxchg,plain,rt(&|$)/);
    const h = await ready(page, 0);
    expect(h.panes.map((p) => p.label)).toEqual(['cmpxchg', 'plain', 'rt']);
    await page.goto(`${ISOLATED_URL}?scenario=why-tid&variant=plain,plain`);
    await expect(page.getByTestId('url-problems')).toContainText(
      'URL parameter variant="plain,plain" is not valid: expected one of cmpxchg, locked, plain, rt, or a comma list of up to 4 different ones. Using cmpxchg.',
    );
  });

  test('variant=cmpxchg,plain,rt: under local_lock rt neither retries nor hands out twice, and the caption says why', async ({ page }) => {
    await open(page, 'scenario=why-tid&cpus=2&variant=cmpxchg,plain,rt');
    const start = await ready(page, 0);
    expect(start.panes.map((p) => p.label)).toEqual(['cmpxchg', 'plain', 'rt']);
    await expect(page.getByTestId('slub-pane-2')).toContainText('fast path rt');
    let h = start;
    while (!/interrupt handler/.test(h.caption)) h = await stepOnce(page, h, 'Micro-step');
    expect(h.caption).toMatch(/rt \(in the interrupt handler\): CPU 0 is in slab_alloc_node: .*rt: local_lock, then ___slab_alloc/);
    const end = await playToEnd(page);
    const [kernel, rfc, rt] = end.panes;
    expect([kernel, rfc, rt].map((p) => p?.stats.CMPXCHG_DOUBLE_CPU_FAIL)).toEqual([1, 0, 0]);
    expect([kernel, rfc, rt].map((p) => p?.dupObjects)).toEqual([0, expect.any(Number), 0]);
    expect(rfc?.dupObjects).toBeGreaterThan(0);
    expect([kernel?.check, rt?.check]).toEqual(['', '']);
    // Every rt allocation is ___slab_alloc under local_lock, the handler's too.
    expect([rt?.stats.ALLOC_FASTPATH, rt?.stats.ALLOC_SLOWPATH]).toEqual([0, 5]);
    expect(rt?.sysfs.alloc_slowpath).toBe('5 C0=5');
    await expect(page.getByTestId('slub-caption')).toContainText('With rt (PREEMPT_RT) there is no lockless fast path');
    await expect(page.getByTestId('slub-caption')).toContainText('local_lock');
    await expect(page.getByTestId('slub-check')).toContainText('plain: The checker (validate) flags a corruption');
    await expect(page.getByTestId('slub-check')).not.toContainText('rt:');
  });
});
