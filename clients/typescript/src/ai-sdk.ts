// Memory tools for agents built with the Vercel AI SDK (`ai`): pass them as `tools` to generateText, streamText
// or an Agent. The scope (user, agent, run, project) comes from the options only, never from the model's input,
// so a model cannot read or write outside the scope its application gave it.
import { tool, type Tool } from 'ai';
import { z } from 'zod';
import type { MemoryClient } from './index.ts';

export interface MemoryToolsOptions {
  // Every search and save is confined to these; left out, the tools see all that the client's token sees.
  userId?: string;
  agentId?: string;
  runId?: string;
  namespace?: string;
  // Hits less relevant than this are left out (0-1); 0.15 is the service's floor for "nothing relevant".
  minRelevance?: number;
}

// A search hit as the model gets it: what it needs to answer, and nothing to spend tokens on.
export interface MemoryToolHit {
  id: string;
  content: string;
  relevance: number;
}

// A type, not an interface: generateText's `tools` is a record, which an interface does not fit.
export type MemoryTools = {
  searchMemories: Tool<{ query: string; limit?: number | undefined }, MemoryToolHit[]>;
  saveMemory: Tool<{ content: string }, { id: string; content: string }>;
};

export function memoryTools(client: MemoryClient, options: MemoryToolsOptions = {}): MemoryTools {
  const scope = {
    ...(options.userId !== undefined ? { user_id: options.userId } : {}),
    ...(options.agentId !== undefined ? { agent_id: options.agentId } : {}),
    ...(options.runId !== undefined ? { run_id: options.runId } : {}),
    ...(options.namespace !== undefined ? { namespace: options.namespace } : {}),
  };
  return {
    searchMemories: tool({
      description:
        'Searches long-term memory for facts, preferences and past events saved earlier. Call it before answering whenever what you know about the user or earlier conversations could matter; ask in your own words. Answers the best hits first, each with its relevance (0-1); an empty list means nothing relevant is saved.',
      inputSchema: z.object({
        query: z.string().min(1).describe('what to look for, in your own words'),
        limit: z.number().int().min(1).max(20).optional().describe('the most hits to return (default 5)'),
      }),
      execute: async ({ query, limit }) => {
        const hits = await client.searchMemories({
          query,
          k: limit ?? 5,
          mode: 'hybrid',
          min_relevance: options.minRelevance ?? 0.15,
          ...scope,
        });
        return hits.map((hit) => ({ id: hit.id, content: hit.content, relevance: hit.relevance ?? 0 }));
      },
    }),
    saveMemory: tool({
      description:
        'Saves something worth remembering in later conversations: a fact about the user, a preference, a decision, an event. Save one self-contained statement per call, written so that it makes sense on its own later. Do not save what is already saved, small talk or secrets.',
      inputSchema: z.object({
        content: z.string().min(1).describe('one self-contained statement, e.g. "Alex is vegetarian"'),
      }),
      execute: async ({ content }) => {
        const saved = await client.addMemory({ content, ...scope });
        return { id: saved.id, content: saved.content };
      },
    }),
  };
}
