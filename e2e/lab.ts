// Helpers every step view's spec shares (one copy: the specs import them): the test hook of a
// view (web/lab/step-glue.ts useStepHook: ready, stop, stops, caption, position, opResults,
// then the view's own), waited for at a stop, one click of a transport button followed by the
// next state, playing to the end, opening the app and the screenshots for the docs.
import { expect, type Locator, type Page } from '@playwright/test';
import type { StepHookBase } from '../web/lab/step-glue';
import { settled } from './figures';
import { ISOLATED_URL } from './servers';

/** A step view's hook name on the window. */
export type HookName = '__slablabSlub' | '__slablabSlab' | '__slablabPercpu';

/** The view's hook once it shows a loaded stop (stop `stop`, if given). */
export async function labReady<H extends StepHookBase = StepHookBase>(page: Page, name: HookName, stop?: number): Promise<H> {
  const handle = await page.waitForFunction(
    ([n, s]) => {
      const h = (window as unknown as Record<string, StepHookBase | undefined>)[n as string];
      return h && h.ready && h.stops > 0 && (s === undefined || s === null || h.stop === s) ? h : null;
    },
    [name, stop ?? null] as const,
  );
  return (await handle.jsonValue()) as H;
}

/** Clicks `button` and waits for a ready state other than `before`'s stop or script (an operation added by hand changes the script). */
export async function clickAndWait<H extends StepHookBase = StepHookBase>(page: Page, name: HookName, before: StepHookBase, click: () => Promise<void>): Promise<H> {
  await click();
  const handle = await page.waitForFunction(
    ([n, stop, nops]) => {
      const h = (window as unknown as Record<string, StepHookBase | undefined>)[n as string];
      return h && h.ready && (h.stop !== stop || h.opResults.length !== nops) ? h : null;
    },
    [name, before.stop, before.opResults.length] as const,
  );
  return (await handle.jsonValue()) as H;
}

/** The view's hook as it is now (throws when the view has none yet). */
export async function labHook<H extends StepHookBase = StepHookBase>(page: Page, name: HookName): Promise<H> {
  return (await page.evaluate((n) => {
    const h = (window as unknown as Record<string, StepHookBase | undefined>)[n];
    if (!h) throw new Error(`no test hook ${n}`);
    return h;
  }, name)) as H;
}

/** Opens the app at `?query` on the cross-origin isolated server and waits for the threads build. */
export async function openLab(page: Page, query: string): Promise<void> {
  await page.goto(`${ISOLATED_URL}?${query}`);
  await expect(page.getByTestId('core-mode')).toContainText('threads');
}

/** The page (or one part of it) to docs/screenshots/NAME.png when SCREENSHOTS=1. */
export async function shot(page: Page, name: string, part?: Locator): Promise<void> {
  if (process.env.SCREENSHOTS !== '1') return;
  await settled(page); // a settled frame, never one of a transition
  if (part) await part.screenshot({ path: `docs/screenshots/${name}.png` });
  else await page.screenshot({ path: `docs/screenshots/${name}.png`, fullPage: true });
}

/**
 * A step view's helpers, typed with its hook H: the hook now (`hook`), once
 * a stop is loaded (`ready`), after one click of Step or Micro-step
 * (`stepOnce`), at the last stop by clicking Step (`playToEnd`), and once the
 * progress counter starts with `prefix` and the state is on screen
 * (`atPosition`, on any page of the context).
 */
export function stepView<H extends StepHookBase>(name: HookName) {
  const hook = (page: Page) => labHook<H>(page, name);
  const ready = (page: Page, stop?: number) => labReady<H>(page, name, stop);
  const stepOnce = async (page: Page, h: StepHookBase, button: 'Step' | 'Micro-step' = 'Step'): Promise<H> => {
    await page.getByRole('button', { name: button, exact: true }).click();
    await page.waitForFunction(
      ([n, b]) => {
        const now = (window as unknown as Record<string, StepHookBase | undefined>)[n as string];
        return !!now?.ready && now.stop > (b as number);
      },
      [name, h.stop] as const,
    );
    return hook(page);
  };
  const playToEnd = async (page: Page): Promise<H> => {
    let h = await ready(page);
    const step = page.getByRole('button', { name: 'Step', exact: true });
    while (await step.isEnabled()) h = await stepOnce(page, h);
    return ready(page, h.stops - 1);
  };
  const atPosition = async (page: Page, prefix: string): Promise<H> => {
    await page.waitForFunction(
      ([n, p]) => {
        const now = (window as unknown as Record<string, StepHookBase | undefined>)[n as string];
        return !!now?.ready && now.position.startsWith(p as string);
      },
      [name, prefix] as const,
    );
    return hook(page);
  };
  return { hook, ready, stepOnce, playToEnd, atPosition };
}

/** Records every text any canvas draws (fillText), from before the page loads; `drawnTexts` reads and clears them. */
export async function recordTexts(page: Page): Promise<void> {
  await page.addInitScript(() => {
    const w = window as unknown as { __texts: Set<string> };
    w.__texts = new Set();
    const fill = CanvasRenderingContext2D.prototype.fillText;
    CanvasRenderingContext2D.prototype.fillText = function (this: CanvasRenderingContext2D, text: string, x: number, y: number, maxWidth?: number) {
      w.__texts.add(text);
      if (maxWidth === undefined) fill.call(this, text, x, y);
      else fill.call(this, text, x, y, maxWidth);
    };
  });
}

export const drawnTexts = (page: Page) =>
  page.evaluate(() => {
    const w = window as unknown as { __texts: Set<string> };
    const all = [...w.__texts];
    w.__texts.clear();
    return all;
  });
