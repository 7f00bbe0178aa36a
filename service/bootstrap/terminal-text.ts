/**
 * Reading what a CLI drew on its terminal. Pure functions on the raw output bytes (as text).
 * Full-screen UIs (Ink) place words with cursor moves instead of spaces, so cursor moves
 * become a space and carriage returns a line break: good enough for the patterns we look for.
 */

const OSC = /\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)/g;
const CSI = /\x1b\[[0-?]*[ -/]*[@-~]/g;
const OTHER_ESC = /\x1b(?:[()][0-9A-Za-z]|[78=>MDEc])/g;
const CONTROL = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/g;

/** The visible text, without colours, hyperlinks or cursor control. */
export function terminalText(raw: string): string {
  return raw
    .replace(OSC, '')
    .replace(CSI, (seq) => (/^\x1b\[[0-9;]*[A-H]$/.test(seq) ? ' ' : ''))
    .replace(OTHER_ESC, '')
    .replace(/\r\n?/g, '\n')
    .replace(CONTROL, '');
}

/** Targets of OSC 8 hyperlinks, in order: they are never wrapped, unlike the text shown. */
export function hyperlinks(raw: string): string[] {
  return [...raw.matchAll(/\x1b\]8;[^;\x07\x1b]*;([^\x07\x1b]+)(?:\x07|\x1b\\)/g)].map((m) => m[1]!);
}
