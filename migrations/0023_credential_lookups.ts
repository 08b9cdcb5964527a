import { Migration } from '@mikro-orm/migrations';

// Credentials are looked up in groups (domain/accounts/authenticate.ts): the requests that arrive while a lookup
// is under way share the next statement. Each row answers the lookup at its position (`n`, from 1) in the two
// arrays. As a PL/pgSQL function its plan is prepared once per connection instead of on every call (the
// three-way join costs more to plan than to run). It replaces the lookup of one credential.
export class Migration0023CredentialLookups extends Migration {
  override up(): void {
    this.addSql(`
      create function credential_lookups(p_hashes text[], p_kinds text[])
      returns table (n int, id uuid, user_id uuid, org_id uuid, role text, plan text, stale boolean) language plpgsql stable as $$
      begin
        return query
          select q.n::int, c.id, c.user_id, c.org_id, m.role, o.plan,
                 (c.last_used_at is null or c.last_used_at < now() - interval '60 seconds')
            from unnest(p_hashes, p_kinds) with ordinality as q(hash, kind, n)
            join credentials c on c.secret_hash = q.hash and c.kind = q.kind
            join memberships m on m.org_id = c.org_id and m.user_id = c.user_id
            join orgs o on o.id = c.org_id
           where c.revoked_at is null and (c.expires_at is null or c.expires_at > now());
      end $$`);
    this.addSql(`drop function credential_lookup(text, text)`);
  }
}
