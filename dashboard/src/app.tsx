import { useEffect, useState } from 'preact/hooks';
import { api, messageOf, MemoryServiceError, unwrap, type Account } from './api.ts';
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
import { Link, navigate, usePath } from './router.tsx';
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
      <header>
        <strong class="brand">Memory service</strong>
        <nav aria-label="Sections">
          <Link to="/" current={path === '/' || memory !== null}>
            Memories
          </Link>
          <Link to="/chat" current={path === '/chat'}>
            Chat
          </Link>
          <Link to="/projects" current={path === '/projects'}>
            Projects
          </Link>
          <Link to="/threads" current={path === '/threads' || thread !== null}>
            Threads
          </Link>
          <Link to="/entities" current={path === '/entities'}>
            Entities
          </Link>
          <Link to="/runbooks" current={path === '/runbooks'}>
            Runbooks
          </Link>
          <Link to="/consolidation" current={path === '/consolidation'}>
            Consolidation
          </Link>
          <Link to="/exports" current={path === '/exports'}>
            Exports
          </Link>
          <Link to="/webhooks" current={path === '/webhooks'}>
            Webhooks
          </Link>
          <Link to="/tokens" current={path === '/tokens'}>
            API tokens
          </Link>
          <Link to="/organization" current={path === '/organization'}>
            Organization
          </Link>
          <Link to="/audit" current={path === '/audit'}>
            Audit log
          </Link>
          <Link to="/billing" current={path === '/billing'}>
            Billing
          </Link>
        </nav>
        <span class="who">
          <Link to="/account" current={path === '/account'}>
            {account.user.name}
          </Link>{' '}
          · {account.org.name} ({account.org.role})
        </span>
        <button
          type="button"
          class="secondary"
          onClick={async () => {
            await api.POST('/api/auth/logout');
            setAccount(null);
            navigate('/signin', true);
          }}
        >
          Sign out
        </button>
      </header>
      <div id="content">{page}</div>
    </>
  );
}
