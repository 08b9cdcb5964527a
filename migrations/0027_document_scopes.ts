import { Migration } from '@mikro-orm/migrations';

// A folded document records its memory's scopes, as it records its namespace (0022): a search filtered to one end
// user, agent or run reads that scope's document numbers from the index alone (domain/search/lexical.ts), instead
// of each memory's row and then its document. Kept by the fold and by an update (domain/store/postings.ts).
export class Migration0027DocumentScopes extends Migration {
  override up(): void {
    this.addSql(`alter table lexical_docs add column user_id text, add column agent_id text, add column run_id text`);
    this.addSql(`
      update lexical_docs d set user_id = m.user_id, agent_id = m.agent_id, run_id = m.run_id from memories m
       where m.org_id = d.org_id and m.id = d.memory_id and (m.user_id is not null or m.agent_id is not null or m.run_id is not null)`);
    for (const scope of ['user_id', 'agent_id', 'run_id']) {
      this.addSql(`create index lexical_docs_${scope}_idx on lexical_docs (org_id, ${scope}) include (docnum) where ${scope} is not null`);
    }
  }
}
