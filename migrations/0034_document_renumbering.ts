import { Migration } from '@mikro-orm/migrations';

// An org's document numbers are renumbered densely when they run far ahead of its live documents
// (domain/search/fold.ts), so that they never reach int4's end and a search's buffers follow the live documents.
// - lexical_state.numbering counts the org's renumberings: a search that reads the index in one statement and
//   looks its document numbers up in another checks that the numbering is still the one it read.
// - lexical_docs_pk is checked at the end of a statement, so that one update can move every number down.
// - lexical_numbering_is raises SQLSTATE MS001 when the org's numbering is not the given one (the search starts over).
export class Migration0034DocumentRenumbering extends Migration {
  override up(): void {
    this.addSql(`alter table lexical_state add column numbering int not null default 0`);
    this.addSql(`alter table lexical_docs drop constraint lexical_docs_pk`);
    this.addSql(`alter table lexical_docs add constraint lexical_docs_pk primary key (org_id, docnum) deferrable initially immediate`);
    this.addSql(`
      create function lexical_numbering_is(org uuid, expected int) returns boolean language plpgsql stable as $$
      begin
        if coalesce((select numbering from lexical_state where org_id = org), 0) <> expected then
          raise exception 'the org''s documents were renumbered' using errcode = 'MS001';
        end if;
        return true;
      end $$`);
  }
}
