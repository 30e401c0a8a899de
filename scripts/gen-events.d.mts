// Types for gen-events.mjs, for the vitest test that imports it.
export const OUTPUT: string;
export function renderEventsTs(): string;
export interface EventKindDef {
  name: string;
  num: number;
  doc: string;
  area: string;
  where: string;
}
export function parseEventDefs(file?: string): EventKindDef[];
export interface EventField {
  name: string;
  type: string;
  size: number;
  offset: number;
}
export function parseEventStruct(file?: string): { size: number; fields: EventField[] };
