// node-oidc-provider ships no type declarations; the tests use only its constructor and listen().
declare module 'oidc-provider' {
  const Provider: new (issuer: string, configuration: Record<string, unknown>) => { listen(port: number, callback: () => void): unknown };
  export default Provider;
}
