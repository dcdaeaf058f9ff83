// Times the reference SDK in process on the cases benchmarks/compare.py sends.
// argv[2]: a built reference checkout (its dist/index.js). stdin: {"jobs": [{name,
// manifest, graph, entry, states, repeats, load}]}. stdout: {name: {evaluate: [ms per
// state, fastest of the repeats], load: ms | null}}.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const ref = await import(pathToFileURL(join(process.argv[2], "dist", "index.js")).href);
const { jobs } = JSON.parse(readFileSync(0, "utf8"));
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
const out = {};
for (const job of jobs) {
  const provider = await ref.loadProvider(job.manifest);
  const evaluate = [];
  for (const state of job.states) {
    ref.evaluateGraph(provider, job.graph, job.entry, state); // warm up the JIT
    evaluate.push(await fastest(() => ref.evaluateGraph(provider, job.graph, job.entry, state), job.repeats));
  }
  const load = job.load ? await fastest(() => ref.loadProvider(job.manifest), 3) : null;
  out[job.name] = { evaluate, load };
}
process.stdout.write(JSON.stringify(out));
