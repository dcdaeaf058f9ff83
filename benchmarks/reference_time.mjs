// Times the reference SDK in process on the cases benchmarks/compare.py sends.
// argv[2]: a built reference checkout (its dist/index.js). stdin: one job a line,
// {name, manifest, graph, entry, states, repeats, load}; for each, one line on stdout:
// {evaluate: [ms per state, fastest of the repeats], load: ms | null}. A job sent again
// is timed again on the Provider loaded the first time, so compare.py can take turns
// with agc (reference, agc, reference, agc …) on one warm process.
import { createInterface } from "node:readline";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const ref = await import(pathToFileURL(join(process.argv[2], "dist", "index.js")).href);
const fastest = async (action, repeats) => {
  let best = Infinity;
  for (let i = 0; i < repeats; i++) {
    const start = process.hrtime.bigint();
    await action();
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    if (ms < best) best = ms;
  }
  return best;
};
const providers = new Map();
for await (const line of createInterface({ input: process.stdin })) {
  if (!line.trim()) continue;
  const job = JSON.parse(line);
  let provider = providers.get(job.manifest);
  if (provider === undefined) {
    provider = await ref.loadProvider(job.manifest);
    providers.set(job.manifest, provider);
  }
  const evaluate = [];
  for (const state of job.states) {
    ref.evaluateGraph(provider, job.graph, job.entry, state); // warm up the JIT
    evaluate.push(await fastest(() => ref.evaluateGraph(provider, job.graph, job.entry, state), job.repeats));
  }
  const load = job.load ? await fastest(() => ref.loadProvider(job.manifest), 3) : null;
  process.stdout.write(JSON.stringify({ evaluate, load }) + "\n");
}
