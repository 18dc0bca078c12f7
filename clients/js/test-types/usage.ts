// Compiled by `npm run test:types` (tsc --noEmit): the README's calls type-check against
// index.d.ts, resolved through the package's own name and "exports" map, and misuse is refused.
import { FamilyMechanism, Mechanism, MechanismError, loadMechanism, localStorageStore, wordStream } from "mechopt-client";
import type { Sampler, Store, WordSource } from "mechopt-client";

export async function privatize(text: string): Promise<string> {
  const mech = await loadMechanism(text);
  if (mech instanceof FamilyMechanism) return mech.sample(mech.inputs[0]);
  const m: Mechanism = mech;
  const sampler: Sampler = m.sampler({ words: wordStream([1, 2, 3]), store: new Map<string, string>() });
  const report: string = sampler.sample(m.inputs[0]);
  const many: string[] = sampler.sampleMany(m.inputs);
  const counts: Uint32Array = sampler.sampleIndices(m.inputs[0], 10);
  const exact: Array<[bigint, bigint]> = m.probabilities(m.inputs[0]);
  return `${report} ${many.length} ${counts.length} ${exact.length} ${m.sha256}`;
}

export function kind(err: unknown): string {
  return err instanceof MechanismError ? `${err.kind} ${err.field}: ${err.rule}` : "other";
}

const words: WordSource = () => 7;
const store: Store = localStorageStore("x:", { getItem: () => null, setItem: () => undefined });
export { store, words };

// @ts-expect-error: a sampler takes labels (strings), not indices
export const wrong = async (m: Mechanism) => m.sampler().sample(3);
