// Pages live under /dashboard/...; links change the URL without reloading, and Back and Forward work.
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';

const BASE = '/dashboard';
const listeners = new Set<() => void>();

// `/` is /dashboard itself, and `/?q=1` is /dashboard?q=1 (no trailing slash).
const hrefOf = (path: string): string => BASE + (path.startsWith('/?') || path === '/' ? path.slice(1) : path);

export function navigate(path: string, replace = false): void {
  const url = hrefOf(path);
  if (replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  for (const listener of listeners) listener();
}

/** The path below /dashboard, e.g. `/memories/0190...`, and its query. */
export function usePath(): { path: string; query: URLSearchParams } {
  const read = () => ({ path: location.pathname.slice(BASE.length) || '/', query: new URLSearchParams(location.search) });
  const [state, setState] = useState(read);
  useEffect(() => {
    const update = () => setState(read());
    listeners.add(update);
    addEventListener('popstate', update);
    return () => {
      listeners.delete(update);
      removeEventListener('popstate', update);
    };
  }, []);
  return state;
}

export function Link({
  to,
  children,
  class: className,
  current,
  describedBy,
}: {
  to: string;
  children: ComponentChildren;
  class?: string;
  current?: boolean;
  describedBy?: string | undefined;
}) {
  return (
    <a
      href={hrefOf(to)}
      class={className}
      aria-current={current ? 'page' : undefined}
      aria-describedby={describedBy}
      onClick={(event) => {
        if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
        event.preventDefault();
        navigate(to);
      }}
    >
      {children}
    </a>
  );
}
