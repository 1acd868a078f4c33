// Content warnings, sensitive media, editing one's posts and answering
// comments. A post with a spoiler text shows the warning with its content
// and media collapsed (a <details> the reader opens); sensitive media are
// blurred until clicked. The author's posts have an Edit button: the
// edit (content, spoiler text, sensitive) replaces the post in place,
// marked edited. Each comment has a Reply button; an answer shows under
// the comment it answers, and any comment that answers another says whom.
import { gql } from '@urql/core';
import { mutate } from './idempotency.js';

export const EDIT = gql`
  mutation Edit($id: ID!, $input: EditPostInput!) {
    editPost(id: $id, input: $input) { id content spoilerText sensitive editedAt }
  }`;
export const ANSWER = gql`
  mutation Answer($post: ID!, $content: String!, $to: ID!) {
    addComment(postId: $post, content: $content, inReplyTo: $to) {
      id content createdAt author { name } inReplyTo { id author { name } } post { id commentsCount }
    }
  }`;

// renderBody is a post's content and media: behind its content warning
// when it has one, the media blurred when sensitive.
export function renderBody(p, el, media, nodes) {
  const content = el('div', { className: 'content' }, ...(nodes || [p.content]));
  if (media && p.sensitive) {
    media.classList.add('sensitive');
    media.title = 'Sensitive media: click to show';
    media.addEventListener('click', (ev) => {
      if (!media.classList.contains('sensitive')) return;
      ev.preventDefault();
      media.classList.remove('sensitive');
      media.title = '';
    });
  }
  if (!p.spoilerText) return el('div', { className: 'body' }, content, media);
  return el('details', { className: 'body cw' }, el('summary', { textContent: `CW: ${p.spoilerText}` }), content, media);
}

// editedMark says when the post was last edited.
export function editedMark(p) {
  return p.editedAt ? ` · edited ${new Date(p.editedAt).toLocaleString()}` : '';
}

// editButton opens the edit form of the post shown in article a; done
// receives the edited post's fields.
export function editButton({ client, el, p, a, showError, done }) {
  const btn = el('button', { className: 'edit', type: 'button', textContent: 'Edit' });
  btn.addEventListener('click', () => {
    if (a.querySelector('form.edit-form')) return;
    const form = el('form', { className: 'edit-form' },
      el('textarea', { name: 'content', maxLength: 500, required: true, value: p.content }),
      el('input', { name: 'spoiler', maxLength: 200, placeholder: 'Content warning (optional)', value: p.spoilerText || '' }),
      el('label', {}, el('input', { name: 'sensitive', type: 'checkbox', checked: p.sensitive }), ' sensitive media'),
      el('button', { type: 'submit', textContent: 'Save' }),
      el('button', { type: 'button', className: 'cancel', textContent: 'Cancel' }));
    form.querySelector('.cancel').addEventListener('click', () => form.remove());
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      const input = { content: form.content.value, spoilerText: form.spoiler.value, sensitive: form.sensitive.checked };
      const res = await mutate(client, EDIT, { id: p.id, input });
      if (showError(res)) return;
      form.remove();
      done(res.data.editPost);
    });
    a.querySelector('.actions').after(form);
  });
  return btn;
}

// renderComment is one comment with its Reply button; answers made here
// show in its list of answers.
export function renderComment({ client, el, c, postId, showError, onCount }) {
  const answers = el('ul', { className: 'answers' });
  const reply = el('button', { className: 'reply', type: 'button', textContent: 'Reply' });
  const li = el('li', { className: 'comment' },
    el('span', { className: 'author', textContent: `@${c.author.name}` }),
    c.inReplyTo ? el('span', { className: 'to', textContent: ` ↪ @${c.inReplyTo.author.name}` }) : null,
    ' ', el('span', { className: 'text', textContent: c.content }), ' ', reply, answers);
  li.dataset.id = c.id;
  reply.addEventListener('click', () => {
    if (li.querySelector(':scope > form')) return;
    const form = el('form', { className: 'answer-form' },
      el('input', { name: 'content', placeholder: `Answer @${c.author.name}…`, maxLength: 1000, required: true }),
      el('button', { type: 'submit', textContent: 'Send' }));
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      const res = await mutate(client, ANSWER, { post: postId, content: form.content.value, to: c.id });
      if (showError(res)) return;
      const d = res.data.addComment;
      answers.append(renderComment({ client, el, c: d, postId, showError, onCount }));
      onCount(d.post.commentsCount);
      form.remove();
    });
    answers.before(form);
    form.content.focus();
  });
  return li;
}
