import { serverBusy } from './errors.ts';

// A call waiting for its group: its input, and how to settle it.
interface Call<In, Out> {
  input: In;
  resolve: (out: Out) => void;
  reject: (err: unknown) => void;
}

// Calls that reach PostgreSQL in groups, one statement per group: while `maxInflight` groups are under way, new
// calls queue, and the next group takes up to `maxGroup` of them. Under light load every call is a group of its
// own (no added wait); under load a group shares one round trip, one plan and, for writes, one commit. Used for
// the saves (domain/memories/save-batch.ts) and the credential lookups (domain/accounts/authenticate.ts): on a busy
// machine a statement costs more than the few rows it touches.
// `run` answers each input's outcome in order; if it throws, every call of the group fails with its error.
// At most QUEUED_ROUNDS full groups wait: past that the database is not keeping up, and a call that would only wait
// (holding its request's memory) fails at once with 503 server_busy instead; `what` names the calls in that message.
export const QUEUED_ROUNDS = 8;

export class GroupedCalls<In, Out> {
  readonly #queue: Call<In, Out>[] = [];
  #inflight = 0;
  readonly #run: (inputs: In[]) => Promise<PromiseSettledResult<Out>[]>;
  readonly #maxInflight: number;
  readonly #maxGroup: number;
  readonly #maxQueued: number;
  readonly #what: string;

  constructor(run: (inputs: In[]) => Promise<PromiseSettledResult<Out>[]>, maxInflight: number, maxGroup: number, what: string) {
    this.#run = run;
    this.#maxInflight = maxInflight;
    this.#maxGroup = maxGroup;
    this.#maxQueued = QUEUED_ROUNDS * maxGroup;
    this.#what = what;
  }

  call(input: In): Promise<Out> {
    if (this.#queue.length >= this.#maxQueued) return Promise.reject(serverBusy(`${this.#maxQueued} ${this.#what} are waiting already`));
    return new Promise((resolve, reject) => {
      this.#queue.push({ input, resolve, reject });
      this.#pump();
    });
  }

  #pump(): void {
    while (this.#inflight < this.#maxInflight && this.#queue.length > 0) {
      const group = this.#queue.splice(0, this.#maxGroup);
      this.#inflight += 1;
      void this.#runGroup(group).finally(() => {
        this.#inflight -= 1;
        this.#pump();
      });
    }
  }

  async #runGroup(group: Call<In, Out>[]): Promise<void> {
    try {
      const outcomes = await this.#run(group.map((c) => c.input));
      for (const [i, c] of group.entries()) {
        const outcome = outcomes[i]!;
        if (outcome.status === 'fulfilled') c.resolve(outcome.value);
        else c.reject(outcome.reason);
      }
    } catch (err) {
      for (const c of group) c.reject(err);
    }
  }
}
