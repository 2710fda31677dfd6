/**
 * A user agent for tests over real HTTP: `fetch` with `redirect: 'manual'` and one cookie jar per
 * origin (host:port), so the app's and the IdP's cookies stay apart the way a browser keeps them.
 *
 * @public @experimental
 */
export class CookieJar {
  readonly #cookies = new Map<string, Map<string, string>>()

  #jar (url: URL): Map<string, string> {
    let jar = this.#cookies.get(url.host)
    if (jar === undefined) {
      jar = new Map()
      this.#cookies.set(url.host, jar)
    }
    return jar
  }

  store (url: URL, response: Response): void {
    const jar = this.#jar(url)
    for (const line of response.headers.getSetCookie()) {
      const [pair = ''] = line.split(';')
      const index = pair.indexOf('=')
      const name = pair.slice(0, index).trim()
      const value = pair.slice(index + 1).trim()
      if (value === '' || /;\s*max-age=0/i.test(line) || /expires=Thu, 01 Jan 1970/i.test(line)) jar.delete(name)
      else jar.set(name, value)
    }
  }

  header (url: URL): string {
    return [...this.#jar(url)].map(([name, value]) => `${name}=${value}`).join('; ')
  }

  names (url: URL): string[] {
    return [...this.#jar(url).keys()]
  }

  get (url: URL, name: string): string | undefined {
    return this.#jar(url).get(name)
  }

  delete (url: URL, name: string): void {
    this.#jar(url).delete(name)
  }
}

/** One request and its answer. @public @experimental */
export interface Exchange {
  readonly url: URL
  readonly response: Response
  readonly body: string
  readonly location: URL | undefined
}

/** One browser's view of real HTTP: its cookie jar, one request at a time. @public @experimental */
export class HttpSession {
  readonly jar = new CookieJar()

  /** One request; no redirect followed. */
  async request (target: string | URL, init: { method?: string, form?: Record<string, string>, cookies?: boolean, accept?: string } = {}): Promise<Exchange> {
    const url = new URL(target)
    const headers: Record<string, string> = { accept: init.accept ?? 'text/html' }
    if (init.cookies !== false) {
      const cookie = this.jar.header(url)
      if (cookie !== '') headers.cookie = cookie
    }
    let body: URLSearchParams | undefined
    if (init.form !== undefined) {
      body = new URLSearchParams(init.form)
      headers['content-type'] = 'application/x-www-form-urlencoded'
    }
    const response = await fetch(url, { method: init.method ?? 'GET', headers, body, redirect: 'manual', signal: AbortSignal.timeout(10_000) })
    this.jar.store(url, response)
    const text = await response.text()
    const location = response.headers.get('location')
    return { url, response, body: text, location: location === null ? undefined : new URL(location, url) }
  }

  /** Follows redirects until `stop(url)` is true or a non-redirect answer; bounded. */
  async follow (target: string | URL, stop: (url: URL) => boolean = () => false, init: { method?: string, form?: Record<string, string> } = {}): Promise<Exchange> {
    let exchange = await this.request(target, init)
    for (let hops = 0; hops < 15; hops++) {
      if (exchange.location === undefined || stop(exchange.location)) return exchange
      exchange = await this.request(exchange.location)
    }
    throw new Error('too many redirects')
  }
}

/** Session cookie names of any app name (`__Host-<Name>.Web.Authentication`, the Development-insecure `.<Name>...` form, and their chunks). @public @experimental */
export function isSessionCookie (name: string): boolean {
  return /^(__Host-|\.)[A-Za-z][A-Za-z0-9]*\.Web\.Authentication(C\d+)?$/.test(name)
}

/** Session cookies with a value that the response sets. @public @experimental */
export function sessionCookiesSet (response: Response): string[] {
  return response.headers.getSetCookie()
    .map((line) => line.split(';')[0] ?? '')
    .filter((pair) => {
      const index = pair.indexOf('=')
      return isSessionCookie(pair.slice(0, index)) && pair.slice(index + 1) !== ''
    })
}

/** Fails when any planted value (secret, code, token) occurs in the captured log text. @public @experimental */
export function findPlanted (logText: string, planted: Iterable<string | undefined>): string[] {
  return [...planted].filter((value): value is string => value !== undefined && value.length >= 6 && logText.includes(value))
}
