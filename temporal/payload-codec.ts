import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { METADATA_ENCODING_KEY, type Payload, type PayloadCodec } from '@temporalio/common';
import proto from '@temporalio/proto';

const { temporal } = proto;

const ENCRYPTED_ENCODING = 'binary/encrypted';
const KEY_ID_METADATA = 'encryption-key-id';
const IV_BYTES = 12;
const TAG_BYTES = 16;

export interface CodecKey {
  id: string;
  key: Buffer;
}

export class UnknownCodecKeyError extends Error {}

// AES-256-GCM over the whole payload (its metadata too: the encoding says what the data is), so Temporal's
// history holds no workflow input or result in clear: no e-mail, memory text, password or token hash.
// The first key encrypts; every key decrypts, found by the id each payload carries, so a new key can be
// put first while histories sealed with the old one stay readable. Payloads that were never encrypted
// (histories older than the codec) pass through.
export class EncryptionCodec implements PayloadCodec {
  private readonly keys: Map<string, Buffer>;
  private readonly active: CodecKey;

  constructor(keys: CodecKey[]) {
    if (keys.length === 0) throw new Error('the payload codec needs at least one key');
    this.active = keys[0]!;
    this.keys = new Map(keys.map((k) => [k.id, k.key]));
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => this.seal(payload));
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => this.open(payload));
  }

  seal(payload: Payload): Payload {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.active.key, iv);
    const plain = temporal.api.common.v1.Payload.encode(payload).finish();
    const sealed = Buffer.concat([iv, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
    return {
      metadata: { [METADATA_ENCODING_KEY]: Buffer.from(ENCRYPTED_ENCODING), [KEY_ID_METADATA]: Buffer.from(this.active.id) },
      data: sealed,
    };
  }

  open(payload: Payload): Payload {
    if (Buffer.from(payload.metadata?.[METADATA_ENCODING_KEY] ?? []).toString() !== ENCRYPTED_ENCODING) return payload;
    const id = Buffer.from(payload.metadata?.[KEY_ID_METADATA] ?? []).toString();
    const key = this.keys.get(id);
    if (!key) throw new UnknownCodecKeyError(`payload sealed with codec key "${id}", which is not configured (TEMPORAL_CODEC_KEYS)`);
    const data = Buffer.from(payload.data ?? []);
    const decipher = createDecipheriv('aes-256-gcm', key, data.subarray(0, IV_BYTES));
    decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
    const plain = Buffer.concat([decipher.update(data.subarray(IV_BYTES, data.length - TAG_BYTES)), decipher.final()]);
    return temporal.api.common.v1.Payload.decode(plain);
  }
}
