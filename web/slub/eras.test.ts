// The SLUB view across kernel versions: every scenario on every version it
// tells (to its end, checker clean, Back by replay byte-equal to a fresh
// world), the sheaf stories' captions against the counters and states they
// name, the `kernel=` parameter and its panes, and the sheaf ops' text form.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { decodeEvents, EventKind } from '../core/events.generated';
import { parseParams } from '../lab/params';
import { replaySessions, type Session } from '../lab/session';
import { loadNodeCore } from '../test/node-core';
import type { OpNames } from '../lab/describe';
import { compare, comparisonText } from './compare';
import { SLUB_EVENT_WORDS } from './describe';
import type { SlubLoadExtra, WorldConfig } from './protocol';
import { misfit, SCENARIOS, scenarioConfig, storyFor, type Scenario } from './scenarios';
import { parseScript, scriptToText, type AnyRef, type Script } from './script';
import { eraOf, kernelNotice, parseKernelVersion, SlubApi, type KernelVersion, type SlubModule } from './slub-api';
import { decodeSnapshot, ObjState, stat, STAT_NAMES, type SlubSnapshot, type StatName } from './snapshot';
import { paneKernels, scenarioFor, SLUB_PARAMS, slubStepView } from './view';
import { slubSessions } from './worker';

let api: SlubApi;
let module: SlubModule;
let open: (world: unknown, script: unknown) => Session;
/** Sessions a test opened and left open: closed after it, so the core's fixed heap does not fill up. */
const live = new Set<Session>();
beforeAll(async () => {
  module = await loadNodeCore<SlubModule>();
  api = new SlubApi(module);
  const raw = replaySessions(slubSessions(api));
  open = (world, script) => {
    const s = raw(world, script);
    live.add(s);
    const dispose = s.dispose.bind(s);
    s.dispose = () => {
      if (live.delete(s)) dispose();
    };
    return s;
  };
});
afterEach(() => {
  for (const s of [...live]) s.dispose();
});

const VERSIONS = ['4.4', '6.17', '6.18', '7.0', '7.3'].map(parseKernelVersion);
const name = (v: KernelVersion) => `${v.major}.${v.minor}`;

function loadStory(sc: Scenario, v: KernelVersion, cpus = 2) {
  const cfg: WorldConfig = scenarioConfig(sc, cpus, sc.defaultFastpath, sc.defaultBulk, undefined, v);
  const story = sc.build({ cpus, objects: api.geometryAt(cfg.objectSize, cpus, v).objects });
  const session = open(cfg, story.script);
  const r = session.load();
  /** The snapshot at the end of op i (-1: the start). */
  const after = (i: number): SlubSnapshot => {
    const k = r.stops.findIndex((s) => s.micro === 0 && s.ops === i + 1);
    return decodeSnapshot(session.at(k).snapshot);
  };
  return { cfg, story, session, r, after };
}

describe('every scenario on every version it tells', () => {
  for (const sc of SCENARIOS)
    for (const v of VERSIONS) {
      if (misfit(sc, v)) continue;
      it(`${sc.id} on ${name(v)}: to its end with a clean checker, Back by replay equal to a fresh world`, () => {
        const { cfg, story, session, r } = loadStory(sc, v);
        expect(story.captions).toHaveLength(story.script.ops.length);
        const last = r.stops.length - 1;
        const end = session.at(last);
        expect(end.check?.rc, end.check?.message).toBe(0);
        expect(r.ops.every((o) => o.result >= 0), JSON.stringify(r.ops)).toBe(true);
        expect(r.ops.map((o) => o.opNum)).toEqual([...new Set(r.ops.map((o) => o.opNum))]);
        const bytes = (s: Session, i: number) => Array.from(new Uint8Array(s.at(i).snapshot));
        const forward = r.stops.map((_, i) => bytes(session, i));
        for (let i = last; i >= 0; i--) expect(bytes(session, i)).toEqual(forward[i]);
        const fresh = open(cfg, story.script);
        fresh.load();
        for (const i of [last, 0, Math.floor(last / 2)]) expect(bytes(fresh, i)).toEqual(forward[i]);
        expect(decodeSnapshot(end.snapshot).kernel).toMatchObject({ major: v.major, minor: v.minor });
        fresh.dispose();
        session.dispose();
      });
    }

  it('says why a story does not fit a version, naming it', () => {
    const fast = SCENARIOS.find((s) => s.id === 'fast-path');
    const hit = SCENARIOS.find((s) => s.id === 'sheaf-hit');
    if (!fast || !hit) throw new Error('scenarios missing');
    expect(misfit(fast, parseKernelVersion('7.0'))).toMatch(/^"The fast path" does not apply to Linux 7\.0: .*tid/);
    expect(misfit(hit, parseKernelVersion('6.17'))).toMatch(/does not apply to Linux 6\.17: before 6\.18 there are no sheaves/);
    expect(misfit(fast, parseKernelVersion('4.4'))).toBeNull();
  });
});

