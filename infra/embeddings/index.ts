import type { Logger } from 'pino';
import type { Embedder } from '../../domain/store/embedder.ts';
import type { Config } from '../config.ts';
import type { EmbeddingPurpose } from './local.ts';
import { createOpenAiEmbedder } from './openai.ts';

// The embedding model as configured by the EMBEDDING_* variables, or null when there is none. Without a model
// the service still runs: saves and lexical search go on, semantic search answers 503 (docs/configuration.md).
// A model that cannot be loaded is logged as an error rather than stopping the process. `purpose` says what the
// process mostly embeds, which sets how the local model uses the CPU (local.ts, localEmbedderDefaults).
export async function createEmbedder(config: Config, logger: Logger, purpose: EmbeddingPurpose): Promise<Embedder | null> {
  switch (config.EMBEDDING_PROVIDER) {
    case 'none':
      return null;
    case 'openai': {
      if (!config.EMBEDDING_API_KEY) {
        logger.error('EMBEDDING_PROVIDER=openai needs EMBEDDING_API_KEY; semantic search is off');
        return null;
      }
      return createOpenAiEmbedder({
        baseURL: config.EMBEDDING_BASE_URL,
        apiKey: config.EMBEDDING_API_KEY,
        model: config.EMBEDDING_MODEL,
        timeoutMs: config.EMBEDDING_TIMEOUT_MS,
        queryTimeoutMs: config.EMBEDDING_QUERY_TIMEOUT_MS,
        maxRetries: config.EMBEDDING_MAX_RETRIES,
        queryPrefix: config.EMBEDDING_QUERY_PREFIX,
        maxInputChars: config.EMBEDDING_MAX_INPUT_CHARS,
      });
    }
    case 'local': {
      const modelDir = config.EMBEDDING_MODEL_DIR;
      if (!modelDir) {
        logger.error('EMBEDDING_PROVIDER=local needs EMBEDDING_MODEL_DIR (scripts/start.sh sets it); semantic search is off');
        return null;
      }
      try {
        // Loaded only here, so that the other providers do not load onnxruntime's native library.
        const { createLocalEmbedder, localEmbedderDefaults } = await import('./local.ts');
        const defaults = localEmbedderDefaults(purpose);
        const sessions = config.EMBEDDING_SESSIONS ?? defaults.sessions;
        const threads = config.EMBEDDING_THREADS ?? defaults.threads;
        const embedder = await createLocalEmbedder({
          modelDir,
          model: config.EMBEDDING_LOCAL_MODEL,
          sessions,
          threads,
          batchSize: defaults.batchSize,
        });
        logger.info({ model: embedder.model, modelDir, sessions, threads }, 'embedding model loaded');
        return embedder;
      } catch (err) {
        logger.error(
          { err, modelDir },
          'the embedding model could not be loaded from EMBEDDING_MODEL_DIR (it needs model.onnx and tokenizer.json); ' +
            'semantic search is off',
        );
        return null;
      }
    }
  }
}
