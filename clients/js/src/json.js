// A strict JSON reader for untrusted mechanism files. No dependencies; Node >= 18 and browsers.
//
// It reads RFC 8259 JSON as JSON.parse does and refuses, with one MechanismError("input",
// field, rule) naming the place, what JSON.parse would let through silently or crash on:
//   * a key given twice in one object (JSON.parse keeps the last one: a file with two
//     "matrix" keys would mean what its last key says);
//   * nesting deeper than 64 lists and objects (refused when the 65th level opens, before
//     the parser recurses further);
//   * NaN, Infinity, -Infinity (not JSON) and numbers beyond the range of a double
//     (1e400, or an integer of 400 digits), which JSON.parse reads as +-Infinity;
//   * strings with a lone surrogate (not I-JSON, RFC 7493; no UTF-8 encoding exists).
// These are the rules of mechopt's Python reader (mechopt/_jsonsafe.py: duplicate keys,
// depth 64, numbers beyond float range).
//
// It also records where an integer token lies outside the safe range +-(2^53 - 1): Python
// reads it as an exact integer that RFC 8785 refuses to canonicalize, so a mechanism file
// holding one in a hashed field is refused ("privacy: cannot be written as canonical
// JSON"); see unsafeIntegers().

import { MechanismError } from "./errors.js";

/** Deeper nesting than this (lists and objects) is refused. */
export const MAX_DEPTH = 64;

const MAX_SAFE = 9007199254740991n;
const unsafeByRoot = new WeakMap();
const floatsByRoot = new WeakMap();

/**
 * The paths ("privacy[0].epsilon") of the integer tokens beyond +-(2^53 - 1) in a value
 * parsed by parseStrict (empty for anything else).
 */
export function unsafeIntegers(root) {
  return (root !== null && typeof root === "object" && unsafeByRoot.get(root)) || [];
}

/**
 * The paths of the integral numbers written as decimals (1.0, 2e0) among the endpoints of
 * metric edges (privacy[i].edges[j][0 or 1]), the subset sizes of a family
 * (family.mixture[i].d) and the version of a value parsed by parseStrict: Python reads them as
 * floats, which are not input indices, sizes or versions.
 */
export function integralFloatEndpoints(root) {
  return (root !== null && typeof root === "object" && floatsByRoot.get(root)) || new Set();
}

const fail = (field, rule) => new MechanismError("input", field || "document", rule);

/** The path of a key stack: ["privacy", 0, "epsilon"] -> "privacy[0].epsilon". */
export function pathOf(keys) {
  let out = "";
  for (const key of keys) out += typeof key === "number" ? `[${key}]` : out ? `.${key}` : key;
  return out;
}

/**
 * Parse JSON text strictly (see the module comment). Returns the value; throws a
 * MechanismError("input", field, rule): field "document" for a syntax error or too deep
 * nesting, else the path of the offending object, number or string.
 *
 * A scan of the text checks the grammar and every rule (without building anything, so a
 * too deep text is refused at its 65th level); JSON.parse then builds the value from the
 * text the scan accepted (the same grammar: RFC 8259).
 *
 * parseStrict('{"a": [1, 2.5]}') -> {a: [1, 2.5]}
 * parseStrict('{"a": 1, "a": 2}') -> throws: document: has the key "a" twice ...
 */
