/**
 * Drives oidc-provider's dev interaction pages (login, consent) and its logout confirmation over
 * real HTTP with an {@link HttpSession}, as a browser would submit them.
 */
import assert from 'node:assert/strict'
import type { Exchange, HttpSession } from './http-session.js'

function formOf (html: string): { action: string, fields: Record<string, string> } {
  const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1]
  assert.ok(action !== undefined, 'the IdP page has a form')
  const fields: Record<string, string> = {}
  for (const match of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)) fields[match[1] ?? ''] = match[2] ?? ''
  return { action: action.replace(/&amp;/g, '&'), fields }
}

/**
 * From the challenge's redirect through the IdP's pages (login as `login`, consent) until the IdP
 * sends the browser back to `appOrigin`; returns that URL without requesting it.
 *
 * @public @experimental
 */
export async function throughIdpLogin (session: HttpSession, start: URL, appOrigin: string, login: string): Promise<URL> {
  let exchange = await session.request(start)
  for (let step = 0; step < 20; step++) {
    const next = exchange.location
    if (next !== undefined) {
      if (next.origin === appOrigin) return next
      exchange = await session.request(next)
      continue
    }
    assert.equal(exchange.response.status, 200, `IdP answered ${exchange.response.status} at ${exchange.url.pathname}`)
    const prompt = /name="prompt" value="([a-z]+)"/.exec(exchange.body)?.[1]
    assert.ok(prompt !== undefined, 'an interaction form')
    const { action } = formOf(exchange.body)
    exchange = await session.request(new URL(action, exchange.url), { method: 'POST', form: prompt === 'login' ? { prompt, login, password: 'any-password' } : { prompt } })
  }
  throw new Error('the IdP did not redirect back to the app')
}

/** At the IdP's end_session page: confirms "Yes, sign me out"; returns the IdP's answer (a redirect). @public @experimental */
export async function confirmIdpLogout (session: HttpSession, endSession: URL): Promise<Exchange> {
  const page = await session.request(endSession)
  assert.equal(page.response.status, 200, 'the IdP shows its logout confirmation')
  const { action, fields } = formOf(page.body)
  return await session.request(new URL(action, page.url), { method: 'POST', form: { ...fields, logout: 'yes' } })
}
