import { accountActivities, type AccountActivityDeps } from './accounts.ts';

export type ActivityDeps = AccountActivityDeps;

// Every activity of the service, built over injected dependencies; workflows import only this type.
export function createActivities(deps: ActivityDeps) {
  return {
    ...accountActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
