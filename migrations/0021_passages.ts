import { Migration } from '@mikro-orm/migrations';

// Long memories are searched by meaning in passages (domain/store/passages.ts): besides the vector of its
// text (passage 0, which the model cuts at 512 tokens), a long memory has one row per window of its text
// (passages 1, 2, ...), in the same table and so in the same HNSW indexes, each keyed by the hash of the memory's
// whole text like passage 0 (an edit or a delete removes them all with it). Search keeps a memory's best passage.
// Adding a column with a constant default rewrites nothing; the new primary key is built once, blocking writes of
// vectors meanwhile (the whole migration took 3.8 s on the benchmark's 109,000 vectors here).
// The trigger of migrations/0018 counts memories with a vector, so it counts passage 0 only.
// Orgs that hold long memories already get a backfill when the worker next starts (embedding_backfills: orgs a
// migration asks the worker to walk once; domain/embeddings/backfill.ts): it embeds their passages only.
export class Migration0021Passages extends Migration {
  override up(): void {
    this.addSql(
      `create table if not exists embedding_backfills (org_id uuid primary key, requested_at timestamptz(3) not null default now())`,
    );
    this.addSql(
      `insert into embedding_backfills (org_id) select distinct org_id from memories where length(content) > 2000 and superseded_by is null on conflict do nothing`,
    );
    this.addSql(`alter table memory_embeddings add column if not exists passage smallint not null default 0`);
    this.addSql(
      `alter table memory_embeddings drop constraint memory_embeddings_pkey, add constraint memory_embeddings_pkey primary key (org_id, memory_id, passage)`,
    );
    this.addSql(`
      create or replace function memory_embeddings_count() returns trigger language plpgsql as $$
      declare
        pick smallint := floor(random() * 64);
      begin
        -- Each branch reads only the transition tables its operation has.
        if tg_op = 'INSERT' then
          insert into counters (org_id, scope_id, name, shard, value)
          select org_id, org_id, 'vectors:' || model, pick, count(*) from new_rows where passage = 0 group by org_id, model order by 1, 3
          on conflict (org_id, scope_id, name, shard) do update set value = counters.value + excluded.value;
        elsif tg_op = 'DELETE' then
          insert into counters (org_id, scope_id, name, shard, value)
          select org_id, org_id, 'vectors:' || model, pick, -count(*) from old_rows where passage = 0 group by org_id, model order by 1, 3
          on conflict (org_id, scope_id, name, shard) do update set value = counters.value + excluded.value;
        else
          insert into counters (org_id, scope_id, name, shard, value)
          select org_id, org_id, 'vectors:' || model, pick, sum(d) from (
              select org_id, model, 1 as d from new_rows where passage = 0 union all select org_id, model, -1 from old_rows where passage = 0) changed
           group by org_id, model having sum(d) <> 0 order by 1, 3
          on conflict (org_id, scope_id, name, shard) do update set value = counters.value + excluded.value;
        end if;
        return null;
      end $$`);
  }
}
