// Types for c-source.mjs, for vite.config.ts and the vitest tests that import it.
import type { CSource, ModelSource } from '../web/lab/code';
export const SRC: string;
export function modelDirs(src?: string): string[];
export function kernelName(name: string, comment: string): string | null;
export function functionsOf(text: string): { name: string; first: number; last: number; comment: string }[];
export function readModel(id: string, src?: string): ModelSource;
export function readCSource(src?: string): CSource;