describe('the sheaf stories say what the counters show', () => {
  const delta = (a: SlubSnapshot, b: SlubSnapshot, n: StatName) => stat(b, n) - stat(a, n);
  const byId = (id: string) => {
    const sc = SCENARIOS.find((s) => s.id === id);
    if (!sc) throw new Error(id);
    return sc;
  };
  for (const v of ['6.18', '7.0'].map(parseKernelVersion)) {
    it(`a sheaf hit on ${name(v)}: alloc_cpu_sheaf up by one, the object allocated, and back on main when freed`, () => {
      const { story, r, after } = loadStory(byId('sheaf-hit'), v);
      expect(story.captions[0]).toMatch(/barn_get_fail.*refill_sheaf/);
      const [s0, s1, s2] = [after(0), after(1), after(2)];
      expect(delta(s0, s1, 'ALLOC_CPU_SHEAF')).toBe(1);
      expect(delta(after(-1), s0, 'SHEAF_REFILL')).toBe(4);
      expect(delta(after(-1), s0, 'BARN_GET_FAIL')).toBe(1);
      const obj = (r.script as Script).ops[2]?.refs?.[0];
      const slab = s1.slab.pfn.indexOf(obj?.pfn ?? -1);
      expect(s1.obj.state[(s1.slab.firstObj[slab] ?? 0) + (obj?.index ?? 0)]).toBe(ObjState.ALLOCATED);
      expect(delta(s1, s2, 'FREE_CPU_SHEAF')).toBe(1);
      expect(s2.obj.state[(s2.slab.firstObj[slab] ?? 0) + (obj?.index ?? 0)]).toBe(ObjState.CPU_SHEAF);
    });

    it(`the spare and the barn on ${name(v)}: a swap, barn_put of a full main, barn_get on the other CPU`, () => {
      const swap = loadStory(byId('spare-swap'), v);
      const main = (s: SlubSnapshot) => s.sheaves.sheaf.id[s.sheaves.pcs[0]?.main ?? 0];
      const spare = (s: SlubSnapshot) => s.sheaves.sheaf.id[s.sheaves.pcs[0]?.spare ?? 0];
      const [before, at] = [swap.after(6), swap.after(7)];
      expect(main(at)).toBe(spare(before));
      expect(spare(at)).toBe(main(before));
      const barn = loadStory(byId('barn-exchange'), v);
      expect(delta(barn.after(3), barn.after(4), 'BARN_PUT')).toBe(1);
      expect(barn.after(4).sheaves.barnFull).toBe(1);
      expect(delta(barn.after(4), barn.after(5), 'BARN_GET')).toBe(1);
      expect(barn.after(5).sheaves.barnFull).toBe(0);
    });

    it(`a refill from slabs on ${name(v)}: sheaf_refill of 4 from the two partial slabs and a new one, their freelists emptied`, () => {
      const { story, r, after } = loadStory(byId('sheaf-refill'), v);
      expect(story.captions[3]).toMatch(/barn_get_fail.*refill_sheaf.*sheaf_refill counts 4.*alloc_slab/);
      const [set, refilled] = [after(2), after(3)];
      const script = r.script as Script;
      const pfns = [script.ops[1]?.refs?.[0]?.pfn, script.ops[1]?.refs?.[2]?.pfn] as number[];
      const free = (s: SlubSnapshot, pfn: number) => {
        const i = s.slab.pfn.indexOf(pfn);
        return (s.slab.slabFreeCount[i] ?? 0) + (s.slab.cpuFreeCount[i] ?? 0);
      };
      // Before: A and B on the node partial list with 2 and 1 free objects; the barn empty, CPU 0 without a spare.
      expect(set.nodePartial.map((i) => set.slab.pfn[i]).sort()).toEqual([...pfns].sort());
      expect(pfns.map((p) => free(set, p))).toEqual([2, 1]);
      expect([set.sheaves.barnFull, set.sheaves.barnEmpty, set.sheaves.pcs[0]?.spare]).toEqual([0, 0, -1]);
      expect(delta(set, refilled, 'BARN_GET_FAIL')).toBe(1);
      expect(delta(set, refilled, 'SHEAF_REFILL')).toBe(4);
      expect(delta(set, refilled, 'ALLOC_SLAB')).toBe(1);
      expect(refilled.nslabs).toBe(set.nslabs + 1);
      expect(pfns.map((p) => free(refilled, p))).toEqual([0, 0]);
      // Three of the four sit in CPU 0's main after the pop, and the next allocation is a hit.
      expect(Array.from(refilled.obj.state).filter((x) => x === ObjState.CPU_SHEAF)).toHaveLength(3);
      expect(delta(refilled, after(4), 'ALLOC_CPU_SHEAF')).toBe(1);
    });

    it(`a flush to slabs on ${name(v)}: the barn at 10 full sheaves, barn_put_fail, the spare's 4 objects back to slabs`, () => {
      const { story, after } = loadStory(byId('barn-full-flush'), v);
      const last = story.script.ops.length - 1;
      expect(story.captions[last]).toMatch(/10 full sheaves.*barn_put_fail.*sheaf_flush counts its 4 objects/);
      const [full, flushed] = [after(last - 1), after(last)];
      expect(full.sheaves.barnFull).toBe(10);
      expect(stat(full, 'BARN_PUT')).toBe(10);
      expect(delta(full, flushed, 'BARN_PUT_FAIL')).toBe(1);
      expect(delta(full, flushed, 'SHEAF_FLUSH')).toBe(4);
      expect(flushed.sheaves.barnFull).toBe(10);
      const held = (s: SlubSnapshot) => Array.from(s.obj.state).filter((x) => x === ObjState.CPU_SHEAF).length;
      // Main and spare held 8; after: the full spare (old main) and the pushed object.
      expect([held(full), held(flushed)]).toEqual([8, 5]);
      const slabFree = (s: SlubSnapshot) => Array.from(s.obj.state).filter((x) => x === ObjState.SLAB_FREE).length;
      expect(slabFree(flushed) - slabFree(full)).toBe(4);
    });

    it(`kfree_rcu, the prefill API and an interrupt on ${name(v)}`, () => {
      const rcu = loadStory(byId('kfree-rcu'), v);
      expect(delta(rcu.after(0), rcu.after(4), 'FREE_RCU_SHEAF')).toBe(4);
      const waiting = rcu.after(4);
      expect(Array.from(waiting.obj.state).filter((x) => x === ObjState.RCU)).toHaveLength(4);
      expect(delta(waiting, rcu.after(5), 'BARN_PUT')).toBe(1);
      expect(Array.from(rcu.after(5).obj.state).filter((x) => x === ObjState.BARN)).toHaveLength(4);

      const pre = loadStory(byId('prefill'), v);
      expect(delta(pre.after(0), pre.after(1), 'SHEAF_PREFILL_FAST') + delta(pre.after(0), pre.after(1), 'SHEAF_PREFILL_SLOW')).toBe(1);
      expect(Array.from(pre.after(1).obj.state).filter((x) => x === ObjState.PREFILLED)).toHaveLength(4);
      expect(delta(pre.after(3), pre.after(4), 'SHEAF_RETURN_FAST')).toBe(1);
      expect(delta(pre.after(4), pre.after(5), 'SHEAF_PREFILL_OVERSIZE')).toBe(1);
      expect(delta(pre.after(5), pre.after(6), 'SHEAF_FLUSH')).toBe(9);

      const irq = loadStory(byId('sheaf-irq'), v);
      const events = decodeEvents(irq.r.events);
      expect(events.filter((e) => e.kind === EventKind.SLUB_SHEAF_TRYLOCK_FAIL)).toHaveLength(1);
      expect(events.filter((e) => e.kind === EventKind.PREEMPT_POINT && e.arg0 === 5).length).toBeGreaterThan(0);
      // At the sheaf preemption point the lane is inside its sheaf section.
      const k = irq.r.stops.findIndex((s) => s.point === 5 && s.opIndex === 1);
      expect(decodeSnapshot(irq.session.at(k).snapshot).sheaves.pcs[0]?.locked).toBe(true);
    });
  }

  it('puts every sheaf event of the stories into words', () => {
    const seen = new Set<number>();
    for (const sc of SCENARIOS.filter((x) => !misfit(x, parseKernelVersion('7.0'))))
      for (const e of decodeEvents(loadStory(sc, parseKernelVersion('7.0')).r.events)) {
        if (e.kind < EventKind.SLUB_SHEAF_ALLOC || e.kind > EventKind.SLUB_PCS_SHEAVES) continue;
        seen.add(e.kind);
        const words = SLUB_EVENT_WORDS.event(e, { name: (op: number) => `op ${op}` } as OpNames);
        expect(words, `kind ${e.kind}`).not.toMatch(/^SLUB_/);
        expect(SLUB_EVENT_WORDS.groupOf(e.kind)).toMatch(/^(sheaves|fast)$/);
      }
    expect(seen.size).toBeGreaterThanOrEqual(14);
  });

  it('7.0 bootstrap: allocations before it take the slab path (the set-up one and step 1), after bootstrap_cache_sheaves a sheaf', () => {
    const boot = loadStory(byId('bootstrap'), parseKernelVersion('7.0'));
    expect(boot.story.setup).toBe(1);
    for (const op of [0, 1]) {
      expect(boot.after(op).sheaves.pcs[0]?.main).toBe(-1);
      expect(delta(boot.after(op - 1), boot.after(op), 'ALLOC_SLOWPATH')).toBe(1);
    }
    expect(boot.after(2).sheaves.pcs[0]?.main).toBeGreaterThanOrEqual(0);
    expect(delta(boot.after(2), boot.after(3), 'ALLOC_CPU_SHEAF')).toBe(1);
  });
});

