// A thin fetch wrapper for driving the real HTTP server in tests.
export interface ApiResponse<T = any> {
  status: number;
  body: T;
  text: string;
  headers: Headers;
  cookie: string | undefined;
}

export interface RequestOptions {
  body?: unknown;
  rawBody?: string;
  token?: string;
  cookie?: string;
  headers?: Record<string, string>;
}

export class ApiClient {
  readonly baseUrl: string;
  constructor(baseUrl: string) {
    this.baseUrl = baseUrl;
  }

  async request<T = any>(method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { ...options.headers };
    let body: string | undefined;
    if (options.rawBody !== undefined) {
      body = options.rawBody;
      headers['content-type'] ??= 'application/json';
    } else if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] = 'application/json';
    }
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    if (options.cookie) headers.cookie = `svc_session=${options.cookie}`;
    const res = await fetch(this.baseUrl + path, { method, headers, body, redirect: 'manual' });
    const text = await res.text();
    let parsed: unknown = undefined;
    if (text && (res.headers.get('content-type') ?? '').includes('json')) parsed = JSON.parse(text);
    const setCookie = res.headers.getSetCookie().find((c) => c.startsWith('svc_session='));
    const cookie = setCookie ? decodeURIComponent(setCookie.split(';')[0]!.slice('svc_session='.length)) : undefined;
    return { status: res.status, body: parsed as T, text, headers: res.headers, cookie };
  }

  get = <T = any>(path: string, o?: RequestOptions) => this.request<T>('GET', path, o);
  post = <T = any>(path: string, o?: RequestOptions) => this.request<T>('POST', path, o);
  put = <T = any>(path: string, o?: RequestOptions) => this.request<T>('PUT', path, o);
  patch = <T = any>(path: string, o?: RequestOptions) => this.request<T>('PATCH', path, o);
  delete = <T = any>(path: string, o?: RequestOptions) => this.request<T>('DELETE', path, o);
}
