import { useRef, useState } from 'preact/hooks';
import type { Account } from './api.ts';
import { PAID_SECTIONS } from './paid.tsx';
import { Link } from './router.tsx';

const SECTIONS: [to: string, name: string][] = [
  ['/', 'Memories'],
  ['/chat', 'Chat'],
  ['/projects', 'Projects'],
  ['/threads', 'Threads'],
  ['/entities', 'Entities'],
  ['/runbooks', 'Runbooks'],
  ['/consolidation', 'Consolidation'],
  ['/exports', 'Exports'],
  ['/webhooks', 'Webhooks'],
  ['/tokens', 'API tokens'],
  ['/organization', 'Organization'],
  ['/audit', 'Audit log'],
  ['/billing', 'Billing'],
];

// A memory's page belongs to Memories, a thread's to Threads.
const isCurrent = (to: string, path: string): boolean =>
  to === '/' ? path === '/' || path.startsWith('/memories/') : path === to || path.startsWith(`${to}/`);

/** The sections, the person and sign-out; on a narrow screen the sections fold behind a Menu button (styles.css). */
export function Header({ path, account, onSignOut }: { path: string; account: Account; onSignOut: () => void }) {
  const [open, setOpen] = useState(false);
  const menu = useRef<HTMLButtonElement>(null);
  // A free org sees which sections need the paid plan before it clicks (paid.tsx).
  const free = account.org.plan === 'free';
  return (
    <header
      onKeyDown={(event) => {
        if (event.key !== 'Escape' || !open) return;
        setOpen(false);
        menu.current?.focus();
      }}
    >
      <strong class="brand">Memory service</strong>
      <button ref={menu} type="button" class="menu secondary" aria-expanded={open} aria-controls="sections" onClick={() => setOpen(!open)}>
        Menu
      </button>
      {/* A section chosen closes the menu. */}
      <nav id="sections" aria-label="Sections" class={open ? 'open' : undefined} onClick={() => setOpen(false)}>
        {SECTIONS.map(([to, name]) => (
          <Link key={to} to={to} current={isCurrent(to, path)} describedBy={free && PAID_SECTIONS[to] ? 'paid-section' : undefined}>
            {name}
            {free && PAID_SECTIONS[to] ? (
              <span class="paid" aria-hidden="true">
                paid
              </span>
            ) : null}
          </Link>
        ))}
        <span id="paid-section" hidden>
          part of the paid plan
        </span>
      </nav>
      <span class="who">
        <Link to="/account" current={path === '/account'}>
          {account.user.name}
        </Link>{' '}
        · {account.org.name} ({account.org.role})
      </span>
      <button type="button" class="secondary" onClick={onSignOut}>
        Sign out
      </button>
    </header>
  );
}
