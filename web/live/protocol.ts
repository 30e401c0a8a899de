// protocol.ts - messages between the live view (main thread) and its worker.
import type { AgreementPoint } from './pick';
import type { LiveSummary } from './live-state';
import type { Hello, Status } from './wire';

export type ToWorker =
  | { type: 'connect'; token: string }
  | { type: 'pick'; cache: string | null }
  | { type: 'close' };

export type Connection =
  | { state: 'connecting'; attempt: number }
  | { state: 'live'; hello: Hello }
  /** why: in words; retryS: seconds to the next attempt (null: not retrying, e.g. not served by slablab serve). */
  | { state: 'disconnected'; why: string; retryS: number | null };

export type FromWorker =
  | { type: 'connection'; c: Connection }
  | { type: 'summary'; s: LiveSummary; status: Status | null; sentAtMs: number; newestEventNs: number }
  | { type: 'snapshot'; cache: string; text: string; takenNs: [number, number]; point: AgreementPoint | null; history: AgreementPoint[]; logged: number; dropped: number; error: string | null }
  | { type: 'picked'; cache: string | null; logged: number; dropped: number; error: string | null };
