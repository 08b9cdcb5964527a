import { h, type VNode } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, messageOf, MemoryServiceError, unwrap, type Account } from './api.ts';
import { Header } from './header.tsx';
import { lazyPage, type LazyPage } from './lazy.tsx';
import { PaidNote } from './paid.tsx';
import { navigate, usePath } from './router.tsx';
import { ErrorNote, Loading } from './ui.tsx';

// Each page is a chunk of its own (build.ts): a first load fetches the shell and the one page it opens.
const AccountPage = lazyPage(() => import('./pages/account.tsx').then((m) => m.Account));
const Audit = lazyPage(() => import('./pages/audit.tsx').then((m) => m.Audit));
const BillingPage = lazyPage(() => import('./pages/billing.tsx').then((m) => m.BillingPage));
const Chat = lazyPage(() => import('./pages/chat.tsx').then((m) => m.Chat));
const Consolidation = lazyPage(() => import('./pages/consolidation.tsx').then((m) => m.Consolidation));
const VerifyEmail = lazyPage(() => import('./pages/email-links.tsx').then((m) => m.VerifyEmail));
const ResetPassword = lazyPage(() => import('./pages/email-links.tsx').then((m) => m.ResetPassword));
const Entities = lazyPage(() => import('./pages/entities.tsx').then((m) => m.Entities));
const Exports = lazyPage(() => import('./pages/exports.tsx').then((m) => m.Exports));
const MemoryPage = lazyPage(() => import('./memory-pages.ts').then((m) => m.MemoryPage));
const Organization = lazyPage(() => import('./pages/organization.tsx').then((m) => m.Organization));
const Projects = lazyPage(() => import('./pages/projects.tsx').then((m) => m.Projects));
const Runbooks = lazyPage(() => import('./pages/runbooks.tsx').then((m) => m.Runbooks));
const Memories = lazyPage(() => import('./memory-pages.ts').then((m) => m.Memories));
const SignIn = lazyPage(() => import('./pages/signin.tsx').then((m) => m.SignIn));
const SignUp = lazyPage(() => import('./pages/signup.tsx').then((m) => m.SignUp));
const Thread = lazyPage(() => import('./pages/threads.tsx').then((m) => m.Thread));
const Threads = lazyPage(() => import('./pages/threads.tsx').then((m) => m.Threads));
const Tokens = lazyPage(() => import('./pages/tokens.tsx').then((m) => m.Tokens));
const Webhooks = lazyPage(() => import('./pages/webhooks.tsx').then((m) => m.Webhooks));

type OnSignedIn = (account: Account) => void;
const PUBLIC: Record<string, LazyPage<{ onSignedIn: OnSignedIn }>> = {
  '/signin': SignIn,
  '/signup': SignUp,
  '/verify-email': VerifyEmail,
  '/reset-password': ResetPassword,
};

interface Session {
  account: Account;
  setAccount: (account: Account | null) => void;
}
// A signed-in page, and its props once the account is known.
interface Route {
  load: () => Promise<unknown>;
  show: (session: Session) => VNode;
}
const route = <P extends object>(Page: LazyPage<P>, props: (session: Session) => P): Route => ({
  load: Page.load,
  show: (session) => <Page {...props(session)} />,
});
const bare = (Page: LazyPage<object>): Route => route(Page, () => ({}));

const canManage = ({ account }: Session) => ({ canManage: account.org.role !== 'member' });
const own = ({ account, setAccount }: Session) => ({ account, onAccount: setAccount });
const SIGNED_IN: Record<string, Route> = {
  '/tokens': bare(Tokens),
  '/exports': bare(Exports),
  '/projects': route(Projects, canManage),
  '/organization': route(Organization, own),
  '/webhooks': route(Webhooks, canManage),
  '/audit': bare(Audit),
  '/billing': route(BillingPage, ({ account }) => ({ isOwner: account.org.role === 'owner' })),
  '/consolidation': bare(Consolidation),
  '/runbooks': bare(Runbooks),
  '/chat': bare(Chat),
  '/threads': bare(Threads),
  '/entities': bare(Entities),
  '/account': route(AccountPage, own),
};

function routeOf(path: string): Route {
  const thread = /^\/threads\/(.+)$/.exec(path);
  const memory = /^\/memories\/([\w-]+)$/.exec(path);
  if (SIGNED_IN[path]) return SIGNED_IN[path];
  if (thread) return route(Thread, () => ({ parentRef: decodeURIComponent(thread[1]!) }));
  if (memory) return route(MemoryPage, () => ({ id: memory[1]! }));
  return bare(Memories);
}

export function App() {
  const { path } = usePath();
  // undefined while asking the API who is signed in; null when nobody is.
  const [account, setAccount] = useState<Account | null | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  const publicPage = PUBLIC[path];
  const load = (publicPage ?? routeOf(path)).load;
  useEffect(() => {
    api
      .GET('/api/auth/me')
      .then(unwrap)
      .then(setAccount, (err: unknown) => {
        if (err instanceof MemoryServiceError && err.status === 401) setAccount(null);
        else setError(messageOf(err));
      });
  }, []);
  // The page's chunk is fetched while the account is asked for, not after; a failure shows when the page does.
  useEffect(() => void load().catch(() => undefined), [load]);
  useEffect(() => {
    if (account === null && !publicPage) navigate('/signin', true);
  }, [account, publicPage]);

  if (error) return <ErrorNote error={`The service could not be reached: ${error}`} />;
  if (account === undefined) return <Loading what="your account" />;
  if (publicPage) return h(publicPage, { onSignedIn: setAccount });
  if (account === null) return null;
  return (
    <>
      <a class="skip" href="#content">
        Skip to content
      </a>
      <Header
        path={path}
        account={account}
        onSignOut={async () => {
          await api.POST('/api/auth/logout');
          setAccount(null);
          navigate('/signin', true);
        }}
      />
      <div id="content">
        <PaidNote path={path} free={account.org.plan === 'free'} />
        {routeOf(path).show({ account, setAccount })}
      </div>
    </>
  );
}
