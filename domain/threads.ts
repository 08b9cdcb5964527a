import { Worker } from 'node:worker_threads';
import { Turns } from './turns.ts';

// The first message of a thread: it is ready, or why not.
export type ThreadReady = { ready: true } | { error: string };
// A thread's answer to one request: its value, or why it failed.
export type ThreadReply<T> = { value: T } | { error: string };

export interface ThreadPool<Request, Value> {
  // The request's value, computed in the owner's turn; `transfer` moves buffers to the thread instead of copying them.
  run(owner: string, request: Request, transfer?: ArrayBuffer[]): Promise<Value>;
  // Requests waiting in line are refused; a request in a thread finishes before its thread ends.
  close(): Promise<void>;
}

interface Waiting<Request, Value> {
  owner: string;
  request: Request;
  transfer: ArrayBuffer[];
  resolve: (value: Value) => void;
  reject: (err: Error) => void;
}

// Work that would hold up the event loop (a model's forward pass, redaction of a long text), run by `count` threads
// of one body (`url`), each taking one request at a time: a request goes to the first free thread, or waits in its
// owner's line, the lines taking turns (turns.ts), so that one org's many requests hold up another's by one at most.
// A thread with nothing to do does not keep the process alive. A thread that stops (it should not) fails its
// request and leaves the pool. `name` names the work in errors, which `fail` makes.
export async function startThreads<Request, Value>(
  url: URL,
  workerData: unknown,
  count: number,
  name: string,
  fail: (detail: string) => Error,
): Promise<ThreadPool<Request, Value>> {
  const threads = await Promise.all(
    Array.from({ length: count }, async () => {
      const worker = new Worker(url, { workerData });
      const message = await new Promise<ThreadReady>((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
      });
      if ('error' in message) {
        await worker.terminate();
        throw new Error(`${name} could not be loaded: ${message.error}`);
      }
      worker.unref();
      return worker;
    }),
  );
  let alive = threads.length;
  let closed = false;
  const free = [...threads];
  const line = new Turns<Waiting<Request, Value>>();
  const running = new Map<Worker, Waiting<Request, Value>>();
  // Requests under way per owner, for the turns.
  const counts = new Map<string, number>();
  const underWay = (owner: string) => counts.get(owner) ?? 0;
  // Every request not yet answered, for close to wait on.
  const unanswered = new Set<Promise<Value>>();

  const finished = (owner: string) => {
    if (underWay(owner) > 1) counts.set(owner, underWay(owner) - 1);
    else counts.delete(owner);
  };
  const dispatch = () => {
    if (alive === 0) for (const waiting of line.drain()) waiting.reject(fail(`${name}'s threads have stopped`));
    while (free.length > 0 && line.size > 0) {
      const worker = free.pop()!;
      const waiting = line.shift(underWay)!;
      running.set(worker, waiting);
      counts.set(waiting.owner, underWay(waiting.owner) + 1);
      worker.ref();
      worker.postMessage(waiting.request, waiting.transfer);
    }
  };
  for (const worker of threads) {
    worker.on('message', (reply: ThreadReply<Value>) => {
      const waiting = running.get(worker)!;
      running.delete(worker);
      worker.unref();
      free.push(worker);
      if ('error' in reply) waiting.reject(fail(`${name} failed: ${reply.error}`));
      else waiting.resolve(reply.value);
      // The owner whose request ended still counts it while the thread is given: among equals, another goes first.
      dispatch();
      finished(waiting.owner);
    });
    worker.on('exit', (code) => {
      alive -= 1;
      const waiting = running.get(worker);
      waiting?.reject(fail(`a thread of ${name} stopped (exit code ${code})`));
      running.delete(worker);
      if (waiting) finished(waiting.owner);
      if (free.includes(worker)) free.splice(free.indexOf(worker), 1);
      dispatch();
    });
  }
  return {
    run: (owner, request, transfer = []) => {
      if (closed) return Promise.reject(fail(`${name} is shutting down`));
      const answer = new Promise<Value>((resolve, reject) => {
        line.push(owner, { owner, request, transfer, resolve, reject });
        dispatch();
      });
      unanswered.add(answer);
      const forget = () => void unanswered.delete(answer);
      answer.then(forget, forget);
      return answer;
    },
    // A thread ended in the middle of a request (as process.exit does) may abort the whole process (onnxruntime
    // answers into a thread that is gone), so close waits for every request under way first.
    close: async () => {
      closed = true;
      for (const waiting of line.drain()) waiting.reject(fail(`${name} is shutting down`));
      await Promise.allSettled(unanswered);
      await Promise.all(threads.map((worker) => worker.terminate()));
    },
  };
}
