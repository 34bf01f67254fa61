// Runs every server audit of graphql-http (the GraphQL-over-HTTP spec's own suite) against
// the URL given, one after another, and prints the results as JSON: [{id, name, status,
// reason}]. status is "ok", or "error" / "warn" / "notice" for a failed MUST / SHOULD / MAY.
import { serverAudits } from 'graphql-http';

const url = process.argv[2];
if (!url) {
  console.error('usage: node graphql-audit.mjs URL');
  process.exit(2);
}
const results = [];
for (const audit of serverAudits({ url })) {
  const r = await audit.fn();
  results.push({ id: r.id, name: r.name, status: r.status, reason: r.reason ?? '' });
}
console.log(JSON.stringify(results));
