// Measures a Markdown file of the working directory against the style guide's limits.
import { readFile } from "node:fs/promises";

const file = process.argv[2] ?? "DRAFT.md";
let text = "";
try {
  text = await readFile(file, "utf8");
} catch {
  process.stderr.write(`${file} not found in ${process.cwd()}\n`);
  process.exit(1);
}
const words = (s) => s.split(/\s+/).filter(Boolean).length;
const paragraphs = text.split(/\n\s*\n/).map(words).filter((n) => n > 0);
const report = {
  words: words(text),
  longestParagraph: Math.max(0, ...paragraphs),
  limits: { words: 400, paragraph: 80 },
};
report.withinLimits = report.words <= 400 && report.longestParagraph <= 80;
process.stdout.write(JSON.stringify(report));
