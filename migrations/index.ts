import type { MigrationObject } from '@mikro-orm/core';
import { Migration0001Foundation } from './0001_foundation.ts';

// Applied in this order; append new migrations, never edit one that has shipped.
export const migrations: MigrationObject[] = [{ name: '0001_foundation', class: Migration0001Foundation }];
