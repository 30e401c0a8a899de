// use-core.ts - React access to the bridge: the core's description (loaded
// once per page) and the error that stopped it loading, if any.

import { useEffect, useState } from 'react';
import type { CoreBuild, CoreInfo } from './bridge-protocol';
import { BridgeError, getBridge } from './bridge';

export type CoreState =
  | { status: 'loading' }
  | { status: 'ready'; info: CoreInfo }
  | { status: 'failed'; error: BridgeError };

const hello = new Map<CoreBuild, Promise<CoreInfo>>();

function asBridgeError(e: unknown): BridgeError {
  return e instanceof BridgeError ? e : new BridgeError('worker-failed', e instanceof Error ? e.message : String(e));
}

/** Starts loading the `build` core (once per page) and follows its state. */
export function useCore(build: CoreBuild = 'traced'): CoreState {
  const [state, setState] = useState<CoreState>({ status: 'loading' });
  useEffect(() => {
    let live = true;
    const loading = hello.get(build) ?? getBridge(build).request('hello', {});
    hello.set(build, loading);
    loading.then(
      (info) => live && setState({ status: 'ready', info }),
      (e: unknown) => live && setState({ status: 'failed', error: asBridgeError(e) }),
    );
    return () => {
      live = false;
    };
  }, [build]);
  return state;
}

/** The user-facing sentence for a failed load or request. */
export function describeBridgeError(e: BridgeError): string {
  switch (e.code) {
    case 'core-load':
    case 'worker-failed':
      return `could not load the WebAssembly core: ${e.message}`;
    case 'core-error':
      return `the core reported an error: ${e.message}`;
    case 'bad-request':
      return `invalid request: ${e.message}`;
  }
}
