import { useEffect, useState } from 'preact/hooks';
import type { components } from '../../../clients/typescript/src/index.ts';
import { api, messageOf, unwrap } from '../api.ts';
import { Link } from '../router.tsx';
import { Empty, ErrorNote, Loading, useAction, when } from '../ui.tsx';

type Session = components['schemas']['ChatSession'];
type Message = components['schemas']['ChatMessage'];
type SessionRow = Omit<Session, 'messages' | 'metadata'>;

// Chat grounded on the organization's memories and runbooks, in sessions kept by the service; each
// reply lists what it drew on.
export function Chat() {
  const [sessions, setSessions] = useState<SessionRow[] | null>(null);
  const [current, setCurrent] = useState<Session | null>(null);
  const [error, setError] = useState<string | null>(null);
  const send = useAction();
  const start = useAction();
  const loadSessions = () =>
    api
      .GET('/api/chat/sessions')
      .then(unwrap)
      .then(
        (answer) => setSessions(answer.sessions as SessionRow[]),
        (err: unknown) => setError(messageOf(err)),
      );
  const open = (id: string) =>
    api
      .GET('/api/chat/sessions/{id}', { params: { path: { id } } })
      .then(unwrap)
      .then(setCurrent, (err: unknown) => setError(messageOf(err)));
  useEffect(() => void loadSessions(), []);
  return (
    <main class="chat">
      <h1>Chat</h1>
      <ErrorNote error={error} />
      <section aria-label="Sessions" class="sessions">
        <button
          type="button"
          disabled={start.busy}
          onClick={() =>
            void start.run(async () => {
              const created = await unwrap(await api.POST('/api/chat/sessions', { body: {} }));
              await loadSessions();
              await open(created.id);
            })
          }
        >
          New chat
        </button>
        <ErrorNote error={start.error} upgradeUrl={start.upgradeUrl} />
        {sessions === null && !error ? <Loading what="sessions" /> : null}
        {sessions?.length === 0 ? <Empty>No chats yet.</Empty> : null}
        <ul>
          {sessions?.map((session) => (
            <li key={session.id}>
              <button
                type="button"
                class="secondary"
                aria-current={current?.id === session.id ? 'true' : undefined}
                onClick={() => void open(session.id)}
              >
                {session.title} <span class="muted">{when(session.updated_at)}</span>
              </button>
            </li>
          ))}
        </ul>
      </section>
      {current ? (
        <section aria-label="Conversation" class="conversation">
          <h2>{current.title}</h2>
          {current.messages.length === 0 ? <p class="muted">Ask about anything your memories hold.</p> : null}
          <ol class="messages">
            {current.messages.map((message, i) => (
              <MessageItem key={i} message={message} />
            ))}
          </ol>
          <form
            aria-label="Ask"
            onSubmit={async (event) => {
              event.preventDefault();
              const formElement = event.currentTarget;
              const content = String(new FormData(formElement).get('content')).trim();
              if (!content) return;
              await send.run(async () => {
                const history = current.messages.map((m) => ({ role: m.role, content: m.content }));
                await unwrap(
                  await api.POST('/api/chat', { body: { messages: [...history, { role: 'user', content }], session_id: current.id } }),
                );
                formElement.reset();
                // The first question names the session: the list shows the new title.
                await Promise.all([open(current.id), loadSessions()]);
              });
            }}
          >
            <label class="wide">
              Your message <textarea name="content" rows={2} required />
            </label>
            <button type="submit" disabled={send.busy}>
              {send.busy ? 'Thinking…' : 'Send'}
            </button>
            <ErrorNote error={send.error} upgradeUrl={send.upgradeUrl} />
          </form>
        </section>
      ) : null}
    </main>
  );
}

function MessageItem({ message }: { message: Message }) {
  return (
    <li class={`message ${message.role}`}>
      <p class="meta">
        <span>{message.role === 'user' ? 'You' : 'Assistant'}</span>
        <span>{when(message.created_at)}</span>
      </p>
      <p class="content">{message.content}</p>
      {message.citations.length ? (
        <p class="meta">
          Drew on:{' '}
          {message.citations.map((citation) => (
            <Link key={citation.id} to={citation.type === 'memory' ? `/memories/${citation.id}` : '/runbooks'}>
              {citation.title}
            </Link>
          ))}
        </p>
      ) : null}
    </li>
  );
}
