// The sandbox panel's no-lock controls (SandboxOps.tsx) rendered to markup:
// kfree_rcu_nolock is offered only for a 7.3 kernel (rcuNolock), with and
// without interrupts off, and as an interrupt's handler.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { SandboxOps, type SandboxOpsProps } from './SandboxOps';

const base: SandboxOpsProps = {
  cpu: 1,
  selection: { pfn: 12, index: 3 },
  marked: [],
  bulkForm: 'detached',
  stop: undefined,
  stopCpu: 0,
  canInterrupt: false,
  tuning: { minPartial: 5, cpuPartial: 0, zoneShort: false },
  sheaves: true,
  cpuSlab: false,
  nolock: true,
  filledSlots: new Set(),
  onAppend: () => {},
  onBulkFree: () => {},
  onInterrupt: () => {},
};

describe('the sandbox panel and kfree_rcu_nolock', () => {
  it('offers it on 7.3, with interrupts on or off and as a handler', () => {
    const html = renderToStaticMarkup(createElement(SandboxOps, { ...base, rcuNolock: true }));
    expect(html).toContain('kfree_rcu_nolock selected on CPU 1</button>');
    expect(html).toContain('kfree_rcu_nolock selected on CPU 1, interrupts off</button>');
    expect(html).toContain('Interrupt here: kfree_rcu_nolock selected</button>');
  });

  it('does not offer it before 7.3', () => {
    const html = renderToStaticMarkup(createElement(SandboxOps, { ...base, rcuNolock: false }));
    expect(html).toContain('kfree_nolock selected on CPU 1');
    expect(html).not.toContain('kfree_rcu_nolock');
    expect(renderToStaticMarkup(createElement(SandboxOps, base))).not.toContain('kfree_rcu_nolock');
  });
});