describe('what changed after 7.0, side by side', () => {
  const byId = (id: string) => {
    const sc = SCENARIOS.find((s) => s.id === id);
    if (!sc) throw new Error(id);
    return sc;
  };
  const delta = (a: SlubSnapshot, b: SlubSnapshot, n: StatName) => stat(b, n) - stat(a, n);
  it('a refill from partial slabs: 7.0 gives the surplus back with __slab_free (free_add_partial), 7.3 with one cmpxchg under list_lock', () => {
    const sc = byId('refill-partial');
    expect(sc.kernels).toEqual(['7.0', '7.3']);
    const [old, now] = ['7.0', '7.3'].map((k) => loadStory(sc, parseKernelVersion(k)));
    if (!old || !now) throw new Error('stories');
    expect(old.story.captions[4]).toMatch(/free_add_partial counts 2/);
    expect(old.story.captions[5]).toMatch(/sheaf_refill 4.*7\.0.*free_add_partial counts a 3rd time.*7\.3.*no counter moves/);
    for (const s of [old, now]) {
      expect(delta(s.after(-1), s.after(3), 'FREE_ADD_PARTIAL')).toBe(0); // the frees stayed in sheaves
      expect(delta(s.after(3), s.after(4), 'FREE_ADD_PARTIAL')).toBe(2); // both slabs join the list at the flush
      expect(s.after(4).node.nrPartial).toBe(2);
      expect(delta(s.after(4), s.after(5), 'SHEAF_REFILL')).toBe(4);
      expect(s.after(5).node.nrPartial).toBe(1); // one slab, with the 2 surplus objects
    }
    expect(delta(old.after(4), old.after(5), 'FREE_ADD_PARTIAL')).toBe(1);
    expect(delta(now.after(4), now.after(5), 'FREE_ADD_PARTIAL')).toBe(0);
    // list_lock: get_partial_node_bulk, then __slab_free (7.0) or the splice and the try-return's lock (7.3)
    expect(delta(old.after(4), old.after(5), 'MODEL_LIST_LOCK')).toBe(2);
    expect(delta(now.after(4), now.after(5), 'MODEL_LIST_LOCK')).toBe(3);
    expect(old.story.outro).toMatch(/free_add_partial stays at 2 where 7\.0 counts 3/);
  });

  it('oversize sheaves: 7.3 counts them in sheaf_alloc and sheaf_free, 7.0 does not', () => {
    const sc = byId('oversize-counted');
    const [old, now] = ['7.0', '7.3'].map((k) => loadStory(sc, parseKernelVersion(k)));
    if (!old || !now) throw new Error('stories');
    expect(sc.build({ cpus: 2, objects: 8 }).captions[1]).toMatch(/sheaf_prefill_oversize.*7\.0.*without a counter.*7\.3.*sheaf_alloc/);
    for (const s of [old, now]) expect(delta(s.after(0), s.after(1), 'SHEAF_PREFILL_OVERSIZE')).toBe(1);
    expect(delta(old.after(0), old.after(1), 'SHEAF_ALLOC')).toBe(0);
    expect(delta(now.after(0), now.after(1), 'SHEAF_ALLOC')).toBe(1);
    expect(delta(now.after(2), now.after(3), 'SHEAF_FLUSH')).toBe(8);
    expect(delta(old.after(2), old.after(3), 'SHEAF_FREE')).toBe(0);
    expect(delta(now.after(2), now.after(3), 'SHEAF_FREE')).toBe(1);
  });
});

