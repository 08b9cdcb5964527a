// The payload codec key the recorded workflow histories (test/fixtures/histories) were encrypted with: a fixed test
// key, so that any machine can decode them to replay.
export const REPLAY_CODEC_KEYS = `histories:${Buffer.alloc(32, 7).toString('base64')}`;
