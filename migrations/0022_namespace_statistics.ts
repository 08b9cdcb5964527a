import { Migration } from '@mikro-orm/migrations';

// BM25 statistics per namespace for hybrid search's lexical list (domain/search/lexical.ts): each term's df in
// a namespace counts the term's postings whose document is in it, so a folded document records its memory's
// namespace (kept by the fold and by a move, domain/memories/update.ts), and the index lists a namespace's
// documents from the index alone. The namespace's total length joins its memory count in the counters
// (domain/store/counters.ts), counted here once from the memories.
export class Migration0022NamespaceStatistics extends Migration {
  override up(): void {
    this.addSql(`alter table lexical_docs add column namespace_id uuid`);
    this.addSql(`update lexical_docs d set namespace_id = m.namespace_id from memories m where m.org_id = d.org_id and m.id = d.memory_id`);
    // A document whose memory is gone (none should be: a delete unindexes in its own transaction) is unindexed as
    // a delete would, so that the column can be required.
    this.addSql(`
      with gone as (delete from lexical_docs where namespace_id is null returning org_id, docnum)
      insert into lexical_tombstones (org_id, docnum) select org_id, docnum from gone on conflict do nothing`);
    this.addSql(`alter table lexical_docs alter column namespace_id set not null`);
    this.addSql(`create index lexical_docs_namespace_idx on lexical_docs (namespace_id) include (docnum)`);
    this.addSql(`
      insert into counters (org_id, scope_id, name, shard, value)
      select org_id, namespace_id, 'doc_len', 0, sum(doc_len) from memories where superseded_by is null group by org_id, namespace_id
      on conflict (org_id, scope_id, name, shard) do update set value = counters.value + excluded.value`);
  }
}
