// Waiting for <slab-lab> figures, for the specs that host them.
import type { Page } from '@playwright/test';
import type { SlabLabElement } from '../web/embed/slab-lab';
import type { LabState } from '../web/lab/host';

/** Scrolls figure `id` into view and returns its state once it shows a loaded stop (stop `step`, if given). */
export async function figureState(page: Page, id: string, step?: number): Promise<LabState> {
  await page.locator(`#${id}`).scrollIntoViewIfNeeded();
  const handle = await page.waitForFunction(
    ([id, step]) => {
      const s = (document.getElementById(id as string) as SlabLabElement | null)?.state;
      return s && s.ready && s.stops > 0 && (step === undefined || s.step === step) ? s : null;
    },
    [id, step] as const,
  );
  return (await handle.jsonValue()) as LabState;
}

/** Every figure of the page, each scrolled to and loaded; returns their ids. */
export async function loadFigures(page: Page): Promise<string[]> {
  const ids = await page.locator('slab-lab').evaluateAll((els) => els.map((e) => e.id));
  for (const id of ids) await figureState(page, id);
  return ids;
}

/**
 * Waits until every canvas on the page has settled (no LabCanvas transition running:
 * data-motion), then for the views' own step animations (SLAB's moves, percpu's memmoves: well
 * under a second), so that a screenshot shows the step, not a frame of its motion.
 */
export async function settled(page: Page): Promise<void> {
  await page.waitForFunction(() => document.querySelectorAll('canvas[data-motion=on]').length === 0);
  await page.waitForTimeout(900);
  await page.waitForFunction(() => document.querySelectorAll('canvas[data-motion=on]').length === 0);
}
