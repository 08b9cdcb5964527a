import { h, type ComponentChildren, type ComponentType, type FunctionComponent } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { messageOf } from './api.ts';
import { ErrorNote, Loading } from './ui.tsx';

/** A page whose module is a chunk of its own (dashboard/build.ts), fetched the first time it is shown or loaded. */
export type LazyPage<P> = FunctionComponent<P> & { load: () => Promise<unknown> };

export function lazyPage<P extends object>(importPage: () => Promise<ComponentType<P>>): LazyPage<P> {
  let loaded: ComponentType<P> | undefined;
  let loading: Promise<ComponentType<P>> | undefined;
  // A failed fetch is forgotten, so that showing the page again tries again.
  const load = () =>
    (loading ??= importPage().then(
      (page) => (loaded = page),
      (err: unknown) => {
        loading = undefined;
        throw err;
      },
    ));
  function Page(props: P): ComponentChildren {
    const [, setShown] = useState(false);
    const [error, setError] = useState<string | null>(null);
    // Also when the chunk arrived between this render and its effect: the page then renders once more.
    useEffect(
      () =>
        void load().then(
          () => setShown(true),
          (err: unknown) => setError(messageOf(err)),
        ),
      [],
    );
    if (loaded) return h(loaded as ComponentType<object>, props);
    // A chunk gone after the dashboard was updated: a reload fetches the new build's page and chunks.
    if (error) return <ErrorNote error={`This page could not be loaded (${error}); reload the page to try again.`} />;
    return <Loading what="the page" />;
  }
  Page.load = load;
  return Page;
}
