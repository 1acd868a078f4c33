// Runs graphql-http's serverAudits against the URL given as the first
// argument and prints one JSON array: {id, name, status, reason} per audit.
// status is "ok", "warn" (a SHOULD or MAY not met) or "error" (a MUST).
import { serverAudits } from 'graphql-http';

const url = process.argv[2];
if (!url) {
  console.error('usage: node audit.mjs URL');
  process.exit(2);
}
const results = [];
for (const audit of serverAudits({ url })) {
  const r = await audit.fn();
  results.push({ id: audit.id, name: audit.name, status: r.status, reason: r.reason ?? '' });
}
console.log(JSON.stringify(results));
