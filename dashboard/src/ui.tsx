import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { messageOf, MemoryServiceError } from './api.ts';

/** One action a person starts (a form sent, a button pressed): busy while it runs, its error shown after. */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  // A 402 carries where to upgrade: the error note links there.
  const [upgradeUrl, setUpgradeUrl] = useState<string | null>(null);
  const run = async (work: () => Promise<void>): Promise<void> => {
    setBusy(true);
    setError(null);
    setUpgradeUrl(null);
    try {
      await work();
    } catch (err) {
      setError(messageOf(err));
      if (err instanceof MemoryServiceError && err.status === 402) setUpgradeUrl(err.upgradeUrl ?? null);
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, upgradeUrl, run };
}

/** An error from the API, read out by screen readers as it appears. */
export function ErrorNote({ error, upgradeUrl }: { error: string | null; upgradeUrl?: string | null }) {
  if (!error) return null;
  return (
    <p class="error" role="alert">
      {error}
      {upgradeUrl ? (
        <>
          {' '}
          <a href={upgradeUrl}>Upgrade your plan</a>
        </>
      ) : null}
    </p>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p class="muted" role="status" aria-live="polite">
      Loading {what}…
    </p>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <div class="empty">{children}</div>;
}

/** A secret shown once: it is in the page only until the person leaves it. */
export function SecretOnce({ label, value }: { label: string; value: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <div class="secret" role="region" aria-label={label}>
      <p>
        <strong>{label}.</strong> Copy it now: it is shown only this once.
      </p>
      <code data-testid="secret">{value}</code>
      <button
        type="button"
        onClick={async () => {
          await navigator.clipboard.writeText(value).catch(() => undefined);
          setCopied(true);
        }}
      >
        {copied ? 'Copied' : 'Copy'}
      </button>
    </div>
  );
}

export const when = (ms: number): string => new Date(ms).toLocaleString();

/** Previous and Next over a list read `page` rows at a time; a page shorter than that is the last. */
export function Pager({
  offset,
  page,
  shown,
  onOffset,
  children,
}: {
  offset: number;
  page: number;
  shown: number;
  onOffset: (offset: number) => void;
  children?: ComponentChildren;
}) {
  return (
    <nav class="pager" aria-label="Pages">
      <button type="button" disabled={offset === 0} onClick={() => onOffset(Math.max(0, offset - page))}>
        Previous
      </button>
      {children}
      <button type="button" disabled={shown < page} onClick={() => onOffset(offset + page)}>
        Next
      </button>
    </nav>
  );
}

/** One search field that sends its trimmed words when submitted. */
export function FindForm({ label, placeholder, onFind }: { label: string; placeholder: string; onFind: (words: string) => void }) {
  return (
    <form
      class="search"
      role="search"
      onSubmit={(event) => {
        event.preventDefault();
        onFind(String(new FormData(event.currentTarget).get('q')).trim());
      }}
    >
      <label class="wide">
        {label} <input name="q" type="search" placeholder={placeholder} />
      </label>
      <button type="submit">Find</button>
    </form>
  );
}
