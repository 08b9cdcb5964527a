import { Migration } from '@mikro-orm/migrations';

// A memory's storage is its content and its metadata (the free plan's quota counts both): content_bytes becomes
// stored_bytes, each memory with metadata adds its JSON's bytes, and so does its org's counter.
export class Migration0030StoredBytes extends Migration {
  override up(): void {
    this.addSql(`alter table memories rename column content_bytes to stored_bytes`);
    this.addSql(`update counters set name = 'stored_bytes' where name = 'content_bytes'`);
    this.addSql(`
      insert into counters (org_id, scope_id, name, shard, value)
      select org_id, org_id, 'stored_bytes', 0, sum(octet_length(metadata::text)) from memories where metadata <> '{}'::jsonb group by org_id
      on conflict (org_id, scope_id, name, shard) do update set value = counters.value + excluded.value`);
    this.addSql(`update memories set stored_bytes = stored_bytes + octet_length(metadata::text) where metadata <> '{}'::jsonb`);
  }
}
