type Programs = Record<string, { package: string; version: string; bins: string[] }>;
export const PINNED: Programs;
export const PROGRAMS: Programs;
export function withVersions(pinned: Programs, override: string | undefined): Programs;
export function cacheDir(): string;
export function programPath(name: string): string | undefined;
