import { fileURLToPath } from 'node:url';
import type { DataConverter } from '@temporalio/common';
import { EncryptionCodec, type CodecKey } from './payload-codec.ts';

export const FAILURE_CONVERTER_PATH = fileURLToPath(new URL('./failure-converter.ts', import.meta.url));

// One converter for every client and worker of the service: they must all read what the others wrote.
export function dataConverter(keys: CodecKey[]): DataConverter {
  return { payloadCodecs: [new EncryptionCodec(keys)], failureConverterPath: FAILURE_CONVERTER_PATH };
}
