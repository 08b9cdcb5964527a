// The OpenAPI document's longer prose for the routes of api/orgs/, kept out of the route definitions.

export const postOrgs =
  "The caller's current credential stays bound to its org; a cookie session moves with POST " +
  '/api/auth/switch-org, and API tokens for the new org are issued from a session there.';
