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
const LONE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const NUMBER = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y;
const WS = /[ \t\n\r]*/y;
const PLAIN = /[^"\\\u0000-\u001f]*/y;
const ESCAPES = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };

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
 * parseStrict('{"a": [1, 2.5]}') -> {a: [1, 2.5]}
 * parseStrict('{"a": 1, "a": 2}') -> throws: document: has the key "a" twice ...
 */
export function parseStrict(text) {
  if (typeof text !== "string") throw fail("document", `must be JSON text, got a ${typeof text}`);
  let pos = 0;
  const unsafe = [];
  const integralFloats = [];
  const keys = []; // the path of the value being read, built into a string only when needed

  const syntax = (what) => {
    const shown = pos < text.length ? JSON.stringify(text.slice(pos, pos + 12)) : "the end of the text";
    return fail("document", `is not valid JSON: ${what} at position ${pos} (found ${shown})`);
  };
  const ws = () => {
    WS.lastIndex = pos;
    WS.exec(text);
    pos = WS.lastIndex;
  };

  function string() {
    // text[pos] === '"'
    pos += 1;
    let out = "";
    for (;;) {
      PLAIN.lastIndex = pos;
      PLAIN.exec(text);
      out += text.slice(pos, PLAIN.lastIndex);
      pos = PLAIN.lastIndex;
      const c = text[pos];
      if (c === '"') {
        pos += 1;
        break;
      }
      if (c === "\\") {
        const e = text[pos + 1];
        if (e === "u") {
          const hex = text.slice(pos + 2, pos + 6);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) throw syntax("a \\u escape needs 4 hex digits");
          out += String.fromCharCode(Number.parseInt(hex, 16));
          pos += 6;
        } else if (e !== undefined && e in ESCAPES) {
          out += ESCAPES[e];
          pos += 2;
        } else {
          throw syntax("an invalid escape in a string");
        }
        continue;
      }
      if (c === undefined) throw syntax("an unterminated string");
      throw syntax("a control character in a string (escape it)");
    }
    if (LONE.test(out)) throw fail(pathOf(keys), `the string ${JSON.stringify(out.slice(0, 40))} has a lone surrogate (not I-JSON; it has no UTF-8 encoding)`);
    return out;
  }

  function number() {
    NUMBER.lastIndex = pos;
    const m = NUMBER.exec(text);
    if (!m) throw syntax("a value was expected");
    const token = m[0];
    pos = NUMBER.lastIndex;
    const v = Number(token);
    if (!Number.isFinite(v)) {
      const shown = token.length > 40 ? `${token.slice(0, 12)}... (${token.length} characters)` : token;
      throw fail(pathOf(keys), `the number ${shown} is beyond the range of a float (about 1.8e308)`);
    }
    if (m[1] === undefined && m[2] === undefined) {
      if (token.length > 15) {
        const big = BigInt(token);
        if (big > MAX_SAFE || -big > MAX_SAFE) unsafe.push(pathOf(keys));
      }
    } else if (Number.isInteger(v) && ((keys.length === 5 && keys[0] === "privacy" && keys[2] === "edges" && keys[4] <= 1)
        || (keys.length === 4 && keys[0] === "family" && keys[1] === "mixture" && keys[3] === "d")
        || (keys.length === 1 && keys[0] === "version"))) {
      // privacy[i].edges[j][0], family.mixture[i].d, version: 1.0 is no index, size or version in Python
      integralFloats.push(pathOf(keys));
    }
    return v;
  }

  function value(depth) {
    ws();
    const c = text[pos];
    if (c === "{" || c === "[") {
      if (depth + 1 > MAX_DEPTH) {
        throw fail("document", `nests deeper than ${MAX_DEPTH} levels (lists and objects); a mechanism file never needs that`);
      }
      pos += 1;
      ws();
      if (c === "[") {
        const arr = [];
        if (text[pos] === "]") {
          pos += 1;
          return arr;
        }
        for (;;) {
          keys.push(arr.length);
          arr.push(value(depth + 1));
          keys.pop();
          ws();
          if (text[pos] === ",") pos += 1;
          else if (text[pos] === "]") {
            pos += 1;
            return arr;
          } else throw syntax("',' or ']' was expected");
        }
      }
      const obj = {};
      const seen = new Set();
      if (text[pos] === "}") {
        pos += 1;
        return obj;
      }
      for (;;) {
        ws();
        if (text[pos] !== '"') throw syntax("a key (a string) was expected");
        const key = string();
        ws();
        if (text[pos] !== ":") throw syntax("':' was expected");
        pos += 1;
        if (seen.has(key)) {
          throw fail(pathOf(keys), `has the key ${JSON.stringify(key)} twice; duplicate keys are refused (a reader would silently keep one)`);
        }
        seen.add(key);
        keys.push(key);
        const v = value(depth + 1);
        keys.pop();
        if (key === "__proto__") Object.defineProperty(obj, key, { value: v, writable: true, enumerable: true, configurable: true });
        else obj[key] = v;
        ws();
        if (text[pos] === ",") pos += 1;
        else if (text[pos] === "}") {
          pos += 1;
          return obj;
        } else throw syntax("',' or '}' was expected");
      }
    }
    if (c === '"') return string();
    if (c === "t" && text.startsWith("true", pos)) {
      pos += 4;
      return true;
    }
    if (c === "f" && text.startsWith("false", pos)) {
      pos += 5;
      return false;
    }
    if (c === "n" && text.startsWith("null", pos)) {
      pos += 4;
      return null;
    }
    for (const word of ["NaN", "Infinity", "-Infinity"]) {
      if (text.startsWith(word, pos)) throw fail(pathOf(keys), `${word} is not a JSON number (write a finite number)`);
    }
    return number();
  }

  const out = value(0);
  ws();
  if (pos !== text.length) throw syntax("the text goes on after the JSON value");
  if (out !== null && typeof out === "object") {
    if (unsafe.length) unsafeByRoot.set(out, unsafe);
    if (integralFloats.length) floatsByRoot.set(out, new Set(integralFloats));
  }
  return out;
}
