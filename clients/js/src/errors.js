// The one error type of the client (re-exported by index.js).

/**
 * An error about a mechanism file. `kind` is "input" (malformed: `field` names the place,
 * `rule` what must hold) or "verification" (well formed, but the digest does not match or
 * the matrix breaks a privacy claim).
 */
export class MechanismError extends Error {
  constructor(kind, field, rule) {
    super(field ? `${field}: ${rule}` : rule);
    this.name = "MechanismError";
    this.kind = kind;
    this.field = field;
    this.rule = rule;
  }
}
