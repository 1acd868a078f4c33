// Idempotency keys: every mutation the app sends carries a fresh
// Idempotency-Key header, and its retries (a dropped connection, or
// CONFLICT while the first attempt still runs) send the same key, so the
// gateway applies it once and answers a repeat with the first answer.
// Login, registration and token refresh carry none: the gateway refuses
// keys on anonymous mutations.

const ATTEMPTS = 4;

// newKey returns a fresh idempotency key.
export function newKey() {
  return crypto.randomUUID();
}

// withKey returns urql operation context sending key.
function withKey(key) {
  return { fetchOptions: { headers: { 'Idempotency-Key': key } } };
}

// retryable reports an answer worth sending again with the same key: no
// answer reached the app, or the first attempt was still running.
export function retryable(res) {
  if (res.error?.networkError) return { delay: 1000 };
  const conflict = res.error?.graphQLErrors?.find((e) => e.extensions?.code === 'CONFLICT' && e.extensions?.retryAfter);
  return conflict ? { delay: conflict.extensions.retryAfter * 1000 } : null;
}

// mutate sends a mutation with a fresh key, and again with the same key
// while its answer is retryable, a few times at most.
export async function mutate(client, doc, vars) {
  const context = withKey(newKey());
  let res;
  for (let i = 0; i < ATTEMPTS; i++) {
    res = await client.mutation(doc, vars, context).toPromise();
    const again = retryable(res);
    if (!again) break;
    await new Promise((ok) => setTimeout(ok, again.delay * (i + 1)));
  }
  return res;
}
