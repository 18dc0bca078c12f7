// Type declarations of mechopt-client (src/index.js): the public API of the README's table.

/** A source of 32-bit random words: each call returns the next word (an integer in [0, 2^32)). */
export type WordSource = () => number;

/** A word source reading an explicit list (test vectors); `used()` counts the words read. */
export interface WordStream extends WordSource {
  used(): number;
}

/** Where a memoized mechanism keeps its permanent responses (a Map, localStorageStore(), ...). */
export interface Store {
  get(key: string): string | null | undefined;
  set(key: string, value: string): unknown;
}

/** JSON values as parsed from a mechanism file. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** One privacy claim of a file, in problem-file notation (docs/formats.md). */
export interface Claim {
  notion: string;
  epsilon?: number | "inf";
  delta?: number;
  [field: string]: unknown;
}

/** A version 2 mechanism file (docs/formats.md), as parsed. */
export interface MechanismDocument {
  format: "mechopt-mechanism";
  version: 2;
  inputs: string[];
  outputs: string[];
  matrix: number[][];
  privacy: Claim[];
  objective: { kind: string; value?: number | null; bound?: number | null; [field: string]: unknown };
  certificate: { [field: string]: Json };
  memoize?: boolean;
  sha256: string;
  [field: string]: unknown;
}

/** A family file (docs/families.md): a `family` object in place of outputs and matrix. */
export interface FamilyDocument {
  format: "mechopt-mechanism";
  version: 2;
  inputs: string[];
  family: { kind: "subset_selection" | "hadamard_response"; [field: string]: Json };
  privacy: Claim[];
  sha256: string;
  [field: string]: unknown;
}

export interface LoadOptions {
  /** false: stop after the digest (test vectors of the digest and the sampler only). Default true. */
  verifyClaims?: boolean;
}

export interface SamplerOptions {
  /** Default: secureWords() (crypto.getRandomValues). */
  words?: WordSource;
  /** Memoized mechanisms: where the permanent responses live (default a Map). */
  store?: Store;
}

/** The one error type: "input" (malformed; `field` names the place) or "verification". */
export class MechanismError extends Error {
  constructor(kind: "input" | "verification", field: string, rule: string);
  readonly name: "MechanismError";
  kind: "input" | "verification";
  field: string;
  rule: string;
}

/** A checked mechanism with its matrix. Build it with loadMechanism. */
export class Mechanism {
  constructor(doc: MechanismDocument);
  readonly doc: MechanismDocument;
  readonly inputs: readonly string[];
  readonly outputs: readonly string[];
  readonly matrix: number[][];
  readonly privacy: Claim[];
  readonly sha256: string;
  readonly memoize: boolean;
  /** The integer weights of every row (the exact sampler's step 1). */
  readonly weights: bigint[][];
  /** The integer weights of row x. */
  rowWeightsOf(x: number): bigint[];
  /** Exact probabilities of each output for an input, as [numerator, denominator]. */
  probabilities(label: string): Array<[bigint, bigint]>;
  sampler(options?: SamplerOptions): Sampler;
}

/** Draws reports from a Mechanism. */
export class Sampler {
  constructor(mechanism: Mechanism, take: WordSource, store: Store);
  readonly mechanism: Mechanism;
  readonly store: Store;
  /** Privatize one value: its report (the kept one, for a memoized mechanism). */
  sample(label: string): string;
  /** Privatize many values, in order; every label is checked before any draw. */
  sampleMany(labels: Iterable<string>): string[];
  /** n fresh reports for one input, as output indices. */
  sampleIndices(label: string, n: number): Uint32Array;
}

/** A checked family mechanism (its outputs are never listed). Build it with loadMechanism. */
export class FamilyMechanism {
  constructor(doc: FamilyDocument);
  readonly doc: FamilyDocument;
  readonly inputs: readonly string[];
  readonly kind: "subset_selection" | "hadamard_response";
  readonly privacy: Claim[];
  readonly sha256: string;
  /** Always false: a family's digest covers no memoize flag. */
  readonly memoize: false;
  sampler(options?: SamplerOptions): FamilySampler;
  /** Privatize one value with a secure sampler. */
  sample(label: string): string;
}

/** Draws reports from a FamilyMechanism (docs/families.md, "Exact sampling of a family"). */
export class FamilySampler {
  constructor(mechanism: FamilyMechanism, take: WordSource, store: Store);
  readonly mechanism: FamilyMechanism;
  sample(label: string): string;
  sampleMany(labels: Iterable<string>): string[];
}

export const FORMAT: "mechopt-mechanism";
/** The file versions this client reads. */
export const VERSIONS: readonly number[];

/**
 * Load a mechanism from JSON text, a parsed object, a URL or a Response (objects too): strict JSON,
 * structure, digest, every claim verified exactly. A family file gives a FamilyMechanism.
 */
export function loadMechanism(source: string | object, options?: LoadOptions): Promise<Mechanism | FamilyMechanism>;

/** The checks of loadMechanism on a parsed document; resolves to the document. */
export function checkDocument<T extends object>(doc: T, options?: LoadOptions): Promise<T>;
/** A family document's checks: structure, digest, every claim. */
export function checkFamilyDocument<T extends object>(doc: T): Promise<T>;
/** Every claim verified exactly on the matrix of a structurally checked document. */
export function checkClaims(doc: object, options?: { integralFloatEndpoints?: Set<string> }): void;
/** The claims' parameters read and checked (not yet verified on the matrix). */
export function readClaims(doc: object, options?: { integralFloatEndpoints?: Set<string> }): Array<{ kind: string }>;
/** The strict JSON reader of loadMechanism (duplicate keys, depth, range refused). */
export function parseStrict(text: string): Json;

/** RFC 8785 canonical JSON text of a value. */
export function canonicalize(value: unknown): string;
/** SHA-256 of a string's UTF-8 bytes, 64 lowercase hex digits (WebCrypto). */
export function sha256Hex(text: string): Promise<string>;
/** The hashed fields of a version 2 document: inputs, outputs, matrix, privacy (+ memoize). */
export function hashedPayload(doc: MechanismDocument): object;
/** The sha256 of a version 2 document. */
export function digest(doc: MechanismDocument): Promise<string>;
/** The sha256 of a family document. */
export function familyDigest(doc: FamilyDocument): Promise<string>;

/** The exact decimal value of a JSON number: [integer, scale], value = integer / 10^scale. */
export function exactDecimal(x: number): [bigint, number];
/** The smallest non-negative integers proportional to a row's exact decimals. */
export function rowWeights(row: number[]): bigint[];

/** Secure 32-bit words from crypto.getRandomValues. */
export function secureWords(blockWords?: number): WordSource;
/** A word source reading an explicit list of 32-bit words. */
export function wordStream(words: number[]): WordStream;
/** Node 18 (no global crypto): await once before sampling with secure words. */
export function ready(): Promise<void>;
/** A memoization store on localStorage (or any object with getItem/setItem), keys prefixed. */
export function localStorageStore(prefix?: string,
  storage?: { getItem(key: string): string | null; setItem(key: string, value: string): void }): Store;
