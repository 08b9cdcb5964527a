import { useEffect, useState } from 'preact/hooks';
import { api, messageOf, MemoryServiceError, unwrap, type Account } from './api.ts';
import { Header } from './header.tsx';
import { PaidNote } from './paid.tsx';
import { Account as AccountPage } from './pages/account.tsx';
import { Audit } from './pages/audit.tsx';
import { BillingPage } from './pages/billing.tsx';
import { Chat } from './pages/chat.tsx';
import { Consolidation } from './pages/consolidation.tsx';
import { ResetPassword, VerifyEmail } from './pages/email-links.tsx';
import { Entities } from './pages/entities.tsx';
import { Exports } from './pages/exports.tsx';
import { MemoryPage } from './pages/memory.tsx';
import { Organization } from './pages/organization.tsx';
import { Projects } from './pages/projects.tsx';
import { Runbooks } from './pages/runbooks.tsx';
import { Memories } from './pages/memories.tsx';
import { SignIn } from './pages/signin.tsx';
import { SignUp } from './pages/signup.tsx';
import { Thread, Threads } from './pages/threads.tsx';
import { Tokens } from './pages/tokens.tsx';
import { Webhooks } from './pages/webhooks.tsx';
import { navigate, usePath } from './router.tsx';
import { ErrorNote, Loading } from './ui.tsx';

const PUBLIC = ['/signin', '/signup', '/verify-email', '/reset-password'];

export function App() {
  const { path } = usePath();
  // undefined while asking the API who is signed in; null when nobody is.
  const [account, setAccount] = useState<Account | null | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    api.GET('/api/auth/me').then(unwrap).then(setAccount, (err: unknown) => {
      if (err instanceof MemoryServiceError && err.status === 401) setAccount(null);
      else setError(messageOf(err));
    });
  }, []);
  useEffect(() => {
    if (account === null && !PUBLIC.includes(path)) navigate('/signin', true);
  }, [account, path]);

  if (error) return <ErrorNote error={`The service could not be reached: ${error}`} />;
  if (account === undefined) return <Loading what="your account" />;
  if (path === '/signin') return <SignIn onSignedIn={setAccount} />;
  if (path === '/signup') return <SignUp onSignedIn={setAccount} />;
  if (path === '/verify-email') return <VerifyEmail />;
  if (path === '/reset-password') return <ResetPassword />;
  if (account === null) return null;

  const memory = /^\/memories\/([\w-]+)$/.exec(path);
  const thread = /^\/threads\/(.+)$/.exec(path);
  const canManage = account.org.role !== 'member';
  const page =
    path === '/tokens' ? <Tokens />
    : path === '/exports' ? <Exports />
    : path === '/projects' ? <Projects canManage={canManage} />
    : path === '/organization' ? <Organization account={account} onAccount={setAccount} />
    : path === '/webhooks' ? <Webhooks canManage={canManage} />
    : path === '/audit' ? <Audit />
    : path === '/billing' ? <BillingPage isOwner={account.org.role === 'owner'} />
    : path === '/consolidation' ? <Consolidation />
    : path === '/runbooks' ? <Runbooks />
    : path === '/chat' ? <Chat />
    : path === '/threads' ? <Threads />
    : path === '/entities' ? <Entities />
    : thread ? <Thread parentRef={decodeURIComponent(thread[1]!)} />
    : path === '/account' ? <AccountPage account={account} onAccount={setAccount} />
    : memory ? <MemoryPage id={memory[1]!} />
    : <Memories />;
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
        {page}
      </div>
    </>
  );
}
