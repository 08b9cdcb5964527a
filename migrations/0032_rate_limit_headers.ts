import { Migration } from '@mikro-orm/migrations';

// rate_limit_take also says how many events the key has left in its window and when the next one frees, for the
// RateLimit-* headers. Its first two columns are as before, so a process still selecting only those keeps working.
export class Migration0032RateLimitHeaders extends Migration {
  override up(): void {
    this.addSql(`drop function rate_limit_take(text, integer, interval)`);
    this.addSql(`
      create function rate_limit_take(p_key text, p_limit integer, p_window interval)
      returns table (allowed boolean, retry_after_ms bigint, remaining integer, reset_ms bigint) language plpgsql as $$
      declare
        v_now timestamptz(3) := clock_timestamp();
        v_recent timestamptz[];
        v_count integer;
      begin
        insert into rate_limit_windows as w (key, hits) values (p_key, '{}')
        on conflict (key) do update set key = w.key
        returning array(select h from unnest(w.hits) h where h > v_now - p_window order by h) into v_recent;
        v_count := coalesce(array_length(v_recent, 1), 0);
        if v_count < p_limit then
          v_recent := v_recent || v_now;
          update rate_limit_windows set hits = v_recent where key = p_key;
          -- The next event frees when the oldest one counted leaves the window.
          return query select true, 0::bigint, p_limit - v_count - 1,
            greatest(0, ceil(extract(epoch from (v_recent[1] + p_window - v_now)) * 1000))::bigint;
        else
          update rate_limit_windows set hits = v_recent where key = p_key;
          return query select false,
            greatest(1, ceil(extract(epoch from (v_recent[v_count - p_limit + 1] + p_window - v_now)) * 1000))::bigint, 0,
            greatest(1, ceil(extract(epoch from (v_recent[v_count - p_limit + 1] + p_window - v_now)) * 1000))::bigint;
        end if;
      end $$`);
  }
}
