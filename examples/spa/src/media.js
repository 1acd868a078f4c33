// Posts' images and audio: shown with their dimensions reserved (the
// width and height attributes give the box its ratio before the image
// loads), and sent with a new post as a GraphQL multipart request
// (https://github.com/jaydenseric/graphql-multipart-request-spec). The
// gateway requires a GraphQL-Require-Preflight header on multipart
// requests: a browser sends such a request from another origin only
// after a CORS preflight, so no other site can make one with the user's
// cookies or credentials.

import { newKey, retryable } from './idempotency.js';

export function renderMedia(media, el) {
  if (!media?.length) return null;
  return el('div', { className: 'media' }, ...media.map((m) => m.kind === 'IMAGE'
    ? el('img', { src: m.url, alt: m.alt || '', width: m.width, height: m.height, loading: 'lazy', decoding: 'async' })
    : el('audio', { src: m.url, controls: true, preload: 'metadata', title: m.alt || '' })));
}

// postWithMedia sends createPost(input) with files attached to
// input.media (one entry each, with alt) and returns the GraphQL answer.
// It sends a fresh Idempotency-Key, and sends the request again with the
// same key when no answer came back or the first was still running.
export async function postWithMedia(endpoint, token, query, input, files, alt) {
  const operations = {
    query,
    variables: { input: { ...input, media: files.map((f) => ({ file: null, alt: f.type.startsWith('image/') && alt ? alt : null })) } },
  };
  const map = Object.fromEntries(files.map((_, i) => [String(i), [`variables.input.media.${i}.file`]]));
  const form = new FormData();
  form.append('operations', JSON.stringify(operations));
  form.append('map', JSON.stringify(map));
  files.forEach((f, i) => form.append(String(i), f, f.name));
  return sendForm(endpoint, token, form);
}

// sendForm sends a GraphQL multipart request's form with a fresh
// Idempotency-Key, sends it again with the same key while no answer came
// back or the first was still running, and returns the GraphQL answer.
export async function sendForm(endpoint, token, form) {
  const key = newKey();
  const send = () => fetch(endpoint, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${token}`,
      'Idempotency-Key': key,
      'GraphQL-Require-Preflight': '1',
      Accept: 'application/graphql-response+json, application/json',
    },
    body: form,
  });
  let body;
  for (let i = 0; i < 4; i++) {
    const res = await send().catch((err) => (i === 3 ? Promise.reject(err) : null));
    try {
      body = res ? await res.json() : null;
    } catch {
      body = { errors: [{ message: `HTTP ${res.status}` }] };
    }
    const again = body ? retryable({ error: { graphQLErrors: body.errors } }) : { delay: 1000 };
    if (!again) break;
    await new Promise((ok) => setTimeout(ok, again.delay * (i + 1)));
  }
  return body;
}
