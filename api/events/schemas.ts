import { z } from 'zod';

// Who and what an audit row names, by name (domain/audit/names.ts): read from the caller's org only.
const auditActorSchema = z
  .object({ id: z.uuid(), name: z.string(), email: z.string() })
  .meta({ id: 'AuditActor', description: 'a member of the organization, by name' });
const auditTokenSchema = z
  .object({
    id: z.uuid(),
    kind: z.enum(['api_token', 'session']).meta({ description: '`session`: signed in to the dashboard' }),
    name: z.string().nullable().meta({ description: "the API token's name (null when it was given none)" }),
  })
  .meta({ id: 'AuditToken', description: 'an API token or a dashboard session of the organization' });
const auditTargetSchema = z
  .object({
    kind: z
      .enum([
        'memory',
        'project',
        'member',
        'organization',
        'token',
        'runbook',
        'chat_session',
        'entity',
        'webhook',
        'export',
        'deletion',
        'proposal',
        'billing_event',
        'other',
      ])
      .meta({ description: 'what target_id names, by the action' }),
    id: z.string(),
    label: z
      .string()
      .nullable()
      .meta({
        description:
          'its name (a memory: the start of its content; a member: their name); once it is gone, ' +
          "the name the row kept if any (a deleted project's), else null",
      }),
    exists: z.boolean().meta({ description: 'whether the organization still has it' }),
  })
  .meta({ id: 'AuditTarget', description: 'what an audit row is about, by name' });

// The fields each audit row gains (GET /api/events, a memory's history).
export const auditActorField = auditActorSchema
  .nullable()
  .meta({ description: 'the member who acted; null for the service, or for someone no longer a member of the organization' });
export const auditTokenField = auditTokenSchema
  .nullable()
  .meta({ description: "the organization's API token or session that acted; null when none did, or it is gone" });
export const auditTargetField = auditTargetSchema.nullable().meta({ description: 'what the row is about; null when it names nothing' });
