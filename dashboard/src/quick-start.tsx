// The first calls with a token just issued, filled in: what a person copies into a terminal, a script or an agent's
// configuration right after creating it (curl, Python, TypeScript, MCP). The service's address is this page's.
export function QuickStart({ token }: { token: string }) {
  const base = window.location.origin;
  const snippets: [string, string][] = [
    [
      'curl',
      `curl -s -XPOST ${base}/api/memories -H 'authorization: Bearer ${token}' ` +
        `-H 'content-type: application/json' -d '{"content":"My first memory"}'`,
    ],
    [
      'Python (clients/python)',
      [
        'from memory_service import MemoryClient',
        `client = MemoryClient("${base}", "${token}")`,
        'client.add_memory("My first memory")',
        'print(client.search("first memory", mode="hybrid").hits)',
      ].join('\n'),
    ],
    [
      'TypeScript (@memory-service/client)',
      [
        "import { MemoryClient } from '@memory-service/client';",
        `const client = new MemoryClient({ baseUrl: '${base}', token: '${token}' });`,
        "await client.addMemory({ content: 'My first memory' });",
      ].join('\n'),
    ],
    [
      'MCP (Claude Code; the JSON is for Cursor and Claude Desktop)',
      `claude mcp add --transport http memory ${base}/mcp --header "Authorization: Bearer ${token}"\n\n` +
        JSON.stringify({ mcpServers: { memory: { type: 'http', url: `${base}/mcp`, headers: { Authorization: `Bearer ${token}` } } } }),
    ],
  ];
  return (
    <section class="quick-start" aria-label="Quick start">
      <h2>Quick start</h2>
      {snippets.map(([name, code]) => (
        <figure key={name}>
          <figcaption>{name}</figcaption>
          <pre>
            <code>{code}</code>
          </pre>
        </figure>
      ))}
    </section>
  );
}
