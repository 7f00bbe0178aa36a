export function laneFiles(root: string): string[];
