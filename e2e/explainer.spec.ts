// The explainer: the model's C beside the picture (the running line, the
// Elixir link), the motion between stops (and none under reduced motion; a
// step never waits for it), addresses and the hardened free pointer in the
// inspector, and "find address".
import { expect, test, type Page } from '@playwright/test';
import type { SlubTestHook } from '../web/slub/test-hook';
import { stepView } from './lab';
import { PLAIN_URL } from './servers';

// The step views' shared helpers (e2e/lab.ts), typed with this view's hook.
const { ready, atPosition } = stepView<SlubTestHook>('__slablabSlub');

/** Micro-steps until the caption says the CPU is inside the fast path, before its cmpxchg. */
async function toFirstPoint(page: Page): Promise<void> {
  for (let i = 0; i < 10 && !/micro-step/i.test((await page.getByTestId('slub-position').textContent()) ?? ''); i++) {
    const at = await page.evaluate(() => window.__slablabSlub?.stop ?? 0);
    await page.getByRole('button', { name: 'Micro-step', exact: true }).click();
    await ready(page, at + 1);
  }
}

test.describe('the code panel', () => {
  test.use({ viewport: { width: 1280, height: 900 } });

  for (const [variant, fn] of [
    ['cmpxchg', 'slab_alloc'],
    ['rt', 'slab_alloc_rt'],
  ] as const)
    test(`why the tid, ${variant}: the micro-step's line in ${fn}, and the kernel function on Elixir`, async ({ page }) => {
      await page.goto(`${PLAIN_URL}?scenario=why-tid&cpus=2&variant=${variant}`);
      await ready(page, 0);
      await expect(page.getByTestId('slub-code')).toHaveAttribute('open', '');
      await toFirstPoint(page);
      await expect(page.getByTestId('slub-code').locator('summary')).toHaveText(new RegExp(`^Code: ${fn} \\(alloc\\.c:\\d+\\)$`));
      const now = page.getByTestId('slub-code').locator('[aria-current="step"]');
      await expect(now).toHaveCount(1);
      await expect(now).toContainText('SL_PREEMPT_POINT(');
      await expect(now).toContainText('SL_SLUB_PP_ALLOC_BEFORE_CAS');
      await expect(page.getByTestId('slub-code-why')).toContainText('the preemption point CPU 0 stopped at (SL_SLUB_PP_ALLOC_BEFORE_CAS)');
      const link = page.getByTestId('slub-code-why').getByRole('link');
      await expect(link).toHaveAttribute('href', /^https:\/\/elixir\.bootlin\.com\/linux\/v6\.17\/C\/ident\/(slab_alloc_node|__slab_alloc_node)$/);
      // At the operation's end the line is where its last event was recorded.
      await page.getByRole('button', { name: 'Step', exact: true }).click();
      await expect(page.getByTestId('slub-code-why')).toContainText("where the operation's last event");
      await expect(page.getByTestId('slub-code').locator('[aria-current="step"]')).toContainText(/SLI_EV|SL_EV_/);
    });

  test('a compact embed leaves the panel out; controls=full brings it, on the current line', async ({ page }) => {
    await page.goto(`${PLAIN_URL}embed.html?view=slub&scenario=fast-path&cpus=2&step=2`);
    await ready(page, 2);
    await expect(page.getByTestId('slub-code')).toHaveCount(0);
    await page.goto(`${PLAIN_URL}embed.html?view=slub&scenario=fast-path&cpus=2&step=2&controls=full`);
    await ready(page, 2);
    const panel = page.getByTestId('slub-code');
    await expect(panel).toHaveAttribute('open', '');
    await expect(panel.locator('[aria-current="step"]')).toHaveCount(1);
  });
});

