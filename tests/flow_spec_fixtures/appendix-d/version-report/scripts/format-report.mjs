const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const { previous } = JSON.parse(Buffer.concat(chunks).toString("utf8"));
// previous is the JSON text of the prior node's result content
const result = JSON.parse(previous); // { status, exitCode, stdout, stderr }
if (result.status !== "success") {
  process.stderr.write(result.stderr);
  process.exit(1);
}
const { version } = JSON.parse(result.stdout);
const style = process.argv[process.argv.indexOf("--style") + 1];
console.log(style === "short" ? `v${version}` : `Project version: ${version}`);
