/** The small part of oidc-provider's API the tests use (the package ships no type declarations). */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http'

  export interface OidcAccount {
    accountId: string
    claims: (use: string, scope: string) => Promise<Record<string, unknown>>
  }

  export default class Provider {
    constructor (issuer: string, configuration: Record<string, unknown>)
    callback (): (request: IncomingMessage, response: ServerResponse) => void
    on (event: string, listener: (...args: unknown[]) => void): this
  }
}
