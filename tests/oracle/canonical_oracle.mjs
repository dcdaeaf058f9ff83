// Differential oracle for tests/documents/test_canonical.py (run only when the reference
// checkout is available). argv[2]: reference checkout directory; argv[3]: mode.
//   stringify: each stdin line is a JSON document; prints
//              "<stableStringify(doc)>\t<digestValue(doc)>" per line.
//   sort:      each stdin line is a JSON array of strings; prints
//              JSON.stringify([localeCompare-sorted, default-sorted]) per line.
// Non-finite numbers travel as the strings "\u0000NaN", "\u0000Infinity" and
// "\u0000-Infinity" because JSON cannot carry them.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [referenceDir, mode] = process.argv.slice(2);
const ref = await import(pathToFileURL(join(referenceDir, "dist", "index.js")).href);
const special = { "\u0000NaN": NaN, "\u0000Infinity": Infinity, "\u0000-Infinity": -Infinity };
const revive = (_key, value) => (typeof value === "string" && value in special ? special[value] : value);

const lines = readFileSync(0, "utf8").split("\n").filter((line) => line.length > 0);
const out = [];
for (const line of lines) {
  const value = JSON.parse(line, revive);
  if (mode === "stringify") {
    out.push(`${ref.stableStringify(value)}\t${ref.digestValue(value)}`);
  } else if (mode === "sort") {
    const collated = [...value].sort((left, right) => left.localeCompare(right));
    out.push(JSON.stringify([collated, [...value].sort()]));
  } else {
    throw new Error(`unknown mode ${mode}`);
  }
}
process.stdout.write(out.join("\n") + "\n");
