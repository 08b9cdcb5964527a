import { randomBytes } from 'node:crypto';
import { defaultPayloadConverter } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { EncryptionCodec, UnknownCodecKeyError } from '../../temporal/payload-codec.ts';

const k1 = { id: 'k1', key: randomBytes(32) };
const k2 = { id: 'k2', key: randomBytes(32) };
const text = (b: Uint8Array | null | undefined) => Buffer.from(b ?? []).toString();

describe('Temporal payload codec', () => {
  it('seals the whole payload with AES-GCM and the key id, and opens it again', async () => {
    const plain = defaultPayloadConverter.toPayload({ email: 'ada@example.test', content: 'the deploy key is in vault' });
    const [sealed] = await new EncryptionCodec([k1]).encode([plain]);
    expect(text(sealed!.metadata!.encoding)).toBe('binary/encrypted');
    expect(text(sealed!.metadata!['encryption-key-id'])).toBe('k1');
    expect(text(sealed!.data)).not.toContain('ada@example.test');
    expect(text(sealed!.data)).not.toContain('json/plain');
    const [opened] = await new EncryptionCodec([k1]).decode([sealed!]);
    expect(defaultPayloadConverter.fromPayload(opened!)).toEqual({ email: 'ada@example.test', content: 'the deploy key is in vault' });
    // A fresh nonce each time: the same value never seals to the same bytes.
    const [again] = await new EncryptionCodec([k1]).encode([plain]);
    expect(text(again!.data)).not.toBe(text(sealed!.data));
  });

  it('rotates: a new first key seals, the old one still opens what it sealed, a dropped key is named', async () => {
    const [old] = await new EncryptionCodec([k1]).encode([defaultPayloadConverter.toPayload('sealed before rotation')]);
    const rotated = new EncryptionCodec([k2, k1]);
    expect(defaultPayloadConverter.fromPayload((await rotated.decode([old!]))[0]!)).toBe('sealed before rotation');
    const [fresh] = await rotated.encode([defaultPayloadConverter.toPayload('after')]);
    expect(text(fresh!.metadata!['encryption-key-id'])).toBe('k2');
    await expect(new EncryptionCodec([k2]).decode([old!])).rejects.toThrow(UnknownCodecKeyError);
    await expect(new EncryptionCodec([k2]).decode([old!])).rejects.toThrow(/"k1"/);
  });

  it('refuses tampered ciphertext and passes payloads that were never encrypted', async () => {
    const [sealed] = await new EncryptionCodec([k1]).encode([defaultPayloadConverter.toPayload(42)]);
    const data = Buffer.from(sealed!.data!);
    data[20]! ^= 1;
    await expect(new EncryptionCodec([k1]).decode([{ ...sealed!, data }])).rejects.toThrow();
    const plain = defaultPayloadConverter.toPayload('from a history older than the codec');
    expect((await new EncryptionCodec([k1]).decode([plain]))[0]).toBe(plain);
  });
});
