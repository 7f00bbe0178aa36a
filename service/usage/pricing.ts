import { z } from 'zod';
import type { Usage } from '../sessions/types.js';

/**
 * Per-token prices, with LiteLLM's field names, from the dated table shipped in
 * config/usage/prices.json and the user's override file. Pure: the caller reads the files
 * (see price-file.ts).
 *
 * A model maps to one entry or to a list of entries, each valid from its `effective_from`
 * UTC day on (a price cut prices older records at the older rate). `<field>_above_<N>k_tokens`
 * is the rate of the whole request once its prompt (input + cache read + cache write tokens)
 * exceeds N thousand tokens, as Anthropic and OpenAI bill long contexts. Missing cache rates
 * default to 1.25x input (writes) and 0.1x input (reads), as ccusage does.
 */
const Rate = z.number().finite().nonnegative();

export const PriceEntry = z.looseObject({
  input_cost_per_token: Rate,
  output_cost_per_token: Rate,
  cache_read_input_token_cost: Rate.optional(),
  cache_creation_input_token_cost: Rate.optional(),
  effective_from: z.iso.date().optional(),
});
export type PriceEntry = z.infer<typeof PriceEntry>;

export const PriceDocument = z.looseObject({
  as_of: z.iso.date().optional(),
  models: z.record(z.string().min(1), z.union([PriceEntry, z.array(PriceEntry).min(1)])),
});
export type PriceDocument = z.infer<typeof PriceDocument>;

export interface PriceTable {
  /** The built-in table's date. */
  asOf: string | undefined;
  /** Lower-cased model id -> its entries, oldest first. */
  models: ReadonlyMap<string, readonly PriceEntry[]>;
}

/** The built-in table with the override's models laid over it (an overridden model is replaced whole). */
export function priceTable(builtin: PriceDocument, override?: PriceDocument): PriceTable {
  const models = new Map<string, PriceEntry[]>();
  for (const doc of override ? [builtin, override] : [builtin]) {
    for (const [id, value] of Object.entries(doc.models)) {
      const entries = (Array.isArray(value) ? [...value] : [value]).sort((a, b) => (a.effective_from ?? '').localeCompare(b.effective_from ?? ''));
      models.set(id.toLowerCase(), entries);
    }
  }
  return { asOf: builtin.as_of, models };
}

/** The table's key for a model as logs name it, or undefined when the table has no such model. */
export function priceKey(table: PriceTable, model: string): string | undefined {
  const exact = model.toLowerCase();
  if (table.models.has(exact)) return exact;
  const normalized = normalizeModel(exact);
  return table.models.has(normalized) ? normalized : undefined;
}

/**
 * `anthropic/claude-opus-5-5` (runtimea's provider/model ids), `claude-sonnet-4-5-20250929`
 * (dated snapshots), `claude-opus-4-6@20260101` (Vertex), `claude-opus-4-6[1m]` (Claude Code's
 * 1M-context alias) -> the table's id. No fuzzy matching: an id the table does not know is
 * reported as unpriced rather than priced like a look-alike.
 */
export function normalizeModel(model: string): string {
  let id = model.trim().toLowerCase();
  id = id.slice(id.lastIndexOf('/') + 1);
  id = id.replace(/\[[^\]]*\]$/, '');
  id = id.replace(/@\d{8}$/, '').replace(/-\d{8}$/, '');
  return id;
}

/** The entry in force on `day` (YYYY-MM-DD): the latest one that started on or before it. */
export function entryOn(entries: readonly PriceEntry[], day: string): PriceEntry | undefined {
  let found: PriceEntry | undefined;
  for (const entry of entries) if (!entry.effective_from || entry.effective_from <= day) found = entry;
  return found ?? entries[0];
}

/** What one model call or turn cost at these rates, in USD. */
export function costOf(entry: PriceEntry, usage: Usage): number {
  const prompt = usage.input + usage.cacheRead + usage.cacheWrite;
  const tier = tierOf(entry, prompt);
  const rate = (field: string, fallback: number): number => {
    const above = tier === undefined ? undefined : entry[`${field}_above_${tier}k_tokens`];
    if (typeof above === 'number') return above;
    const base = entry[field];
    return typeof base === 'number' ? base : fallback;
  };
  const input = rate('input_cost_per_token', 0);
  return (
    usage.input * input +
    usage.output * rate('output_cost_per_token', 0) +
    usage.cacheRead * rate('cache_read_input_token_cost', input * 0.1) +
    usage.cacheWrite * rate('cache_creation_input_token_cost', input * 1.25)
  );
}

const TIER = /_above_(\d+)k_tokens$/;
const thresholds = new WeakMap<PriceEntry, number[]>();

/** The highest `N` of the entry's `_above_<N>k_tokens` fields that `prompt` exceeds. */
function tierOf(entry: PriceEntry, prompt: number): number | undefined {
  let tiers = thresholds.get(entry);
  if (!tiers) {
    tiers = [...new Set(Object.keys(entry).flatMap((key) => (TIER.test(key) ? [Number(TIER.exec(key)![1])] : [])))].sort((a, b) => b - a);
    thresholds.set(entry, tiers);
  }
  return tiers.find((n) => prompt > n * 1000);
}
