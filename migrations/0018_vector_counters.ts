import { Migration } from '@mikro-orm/migrations';

// How many vectors each org holds of each model, in the sharded counters (name `vectors:<model>`, see
// domain/embeddings/store.ts): GET /api/memories/embeddings read it by counting the org's vectors, which took
// half a second and three processes at 240,000 memories, and grows with the org. A statement-level trigger keeps
// the counts, so every write of the table counts (saves' vectors, re-embeds, model changes, deletes, erasures,
// an operator's hand). It adds one upsert per statement that writes vectors, on a shard picked per statement.
// The partial index finds an org's superseded memories, whose vectors the status leaves out.
export class Migration0018VectorCounters extends Migration {
  override up(): void {
    this.addSql(`
      create function memory_embeddings_count() returns trigger language plpgsql as $$
      declare
        pick smallint := floor(random() * 64);
      begin
        -- Each branch reads only the transition tables its operation has.
        if tg_op = 'INSERT' then
          insert into counters (org_id, scope_id, name, shard, value)
          select org_id, org_id, 'vectors:' || model, pick, count(*) from new_rows group by org_id, model order by 1, 3
          on conflict (org_id, scope_id, name, shard) do update set value = counters.value + excluded.value;
        elsif tg_op = 'DELETE' then
          insert into counters (org_id, scope_id, name, shard, value)
          select org_id, org_id, 'vectors:' || model, pick, -count(*) from old_rows group by org_id, model order by 1, 3
          on conflict (org_id, scope_id, name, shard) do update set value = counters.value + excluded.value;
        else
          insert into counters (org_id, scope_id, name, shard, value)
          select org_id, org_id, 'vectors:' || model, pick, sum(d) from (
              select org_id, model, 1 as d from new_rows union all select org_id, model, -1 from old_rows) changed
           group by org_id, model having sum(d) <> 0 order by 1, 3
          on conflict (org_id, scope_id, name, shard) do update set value = counters.value + excluded.value;
        end if;
        return null;
      end $$`);
    // Creating the triggers locks out writers of the table until this migration commits, so the counts below
    // and the triggers' afterwards add up exactly.
    this.addSql(
      `create trigger memory_embeddings_counted_insert after insert on memory_embeddings referencing new table as new_rows for each statement execute function memory_embeddings_count()`,
    );
    this.addSql(
      `create trigger memory_embeddings_counted_update after update on memory_embeddings referencing old table as old_rows new table as new_rows for each statement execute function memory_embeddings_count()`,
    );
    this.addSql(
      `create trigger memory_embeddings_counted_delete after delete on memory_embeddings referencing old table as old_rows for each statement execute function memory_embeddings_count()`,
    );
    this.addSql(`
      insert into counters (org_id, scope_id, name, shard, value)
      select org_id, org_id, 'vectors:' || model, 0, count(*) from memory_embeddings group by org_id, model
      on conflict (org_id, scope_id, name, shard) do update set value = counters.value + excluded.value`);
    this.addSql(`create index memories_superseded_idx on memories (org_id) where superseded_by is not null`);
  }
}
