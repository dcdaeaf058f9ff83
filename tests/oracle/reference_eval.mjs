// Batch front end to the reference SDK for tests/conformance/test_oracle.py (run only when
// the reference checkout is available). argv[2]: reference checkout directory.
// Each stdin line is a JSON task {manifest, graph, entry, facts, outcomes,
// authorities}; each stdout line is {evaluation, candidates} or
// {error: {code, message}}. Providers are loaded once per manifest path.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [referenceDir] = process.argv.slice(2);
const ref = await import(pathToFileURL(join(referenceDir, "dist", "index.js")).href);

const providers = new Map();
async function provider(manifest) {
  if (!providers.has(manifest)) {
    try {
      providers.set(manifest, { value: await ref.loadProvider(manifest) });
    } catch (error) {
      providers.set(manifest, { error });
    }
  }
  const loaded = providers.get(manifest);
  if (loaded.error) throw loaded.error;
  return loaded.value;
}

const lines = readFileSync(0, "utf8").split("\n").filter((line) => line.length > 0);
const out = [];
for (const line of lines) {
  const task = JSON.parse(line);
  try {
    const loaded = await provider(task.manifest);
    const { evaluation, candidates } = ref.evaluateGraph(loaded, task.graph, task.entry, {
      facts: task.facts,
      outcomes: task.outcomes,
      authorities: task.authorities,
    });
    out.push(JSON.stringify({
      evaluation,
      candidates: candidates.map((c) => ({
        routeId: c.routeId,
        graph: c.graph.definition.id,
        node: c.node.id,
        callPath: c.callPath,
        stateKey: c.stateKey,
        availability: c.availability,
        gateResolution: c.gateResolution ?? null,
      })),
    }));
  } catch (error) {
    out.push(JSON.stringify({ error: { code: error.code ?? "unexpected", message: String(error.message ?? error) } }));
  }
}
process.stdout.write(out.join("\n") + (out.length ? "\n" : ""));