export function parseStrict(text) {
  if (typeof text !== "string") throw fail("document", `must be JSON text, got a ${typeof text}`);
  const n = text.length;
  let pos = 0;
  const unsafe = [];
  const integralFloats = [];
  const keys = []; // the path of the value being read, built into a string only when needed

  const syntax = (what) => {
    const shown = pos < n ? JSON.stringify(text.slice(pos, pos + 12)) : "the end of the text";
    return fail("document", `is not valid JSON: ${what} at position ${pos} (found ${shown})`);
  };
  const ws = () => {
    while (pos < n) {
      const c = text.charCodeAt(pos);
      if (c === 32 || c === 10 || c === 13 || c === 9) pos += 1;
      else return;
    }
  };
  const hex = (c) => (c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);
  const lone = (start) => {
    let shown;
    try {
      shown = JSON.stringify(JSON.parse(text.slice(start - 1, pos)).slice(0, 40));
    } catch {
      shown = "(a string)";
    }
    return fail(pathOf(keys), `the string ${shown} has a lone surrogate (not I-JSON; it has no UTF-8 encoding)`);
  };

  // a string token (text[pos] is '"'); returns its value when wanted (keys)
  function string(wanted) {
    pos += 1;
    const start = pos;
    let escaped = false;
    let high = false; // the previous code unit is a high surrogate
    for (;;) {
      if (pos >= n) throw syntax("an unterminated string");
      const c = text.charCodeAt(pos);
      let unit;
      if (c === 34) break;
      if (c === 92) {
        escaped = true;
        const e = text.charCodeAt(pos + 1);
        if (e === 117) { // \u
          if (!(hex(text.charCodeAt(pos + 2)) && hex(text.charCodeAt(pos + 3)) && hex(text.charCodeAt(pos + 4)) && hex(text.charCodeAt(pos + 5)))) {
            throw syntax("a \\u escape needs 4 hex digits");
          }
          unit = Number.parseInt(text.slice(pos + 2, pos + 6), 16);
          pos += 6;
        } else if (e === 34 || e === 92 || e === 47 || e === 98 || e === 102 || e === 110 || e === 114 || e === 116) {
          unit = 0;
          pos += 2;
        } else {
          throw syntax("an invalid escape in a string");
        }
      } else if (c < 32) {
        throw syntax("a control character in a string (escape it)");
      } else {
        unit = c;
        pos += 1;
      }
      if (high) {
        if (unit >= 0xdc00 && unit <= 0xdfff) {
          high = false;
          continue;
        }
        throw lone(start);
      }
      if (unit >= 0xd800 && unit <= 0xdfff) {
        if (unit >= 0xdc00) throw lone(start);
        high = true;
      }
    }
    pos += 1; // the closing quote
    if (high) throw lone(start);
    if (!wanted) return undefined;
    return escaped ? JSON.parse(text.slice(start - 1, pos)) : text.slice(start, pos - 1);
  }

  const isDigit = (c) => c >= 48 && c <= 57;
  function number() {
    const start = pos;
    if (text.charCodeAt(pos) === 45) pos += 1;
    let c = text.charCodeAt(pos);
    if (c === 48) pos += 1;
    else if (c >= 49 && c <= 57) {
      while (isDigit(text.charCodeAt(pos))) pos += 1;
    } else {
      pos = start;
      throw syntax("a value was expected");
    }
    const intDigits = pos - start;
    let integer = true;
    if (text.charCodeAt(pos) === 46) {
      integer = false;
      pos += 1;
      if (!isDigit(text.charCodeAt(pos))) throw syntax("a digit was expected after the decimal point");
      while (isDigit(text.charCodeAt(pos))) pos += 1;
    }
    let exponent = false;
    c = text.charCodeAt(pos);
    if (c === 101 || c === 69) {
      integer = false;
      exponent = true;
      pos += 1;
      c = text.charCodeAt(pos);
      if (c === 43 || c === 45) pos += 1;
      if (!isDigit(text.charCodeAt(pos))) throw syntax("a digit was expected in the exponent");
      while (isDigit(text.charCodeAt(pos))) pos += 1;
    }
    if (exponent || intDigits > 308) {
      const token = text.slice(start, pos);
      if (!Number.isFinite(Number(token))) {
        const shown = token.length > 40 ? `${token.slice(0, 12)}... (${token.length} characters)` : token;
        throw fail(pathOf(keys), `the number ${shown} is beyond the range of a float (about 1.8e308)`);
      }
    }
    if (integer) {
      if (intDigits > 15) {
        const big = BigInt(text.slice(start, pos));
        if (big > MAX_SAFE || -big > MAX_SAFE) unsafe.push(pathOf(keys));
      }
    } else if (((keys.length === 5 && keys[0] === "privacy" && keys[2] === "edges" && keys[4] <= 1)
        || (keys.length === 4 && keys[0] === "family" && keys[1] === "mixture" && keys[3] === "d")
        || (keys.length === 1 && keys[0] === "version")) && Number.isInteger(Number(text.slice(start, pos)))) {
      // privacy[i].edges[j][0], family.mixture[i].d, version: 1.0 is no index, size or version in Python
      integralFloats.push(pathOf(keys));
    }
  }

  function value(depth) {
    ws();
    const c = text.charCodeAt(pos);
    if (c === 123 || c === 91) { // { [
      if (depth + 1 > MAX_DEPTH) {
        throw fail("document", `nests deeper than ${MAX_DEPTH} levels (lists and objects); a mechanism file never needs that`);
      }
      pos += 1;
      ws();
      if (c === 91) {
        if (text.charCodeAt(pos) === 93) {
          pos += 1;
          return;
        }
        for (let i = 0; ; i += 1) {
          keys.push(i);
          value(depth + 1);
          keys.pop();
          ws();
          const d = text.charCodeAt(pos);
          if (d === 44) pos += 1;
          else if (d === 93) {
            pos += 1;
            return;
          } else throw syntax("',' or ']' was expected");
        }
      }
      if (text.charCodeAt(pos) === 125) {
        pos += 1;
        return;
      }
      const seen = new Set();
      for (;;) {
        ws();
        if (text.charCodeAt(pos) !== 34) throw syntax("a key (a string) was expected");
        const key = string(true);
        ws();
        if (text.charCodeAt(pos) !== 58) throw syntax("':' was expected");
        pos += 1;
        if (seen.has(key)) {
          throw fail(pathOf(keys), `has the key ${JSON.stringify(key)} twice; duplicate keys are refused (a reader would silently keep one)`);
        }
        seen.add(key);
        keys.push(key);
        value(depth + 1);
        keys.pop();
        ws();
        const d = text.charCodeAt(pos);
        if (d === 44) pos += 1;
        else if (d === 125) {
          pos += 1;
          return;
        } else throw syntax("',' or '}' was expected");
      }
    }
    if (c === 34) {
      string(false);
      return;
    }
    if (c === 116 && text.startsWith("true", pos)) {
      pos += 4;
      return;
    }
    if (c === 102 && text.startsWith("false", pos)) {
      pos += 5;
      return;
    }
    if (c === 110 && text.startsWith("null", pos)) {
      pos += 4;
      return;
    }
    for (const word of ["NaN", "Infinity", "-Infinity"]) {
      if (text.startsWith(word, pos)) throw fail(pathOf(keys), `${word} is not a JSON number (write a finite number)`);
    }
    number();
  }

  value(0);
  ws();
  if (pos !== n) throw syntax("the text goes on after the JSON value");
  const out = JSON.parse(text); // the scan accepted it: the same grammar
  if (out !== null && typeof out === "object") {
    if (unsafe.length) unsafeByRoot.set(out, unsafe);
    if (integralFloats.length) floatsByRoot.set(out, new Set(integralFloats));
  }
  return out;
}
