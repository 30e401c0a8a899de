import { describe, expect, it } from 'vitest';
import { Bridge, BridgeError } from './bridge';
import type { RequestMessage, ResponseMessage } from './bridge-protocol';

/** A stand-in for the bridge worker: records requests, answers when told. */
class FakeWorker extends EventTarget {
  sent: { msg: RequestMessage; transfer: Transferable[] }[] = [];
  postMessage(msg: RequestMessage, transfer: Transferable[]) {
    this.sent.push({ msg, transfer });
  }
  reply(msg: ResponseMessage) {
    this.dispatchEvent(new MessageEvent('message', { data: msg }));
  }
  crash(message: string) {
    const e = new Event('error') as Event & { message: string };
    e.message = message;
    this.dispatchEvent(e);
  }
}

function setup() {
  const worker = new FakeWorker();
  return { worker, bridge: new Bridge(worker as unknown as Worker) };
}

const info = { mode: 'single', build: 'traced', abiVersion: 2, maxCpus: 8, cpuWorkerPool: 0, eventSize: 32, hostCpus: 2 } as const;

describe('Bridge', () => {
  it('matches responses to requests by id, in any order', async () => {
    const { worker, bridge } = setup();
    const a = bridge.request('hello', {});
    const b = bridge.request('selftest', { cpus: 2, iterations: 5, seed: 1 });
    const [ma, mb] = worker.sent.map((s) => s.msg);
    expect(ma).toMatchObject({ type: 'hello', params: {} });
    expect(mb).toMatchObject({ type: 'selftest', params: { cpus: 2, iterations: 5, seed: 1 } });
    expect(ma?.id).not.toBe(mb?.id);
    const bytes = new ArrayBuffer(8);
    worker.reply({ id: mb!.id, ok: true, result: { mode: 'single', rc: 0, message: 'ok', bytes, elapsedMs: 1 } });
    worker.reply({ id: ma!.id, ok: true, result: info });
    await expect(a).resolves.toEqual(info);
    await expect(b).resolves.toMatchObject({ rc: 0, bytes });
  });

  it('rejects with a typed BridgeError carrying the code', async () => {
    const { worker, bridge } = setup();
    const p = bridge.request('selftest', { cpus: 0, iterations: 5, seed: 1 });
    worker.reply({ id: worker.sent[0]!.msg.id, ok: false, error: { code: 'core-error', message: 'argument out of range', coreCode: -2 } });
    const err = await p.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BridgeError);
    expect(err).toMatchObject({ code: 'core-error', message: 'argument out of range', coreCode: -2 });
  });

  it('passes the transfer list through', () => {
    const { worker, bridge } = setup();
    const buf = new ArrayBuffer(4);
    void bridge.request('hello', {}, [buf]);
    expect(worker.sent[0]?.transfer).toEqual([buf]);
  });

  it('rejects pending and later requests when the worker dies', async () => {
    const { worker, bridge } = setup();
    const pending = bridge.request('hello', {});
    worker.crash('boom');
    await expect(pending).rejects.toMatchObject({ code: 'worker-failed', message: 'the bridge worker failed: boom' });
    await expect(bridge.request('hello', {})).rejects.toMatchObject({ code: 'worker-failed' });
    expect(worker.sent).toHaveLength(1);
  });

  it('ignores a response to an unknown id', async () => {
    const { worker, bridge } = setup();
    const p = bridge.request('hello', {});
    worker.reply({ id: 999, ok: true, result: info });
    worker.reply({ id: worker.sent[0]!.msg.id, ok: true, result: info });
    await expect(p).resolves.toEqual(info);
  });
});