describe('kernel= and its panes', () => {
  const values = (q: string) => {
    const p = new URLSearchParams(q);
    return parseParams(SLUB_PARAMS, (k) => p.get(k));
  };
  it('takes one version or a list of up to 4, and names what it accepts', () => {
    expect(values('').values.kernel).toEqual(['6.17']);
    expect(values('kernel=6.17,7.0').values.kernel).toEqual(['6.17', '7.0']);
    // The core's forms: a stable release, an -rc, a tag; a version newer than 7.3 is taken (with a notice).
    expect(values('kernel=6.18.4,7.3-rc2,v7.1').values.kernel).toEqual(['6.18', '7.3', '7.1']);
    expect(values('kernel=8.1').problems).toHaveLength(0);
    const bad = values('kernel=4.2').problems.join(' ');
    expect(bad).toMatch(/kernel="4\.2" is not valid: expected a Linux version from 4\.3, written X\.Y, X\.Y\.Z or X\.Y-rcN.*from 4\.3.*Using 6\.17/);
    expect(values('kernel=7.3-rc').problems).toHaveLength(1);
    expect(values('kernel=6.17,6.17').problems).toHaveLength(1);
    expect(values('kernel=4.4,6.17,6.18,7.0,7.1').problems).toHaveLength(1);
    expect(values('kernel=7.00').values.kernel).toEqual(['7.0']);
  });

  it('one pane per kernel (7.0 has one fast path), labelled with its version, its code linked at that version', () => {
    const v = values('kernel=6.17,7.0&variant=cmpxchg,plain&scenario=sheaf-hit').values;
    const panes = slubStepView.panes(v);
    expect(panes.map((p) => p.label)).toEqual(['6.17 · cmpxchg', '6.17 · plain', '7.0 · cmpxchg']);
    expect(paneKernels(v)).toEqual(['6.17', '6.17', '7.0']);
    expect([0, 1, 2].map((i) => slubStepView.kernel?.version(v, i))).toEqual(['v6.17', 'v6.17', 'v7.0']);
    expect(panes[2]?.world).toMatchObject({ version: { major: 7, minor: 0 }, sheafCapacity: 4, exactCapacity: true });
    expect(panes[0]?.world.version).toBeUndefined();
    // 6.18: a sheaf story's cache opts in; a per-CPU slab story's does not, as most 6.18 caches.
    expect(slubStepView.panes(values('kernel=6.18&scenario=sheaf-hit').values)[0]?.world.sheafCapacity).toBe(4);
    expect(slubStepView.panes(values('kernel=6.18&scenario=fast-path').values)[0]?.world.sheafCapacity).toBeUndefined();
    expect(slubStepView.panes(values('kernel=6.18&scenario=sandbox').values)[0]?.world.sheafCapacity).toBe(32);
    expect(eraOf(parseKernelVersion('6.18'))).toBe('opt-in-sheaves');
  });

  it('a kernel where the story does not apply lands on one that does, and says so; side by side with one it fits, it runs on both', async () => {
    const info = async () => ({ objects: 16, order: 0, size: 512, fallbackOrder: 0, fallbackObjects: 16 });
    // ?mode=slub&kernel=7.0: the default story, "The fast path", has no 7.0; its 7.0 counterpart runs instead.
    const plain = values('kernel=7.0').values;
    expect(plain.scenario).toBe('fast-path');
    expect(scenarioFor(plain)?.id).toBe('sheaf-hit');
    expect(slubStepView.panes(plain)[0]?.world).toMatchObject({ sheafCapacity: 4, exactCapacity: true });
    const swapped = await slubStepView.story(plain, info);
    expect(swapped.intro).toMatch(/^"The fast path" does not apply to Linux 7\.0: .* Showing "A sheaf hit" instead\. Allocation and free through CPU 0's main sheaf/);
    expect(swapped.captions[0]).toMatch(/barn_get_fail/);
    expect(scenarioFor(values('kernel=7.0&scenario=why-tid').values)?.id).toBe('sheaf-irq');
    expect(scenarioFor(values('kernel=4.4&scenario=refill-partial').values)?.id).toBe('slow-path');
    expect(scenarioFor(values('kernel=6.17&scenario=bootstrap').values)?.id).toBe('fast-path');
    // Every story on every era lands on a story of that era.
    for (const sc of SCENARIOS)
      for (const v of VERSIONS) expect(misfit(storyFor(sc, [v], SCENARIOS), v), `${sc.id} on ${name(v)}`).toBeNull();
    const story = await slubStepView.story(values('kernel=6.17,7.0&scenario=why-tid').values, info);
    expect(story.intro).toMatch(/does not apply to Linux 7\.0.*Its pane runs the same operations/);
    // A version newer than the newest modelled: the page says whose rules it gets.
    const newer = await slubStepView.story(values('kernel=7.9&scenario=sheaf-hit').values, info);
    expect(newer.intro).toMatch(/^Linux 7\.9 is newer than the newest kernel the model follows \(7\.3\): it gets 7\.3's rules\./);
    const sandbox = await slubStepView.story(values('kernel=8.0&scenario=sandbox').values, info);
    expect(sandbox.intro).toMatch(/^Linux 8\.0 is newer/);
  });

  it('reads versions as the core does (one reader: wasm-core/src/platform/kversion.h)', () => {
    const core = (text: string): number => {
      const bytes = new TextEncoder().encode(text);
      const ptr = module._malloc(bytes.length + 1);
      module.HEAPU8.set(bytes, ptr);
      module.HEAPU8[ptr + bytes.length] = 0;
      try {
        return module._sl_api_slub_kversion_parse(ptr);
      } finally {
        module._free(ptr);
      }
    };
    const page = (text: string): number => {
      try {
        const v = parseKernelVersion(text);
        return (v.major << 8) | v.minor;
      } catch {
        return -1;
      }
    };
    const texts = ['6.18', '7.0', '7.00', '7.3', '7.3-rc2', '6.8.12', '6.8.12-rc1', 'v7.1', '8.0', '99.255', '4.3', '4.2', '3.19', '0.5', '6', '6.', '.18',
      '6.18.', '6.18-rc', '6.18-foo', '6,18', ' 6.18', '+6.18', '6.1000', '1000.1', 'v', '', '6.18.1.2', 'V6.18'];
    for (const t of texts) expect(page(t), t).toBe(core(t));
    for (const t of ['7.3', '7.4', '8.0', '6.17']) {
      const v = parseKernelVersion(t);
      const p = module._sl_api_slub_kversion_notice((v.major << 8) | v.minor);
      expect(kernelNotice(v), t).toBe(p ? module.UTF8ToString(p) : null);
    }
  });
});

describe('comparing versions', () => {
  it('counts what each kernel\'s per-CPU layer served, its slow path, list_lock, the barn lock and the objects moved', () => {
    const p = parseScript('a0.a0.a0.b1-2', 2);
    if (!p.ok) throw new Error(p.error);
    const end = (version?: KernelVersion) => {
      const cfg: WorldConfig = { ...scenarioConfig(undefined, 2, 'cmpxchg', 'detached', undefined, version) };
      const s = open(cfg, p.script as Script<AnyRef>);
      const r = s.load();
      const snap = decodeSnapshot(s.at(r.stops.length - 1).snapshot);
      s.dispose();
      return snap;
    };
    const old = end();
    // 6.17: CPU 0's first alloc takes the slow path (a new slab), the next two the tid fast path; CPU 1's bulk alloc one of each.
    // Both slow paths find the node list empty and take new slabs, which become CPU slabs: list_lock is never taken.
    expect(compare(old)).toEqual({ hits: 3, slow: 2, share: 3 / 5, casRetries: 0, listLocks: 0, barnLocks: 0, refilled: 0, flushed: 0 });
    expect(comparisonText(old)).toBe('Per-CPU layer (tid fast path): 3 served at once, 2 slow path (60% fast); cmpxchg retries 0; list_lock taken 0×.');
    expect(compare(end(parseKernelVersion('4.4'))).listLocks).toBe(0);
    const now = end(parseKernelVersion('7.0'));
    const c = compare(now);
    // 7.0: every alloc pops a sheaf, after one refill from slabs; CPU 1's bulk alloc finds an empty main and no full barn sheaf.
    expect([c.hits, c.slow, c.casRetries, c.flushed]).toEqual([3, 2, 0, 0]);
    // 7.0 takes list_lock three times: the refill of CPU 0's 28-object sheaf leaves its second new slab
    // on the node list, CPU 1's bulk allocation takes that slab off the list for its 2 objects, and
    // handing back the rest of the slab's freelist puts it on the list again.
    expect(c.listLocks).toBe(3);
    expect(c.barnLocks).toBe(stat(now, 'BARN_GET_FAIL'));
    const inSheaves = Array.from(now.obj.state).filter((x) => x === ObjState.CPU_SHEAF).length;
    expect(c.refilled).toBe(inSheaves + 3);
    expect(comparisonText(now)).toMatch(/^Per-CPU layer \(sheaves\): 3 served at once, 2 slow path \(60% fast\); cmpxchg retries 0; list_lock taken 3×; barn lock taken \d+×; \d+ objects refilled from slabs, 0 flushed to slabs\.$/);
  });

  it('gives each world its kernel\'s counter names', () => {
    const s = open(scenarioConfig(undefined, 2, 'cmpxchg', 'detached', undefined, parseKernelVersion('7.0')), { ops: [], irqs: [] });
    const names = (s.load().extra as SlubLoadExtra).statNames.kernel;
    expect(names.find((n) => n.name === 'alloc_fastpath')?.stat).toBe(STAT_NAMES.indexOf('ALLOC_CPU_SHEAF'));
    expect(names.map((n) => n.name)).not.toContain('cpuslab_flush');
    s.dispose();
  });
});

describe('the sheaf operations in script text', () => {
  it('round-trip, and bad ones say what is wrong', () => {
    const text = 'a0.k1-12-3.g1.p0-0-3.t0-0.r0-0-4.u0-0.B.s';
    const p = parseScript(text, 2);
    if (!p.ok) throw new Error(p.error);
    expect(p.script.ops.map((o) => o.kind)).toEqual(['alloc', 'kfreeRcu', 'gracePeriod', 'prefill', 'allocFromSheaf', 'refillSheaf', 'returnSheaf', 'bootstrap', 'shrink']);
    expect(p.script.ops[3]).toEqual({ kind: 'prefill', cpu: 0, slot: 0, count: 3 });
    expect(scriptToText(p.script)).toBe(text);
    const err = (t: string) => {
      const r = parseScript(t, 2);
      return r.ok ? '' : r.error;
    };
    expect(err('t0-0')).toMatch(/uses sheaf slot 0, which no prefill has filled/);
    expect(err('p0-0-3.p0-0-2')).toMatch(/prefills sheaf slot 0, which already holds a sheaf/);
    expect(err('p0-8-3')).toMatch(/names sheaf slot 8, there are 8/);
    expect(err('p0-0-0')).toMatch(/wrong numbers/);
    expect(err('k0-1')).toMatch(/wrong numbers/);
    expect(err('g2')).toMatch(/names CPU 2, there are 2/);
  });

  it('run on a world without sheaves as refused operations, each with its own step', () => {
    const p = parseScript('p0-0-3.t0-0.u0-0.a0', 2);
    if (!p.ok) throw new Error(p.error);
    const s = open({ cpus: 2, objectSize: 512, fastpath: 'cmpxchg', bulkFree: 'detached', seed: 1, arenaBytes: 1 << 20 }, p.script as Script<AnyRef>);
    const r = s.load();
    expect(r.ops.map((o) => o.result < 0)).toEqual([true, true, true, false]);
    expect(r.stops.filter((x) => x.micro === 0)).toHaveLength(5);
    expect(new Set(r.ops.map((o) => o.opNum)).size).toBe(4);
    s.dispose();
  });
});
