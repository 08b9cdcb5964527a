import { Migration } from '@mikro-orm/migrations';

// Who and what a memory is about, in the field's vocabulary: the end user of an agent platform, the agent, and one
// run or conversation (docs/api-decisions.md, "Scopes"). Nullable text, so adding them rewrites nothing. Each has a
// partial index by org: a search or list filtered to one user reads that user's memories, not the org's.
export class Migration0024Scopes extends Migration {
  override up(): void {
    this.addSql(`alter table memories add column user_id text, add column agent_id text, add column run_id text`);
    for (const scope of ['user_id', 'agent_id', 'run_id']) {
      this.addSql(`create index memories_${scope}_idx on memories (org_id, ${scope}) where ${scope} is not null`);
    }
  }
}
