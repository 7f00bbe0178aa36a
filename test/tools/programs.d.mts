export const PROGRAMS: Record<string, { package: string; version: string; bins: string[] }>;
export function cacheDir(): string;
export function programPath(name: string): string | undefined;
