import type { Corpus } from './corpus.ts';

// Memories as an agent keeps them: facts about people, projects, tools, decisions and incidents, with the
// long-tailed vocabulary (names, identifiers, versions) that real memory stores have, each followed by a
// sentence or two of free technical prose from the Cranfield and CISI abstracts.
const FIRST = [
  'alice',
  'bruno',
  'chen',
  'dana',
  'emeka',
  'farah',
  'gustav',
  'hana',
  'ivan',
  'jun',
  'kofi',
  'lena',
  'mateo',
  'nadia',
  'omar',
  'priya',
  'quinn',
  'rosa',
  'sven',
  'tariq',
  'uma',
  'vera',
  'wei',
  'ximena',
  'yusuf',
  'zoe',
];
const LAST = [
  'abbott',
  'bauer',
  'castillo',
  'dimitrov',
  'eriksen',
  'fujita',
  'garcia',
  'haddad',
  'ibrahim',
  'jensen',
  'kowalski',
  'lindqvist',
  'moreau',
  'nakamura',
  'okafor',
  'petrov',
  'quintero',
  'rossi',
  'sato',
  'tanaka',
  'ueda',
  'varga',
  'weber',
  'xu',
  'yamada',
  'zhou',
];
const TOOLS = [
  'postgres',
  'kafka',
  'redis',
  'kubernetes',
  'terraform',
  'react',
  'svelte',
  'django',
  'rails',
  'temporal',
  'grafana',
  'prometheus',
  'nginx',
  'envoy',
  'vitest',
  'pytest',
  'webpack',
  'vite',
  'docker',
  'helm',
  'argocd',
  'airflow',
  'spark',
  'clickhouse',
  'elasticsearch',
  'opensearch',
  'sentry',
  'datadog',
  'stripe',
  'twilio',
  'sendgrid',
  'auth0',
  'keycloak',
  'vault',
  'consul',
  'nomad',
  'jenkins',
  'circleci',
  'github',
  'gitlab',
  'jira',
  'linear',
  'notion',
  'figma',
  'slack',
  'zoom',
  'bigquery',
  'snowflake',
  'dbt',
  'looker',
];
const TOPICS = [
  'billing',
  'onboarding',
  'search',
  'checkout',
  'invoicing',
  'authentication',
  'reporting',
  'ingestion',
  'notifications',
  'analytics',
  'migration',
  'caching',
  'rate limiting',
  'observability',
  'localization',
  'accessibility',
  'pricing',
  'refunds',
  'exports',
  'permissions',
];
const ENVS = ['staging', 'production', 'canary', 'dev', 'eu-west', 'us-east', 'ap-south'];
const SYLLABLES = ['ka', 'lo', 'mi', 'ra', 'ten', 'vo', 'zu', 'pe', 'dri', 'shan', 'bel', 'nor', 'qua', 'fin', 'gor', 'hel'];

const TEMPLATES: ((c: Corpus, g: Gen) => string)[] = [
  (c, g) => `${g.person()} prefers ${c.pick(TOOLS)} over ${c.pick(TOOLS)} for ${c.pick(TOPICS)} work.`,
  (c, g) =>
    `Meeting with ${g.person()} on ${g.date()}: decided to move ${g.project()} ${c.pick(TOPICS)} to ${c.pick(TOOLS)} before ${g.date()}.`,
  (c, g) => `Bug in ${g.project()}: ${c.pick(TOPICS)} fails with error ${g.code()} when ${c.pick(TOOLS)} restarts in ${c.pick(ENVS)}.`,
  (c, g) => `Deploy of ${g.project()} v${g.version()} to ${c.pick(ENVS)} was rolled back by ${g.person()} (ticket ${g.ticket()}).`,
  (c, g) => `${g.person()} owns the ${c.pick(TOPICS)} roadmap for ${g.project()}; ask before changing the ${c.pick(TOOLS)} schema.`,
  (c, g) => `User asked to remember that ${g.project()} uses ${c.pick(TOOLS)} ${g.version()} and ${c.pick(TOOLS)} in ${c.pick(ENVS)}.`,
  (c, g) => `Customer ${g.company()} reported slow ${c.pick(TOPICS)} on ${g.date()}; ${g.person()} traced it to ${c.pick(TOOLS)}.`,
  (c, g) => `Runbook note: rotate the ${c.pick(TOOLS)} credentials for ${g.project()} every ${2 + Math.floor(c.random() * 12)} weeks.`,
];

interface Gen {
  person(): string;
  project(): string;
  company(): string;
  date(): string;
  version(): string;
  code(): string;
  ticket(): string;
}

export function agentMemoryGenerator(corpus: Corpus) {
  const word = (n: number) => Array.from({ length: n }, () => corpus.pick(SYLLABLES)).join('');
  const projects = Array.from({ length: 400 }, () => word(3));
  const companies = Array.from(
    { length: 300 },
    () => `${word(2)} ${corpus.pick(['labs', 'systems', 'health', 'logistics', 'bank', 'media'])}`,
  );
  const gen: Gen = {
    person: () => `${corpus.pick(FIRST)} ${corpus.pick(LAST)}`,
    project: () => corpus.pick(projects),
    company: () => corpus.pick(companies),
    date: () =>
      `2026-${String(1 + Math.floor(corpus.random() * 12)).padStart(2, '0')}-${String(1 + Math.floor(corpus.random() * 28)).padStart(2, '0')}`,
    version: () => `${Math.floor(corpus.random() * 5)}.${Math.floor(corpus.random() * 20)}.${Math.floor(corpus.random() * 10)}`,
    code: () => `E${1000 + Math.floor(corpus.random() * 9000)}`,
    ticket: () => `${corpus.pick(['OPS', 'ENG', 'SUP'])}-${Math.floor(corpus.random() * 20000)}`,
  };
  return {
    memory(): string {
      const facts = 1 + Math.floor(corpus.random() * 2);
      const prose = 2 + Math.floor(corpus.random() * 3);
      return [
        ...Array.from({ length: facts }, () => corpus.pick(TEMPLATES)(corpus, gen)),
        ...Array.from({ length: prose }, () => corpus.pick(corpus.sentences)),
      ].join(' ');
    },
    // Half entity lookups (a person, a project, a tool and topic), half topic words from real queries.
    query(): string {
      const r = corpus.random();
      if (r < 0.2) return gen.person();
      if (r < 0.35) return `${gen.project()} ${corpus.pick(TOPICS)}`;
      if (r < 0.5) return `${corpus.pick(TOOLS)} ${corpus.pick(ENVS)}`;
      return corpus.shortQuery();
    },
  };
}
