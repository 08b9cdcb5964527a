import { defineSearchAttributeKey, SearchAttributeType, TypedSearchAttributes } from '@temporalio/common';

// Registered on the server at start (`--search-attribute OrgId=Keyword`): operators filter by tenant with
// `OrgId = "<uuid>"` in the Web UI.
export const ORG_ID = defineSearchAttributeKey('OrgId', SearchAttributeType.KEYWORD);

export const orgAttributes = (orgId: string | null): TypedSearchAttributes =>
  new TypedSearchAttributes(orgId ? [{ key: ORG_ID, value: orgId }] : []);
