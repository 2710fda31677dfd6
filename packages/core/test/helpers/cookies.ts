/**
 * Cookie and anti-forgery helpers shared by the tests: reading Set-Cookie lines (inject's headers
 * or fetch's), a line's attributes, and the anti-forgery token a page's logout form carries.
 * Plain functions, no app: usable against inject() responses and against a listening server.
 */

/** The Set-Cookie lines of inject()'s response headers, always as a list. */
export function setCookieLines (headers: Record<string, unknown>): string[] {
  const value = headers['set-cookie']
  return value === undefined ? [] : Array.isArray(value) ? value.map(String) : [String(value)]
}

/** A Set-Cookie line's attributes after the name=value pair, in order and trimmed. */
export function cookieAttributes (setCookie: string): string[] {
  return setCookie.split(';').slice(1).map((part) => part.trim())
}

/** The name=value pair of a Set-Cookie line. */
export function cookiePair (setCookie: string): string {
  return setCookie.split(';')[0]?.trim() ?? ''
}

const ANTIFORGERY_FIELD = /name="__RequestVerificationToken" value="([^"]+)"/

/** The anti-forgery token a page's form carries (the starter page's logout form), or undefined. */
export function antiforgeryTokenIn (html: string): string | undefined {
  return ANTIFORGERY_FIELD.exec(html)?.[1]
}

/** A browser's cookies for one origin: a Cookie header kept up to date from Set-Cookie (real processes, fetch). */
export class Cookies {
  readonly #values = new Map<string, string>()
  constructor (header = '') {
    for (const pair of header.split('; ').filter((part) => part.includes('='))) {
      const index = pair.indexOf('=')
      this.#values.set(pair.slice(0, index), pair.slice(index + 1))
    }
  }

  store (response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair = ''] = line.split(';')
      const index = pair.indexOf('=')
      const value = pair.slice(index + 1)
      if (value === '' || /max-age=0/i.test(line)) this.#values.delete(pair.slice(0, index))
      else this.#values.set(pair.slice(0, index), value)
    }
  }

  get header (): string {
    return [...this.#values].map(([name, value]) => `${name}=${value}`).join('; ')
  }

  hasSession (): boolean {
    return [...this.#values.keys()].some((name) => name.endsWith('ProjectTemplate.Web.Authentication'))
  }
}
