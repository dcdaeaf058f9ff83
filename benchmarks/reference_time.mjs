// Times the reference SDK in process on the cases benchmarks/compare.py sends.
// argv[2]: a built reference checkout (its dist/index.js). stdin: one job a line,
// {name, manifest, graph, entry, states, repeats, load}; for each, one line on stdout:
// {evaluate: [ms per state, fastest of the repeats], evaluate_cpu: [the same in CPU ms],
// load: ms | null}. A job sent again is timed again on the Provider loaded the first
// time, so compare.py can take turns with agc (reference, agc, reference, agc …) on one
// warm process.
import { createInterface } from "node:readline";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const ref = await import(pathToFileURL(join(process.argv[2], "dist", "index.js")).href);
// The fastest of the repeats, wall and CPU (process.cpuUsage, user + system): the
// quick benchmark takes CPU, as it does for agc, so a busy machine moves neither side.
const fastest = async (action, repeats) => {
  let best = Infinity;
  let bestCpu = Infinity;
  for (let i = 0; i < repeats; i++) {
    const cpu = process.cpuUsage();
    const start = process.hrtime.bigint();
    await action();
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    const used = process.cpuUsage(cpu);
    best = Math.min(best, ms);
    bestCpu = Math.min(bestCpu, (used.user + used.system) / 1000);
  }
  return [best, bestCpu];
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
  const evaluateCpu = [];
  for (const state of job.states) {
    ref.evaluateGraph(provider, job.graph, job.entry, state); // warm up the JIT
    const [ms, cpu] = await fastest(() => ref.evaluateGraph(provider, job.graph, job.entry, state), job.repeats);
    evaluate.push(ms);
    evaluateCpu.push(cpu);
  }
  const load = job.load ? (await fastest(() => ref.loadProvider(job.manifest), 3))[0] : null;
  process.stdout.write(JSON.stringify({ evaluate, evaluate_cpu: evaluateCpu, load }) + "\n");
}