test.describe('motion between stops', () => {
  test.use({ viewport: { width: 1280, height: 900 } });

  /** Records every value the canvas's data-motion takes. */
  async function watchMotion(page: Page): Promise<void> {
    await page.getByTestId('slub-canvas').evaluate((c) => {
      const seen: string[] = [];
      (window as unknown as { __motion: string[] }).__motion = seen;
      new MutationObserver(() => seen.push(c.getAttribute('data-motion') ?? 'off')).observe(c, { attributes: true, attributeFilter: ['data-motion'] });
    });
  }
  const motion = (page: Page) => page.evaluate(() => (window as unknown as { __motion: string[] }).__motion);

  test('a step animates, ends within the motion time, and never holds the next step back', async ({ page }) => {
    await page.goto(`${PLAIN_URL}?scenario=remote-frees&cpus=2`);
    await ready(page, 0);
    await watchMotion(page);
    const step = page.getByRole('button', { name: 'Step', exact: true });
    await step.click();
    await step.click();
    // Both steps are taken at once: the state does not wait for the picture.
    await atPosition(page, 'Step 2 of');
    await expect.poll(() => motion(page)).toContain('on');
    await expect(page.getByTestId('slub-canvas')).not.toHaveAttribute('data-motion', /./, { timeout: 2_000 });
  });

  test('under prefers-reduced-motion each change is the short plain fade, never the glide', async ({ page }) => {
    await page.emulateMedia({ reducedMotion: 'reduce' });
    await page.goto(`${PLAIN_URL}?scenario=remote-frees&cpus=2`);
    await ready(page, 0);
    await watchMotion(page);
    for (let i = 1; i <= 3; i++) {
      await page.getByRole('button', { name: 'Step', exact: true }).click();
      await atPosition(page, `Step ${i} of`);
    }
    await page.evaluate(() => new Promise(requestAnimationFrame));
    // web/lab/motion.ts: REDUCED_MOTION_MS (150) for the fade against MOTION_MS (500) for a glide.
    await expect(page.getByTestId('slub-canvas')).toHaveAttribute('data-motion-ms', '150');
  });
});

test.describe('addresses', () => {
  test.use({ viewport: { width: 1280, height: 900 } });

  test('a hardened cache: the inspector shows the address and the stored free pointer decoded; find address names the object', async ({ page }) => {
    await page.goto(`${PLAIN_URL}?scenario=fast-path&cpus=2&hardened=on&step=4`);
    await ready(page, 4);
    await page.getByTestId('slub-canvas').focus();
    await page.keyboard.press('ArrowDown');
    // Object 5: on CPU 0's freelist after the set-up alloc and the story's first two steps.
    for (let i = 0; i < 6; i++) await page.keyboard.press('ArrowRight');
    const inspector = page.getByTestId('inspector');
    await expect(inspector).toContainText('Object 5 of slab pfn');
    await expect(inspector).toContainText('on a CPU freelist');
    await expect(inspector).toContainText(/Address 0xffff8880000\w+\./);
    await expect(inspector).toContainText(/stores 0x[0-9a-f]{16}: hardened, decoded \(\^ s->random 0x[0-9a-f]{16} \^ swab\(0x[0-9a-f]{16}\)\) it is 0xffff8880000\w+, object \d+\./);
    const address = /Address (0x[0-9a-f]+)\./.exec((await inspector.textContent()) ?? '')?.[1] ?? '';
    await page.getByTestId('slub-find-input').fill(address);
    await page.getByRole('button', { name: 'Find', exact: true }).click();
    await expect(page.getByTestId('slub-find-result')).toContainText(`${address} is the start of object 5 of slab pfn`);
    await expect(page.getByTestId('slub-find-result')).toContainText("the slab is on CPU 0's CPU slab");
    await page.getByTestId('slub-find-input').fill('zz');
    await page.getByTestId('slub-find-input').press('Enter');
    await expect(page.getByTestId('slub-find-result')).toHaveText('"zz" is not an address: give up to 16 hex digits, e.g. 0xffff888000000000.');
  });
});
