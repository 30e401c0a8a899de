// The allocation's context and the no-lock API by hand in the SLUB sandbox
// (issue 23): on 6.18 (the sandbox's cache opts in to sheaves) a GFP_ATOMIC
// allocation on empty sheaves takes the slab path and the plain (GFP_KERNEL)
// one after it refills, in the URL as ops=A0-1.a0, while on 7.0 (from -rc3's
// fb1091febd66) the GFP_ATOMIC one refills as GFP_KERNEL does; a kmalloc_nolock injected inside an alloc's sheaf section (the
// Context panel's "Interrupt here") takes the slab path; on 6.17 the controls are not
// offered and the panel says why.
import { expect, test, type Page } from '@playwright/test';
import { ISOLATED_URL } from './servers';
import type { SlubTestHook } from '../web/slub/test-hook';

async function ready(page: Page, ops: number): Promise<SlubTestHook> {
  await page.waitForFunction((n) => !!window.__slablabSlub?.ready && window.__slablabSlub.opResults.length === n, ops);
  return page.evaluate(() => window.__slablabSlub as SlubTestHook);
}

test.describe('SLUB: allocation context and the no-lock API by hand', () => {
  test('on 6.18 GFP_ATOMIC does not refill a sheaf, GFP_KERNEL does; kmalloc_nolock and the irq_work are offered', async ({ page }) => {
    await page.goto(`${ISOLATED_URL}?scenario=sandbox&kernel=6.18&cpus=2`);
    await ready(page, 0);
    const ctx = page.getByRole('group', { name: 'Context: GFP_ATOMIC, kmalloc_nolock and kfree_nolock' });
    await ctx.getByRole('button', { name: 'Alloc GFP_ATOMIC on CPU 0' }).click();
    let h = await ready(page, 1);
    const first = (name: string) => Number(h.sysfs[name]?.split(' ')[0]);
    expect(first('sheaf_refill')).toBe(0);
    await expect(page.getByTestId('slub-caption')).toContainText('You: alloc in GFP_ATOMIC context');
    await page.getByRole('button', { name: 'Alloc on CPU 0', exact: true }).click();
    h = await ready(page, 2);
    expect(first('sheaf_refill')).toBeGreaterThan(0);
    expect(page.url()).toContain('ops=A0-1.a0');
    await ctx.getByRole('button', { name: 'kmalloc_nolock on CPU 0' }).click();
    await ready(page, 3);
    await ctx.getByRole('button', { name: "Run CPU 0's irq_work" }).click();
    h = await ready(page, 4);
    expect(page.url()).toContain('ops=A0-1.a0.n0.w0');
    expect(h.opResults).toEqual([0, 0, 0, 0]);
  });

  test('on 7.0 GFP_ATOMIC refills a sheaf as GFP_KERNEL does', async ({ page }) => {
    const refills = async (button: string) => {
      await page.goto(`${ISOLATED_URL}?scenario=sandbox&kernel=7.0&cpus=2`);
      await ready(page, 0);
      await page.getByRole('button', { name: button, exact: true }).click();
      const h = await ready(page, 1);
      expect(h.opResults).toEqual([0]);
      return Number(h.sysfs.sheaf_refill?.split(' ')[0]);
    };
    const kernel = await refills('Alloc on CPU 0');
    expect(kernel).toBeGreaterThan(0);
    expect(await refills('Alloc GFP_ATOMIC on CPU 0')).toBe(kernel);
    expect(page.url()).toContain('ops=A0-1');
    await expect(page.getByRole('group', { name: 'Context: GFP_ATOMIC, kmalloc_nolock and kfree_nolock' })).toContainText('from 7.0 they refill whenever spinning is allowed');
  });

  test('on 7.0 a kmalloc_nolock injected inside an alloc\'s sheaf section takes the slab path', async ({ page }) => {
    await page.goto(`${ISOLATED_URL}?scenario=sandbox&kernel=7.0&cpus=2&ops=a0`);
    await ready(page, 1);
    await page.getByRole('button', { name: 'Alloc on CPU 0', exact: true }).click();
    await ready(page, 2);
    // Micro-step back into an alloc: it stops inside alloc_from_pcs (point 5), the local trylock held.
    await page.getByTestId('slub-canvas').focus();
    await page.keyboard.press(',');
    const ctx = page.getByRole('group', { name: 'Context: GFP_ATOMIC, kmalloc_nolock and kfree_nolock' });
    await expect(ctx.getByRole('button', { name: 'Interrupt here: kmalloc_nolock' })).toBeEnabled();
    const slowBefore = await page.evaluate(() => window.__slablabSlub?.stats.ALLOC_SLOWPATH ?? -1);
    await ctx.getByRole('button', { name: 'Interrupt here: kmalloc_nolock' }).click();
    await expect(page).toHaveURL(/ops=a0\.a0\.i\d-5-0-n(&|$)/);
    await page.getByRole('button', { name: 'Step', exact: true }).click();
    await page.waitForFunction((b) => (window.__slablabSlub?.stats.ALLOC_SLOWPATH ?? -1) > b, slowBefore);
    expect((await ready(page, 2)).check).toBe('');
    // At the end, exactly one slow-path allocation more than the same two allocs without the interrupt: the handler's.
    const slowAtEnd = async (ops: string) => {
      await page.goto(`${ISOLATED_URL}?scenario=sandbox&kernel=7.0&cpus=2&ops=${ops}`);
      await ready(page, 2);
      const step = page.getByRole('button', { name: 'Step', exact: true });
      while (await step.isEnabled()) {
        const at = await page.evaluate(() => window.__slablabSlub?.stop ?? 0);
        await step.click();
        await page.waitForFunction((b) => !!window.__slablabSlub?.ready && window.__slablabSlub.stop > b, at);
      }
      return page.evaluate(() => window.__slablabSlub?.stats.ALLOC_SLOWPATH ?? -1);
    };
    const withIrq = new URL(page.url()).searchParams.get('ops') ?? '';
    expect(await slowAtEnd(withIrq)).toBe((await slowAtEnd('a0.a0')) + 1);
  });

  test('on 6.17 the context and no-lock operations are not offered, and the panel says why', async ({ page }) => {
    await page.goto(`${ISOLATED_URL}?scenario=sandbox&kernel=6.17&cpus=2`);
    await ready(page, 0);
    const ctx = page.getByRole('group', { name: 'Context: GFP_ATOMIC, kmalloc_nolock and kfree_nolock' });
    await expect(ctx.getByRole('button')).toHaveCount(0);
    await expect(ctx).toContainText('they came with 6.18');
    await expect(ctx).toContainText('without sheaves they take the same path as GFP_KERNEL');
  });
});
