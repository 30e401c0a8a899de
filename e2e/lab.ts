// Helpers every step view's spec shares: the test hook of a view (web/lab/step-glue.ts
// useStepHook: ready, stop, stops, caption, position, opResults, then the view's own), waited
// for at a stop, and one click of a transport button followed by the next state.
import type { Page } from '@playwright/test';
import type { StepHookBase } from '../web/lab/step-glue';

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
