// Formats the previous node's counts. stdin: {"counted": "<JSON text of the command result>"}.
const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const { counted } = JSON.parse(Buffer.concat(chunks).toString("utf8"));
const result = JSON.parse(counted); // {status, exitCode, stdout, stderr}
if (result.status !== "success") {
  process.stderr.write(`counting failed: ${result.stderr}`);
  process.exit(1);
}
const rows = Object.entries(JSON.parse(result.stdout)).sort((a, b) => b[1] - a[1]);
for (const [ext, n] of rows) console.log(`${ext.padEnd(10)} ${String(n).padStart(6)}`);
