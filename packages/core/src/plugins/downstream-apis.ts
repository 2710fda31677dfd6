/**
 * `app.downstreamApis` (experimental; issue 35 item 7): calls the APIs of `DownstreamApis:<Name>`
 * with an access token, as the signed-in user (`callAsUser`: the access token the UserToken
 * scheme saved at sign-in, refreshed single-flight by `app.session.accessToken`, or the API's own
 * token from the refresh token, `app.session.accessTokenFor`) or as the app
 * (`callAsApp`: a client-credentials token). Thin glue: the rules of a call are in
 * downstream/downstream-call.ts, the tokens in downstream/client-credentials.ts and the session's
 * token refresh. docs/guides/call-another-api.md.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { ApplicationConfiguration } from '../providers/application-schema.js'
import { apiNamed, callAsApp, downstreamApisOf, type DownstreamApi } from '../downstream/downstream-apis.js'
import { callDownstream, type DownstreamRequestInit, type TokenSource } from '../downstream/downstream-call.js'
import { DownstreamApiError } from '../downstream/downstream-error.js'
import { TokenRefreshError } from '../session/token-refresh.js'

/** `app.downstreamApis`. Every method throws `DownstreamApiError` (a coded `AppError`) when no answer was had. @public @experimental */
export interface DownstreamApisApi {
  /** The configured API names. */
  readonly names: readonly string[]
  /**
   * Calls `path` (relative to the API's BaseUrl: `/orders?status=open`) of the API `api` with the
   * signed-in user's access token: the one its UserToken scheme saved at sign-in, refreshed first
   * when it expires within a minute, or with UserToken:Resource, :Scopes or :Audience the API's
   * own token asked for with the refresh token and kept in the session; on a 401 answer, once
   * more with a new token (`APP_ERR_DOWNSTREAM_TOKEN_UNAVAILABLE`, 503, when the provider
   * refuses the API's token).
   * Answers the API's response (any status; a 3xx is not followed), its body read already (at
   * most MaxResponseBytes). Throws `DownstreamApiError`: `APP_ERR_DOWNSTREAM_SIGN_IN_REQUIRED`
   * (401: no such user or token), `APP_ERR_DOWNSTREAM_FAILED` (502: unreachable, timed out, too
   * large), `APP_ERR_DOWNSTREAM_REQUEST_INVALID` (500: unknown API, no UserToken, a path outside
   * the BaseUrl; nothing was sent).
   */
  callAsUser: (request: FastifyRequest, reply: FastifyReply, api: string, path: string, init?: DownstreamRequestInit) => Promise<Response>
  /**
   * The same as the app itself, with the API's client-credentials token (cached until shortly
   * before it expires, one token request for concurrent callers; on a 401, once more with a new
   * token). Throws as {@link DownstreamApisApi.callAsUser}, with
   * `APP_ERR_DOWNSTREAM_TOKEN_UNAVAILABLE` (503) when no token could be obtained.
   */
  callAsApp: (api: string, path: string, init?: DownstreamRequestInit) => Promise<Response>
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The configured downstream APIs (`DownstreamApis:<Name>`); experimental. */
    downstreamApis: DownstreamApisApi
  }
}

export interface DownstreamApisPluginOptions {
  readonly config: ApplicationConfiguration
  readonly environmentName: string
  readonly rootKey: string
}

/**
 * The signed-in user's token source for `api`, from its UserToken scheme's session only: the API's
 * own token (UserToken:Resource, :Scopes, :Audience) or else the access token saved at sign-in.
 */
function userTokenSource (app: FastifyInstance, request: FastifyRequest, reply: FastifyReply, api: DownstreamApi): TokenSource {
  return async (rejected) => {
    if (api.userScheme === undefined) {
      request.log.warn({ event: 'downstream.call.failed', api: api.name, caller: 'user', failure: 'invalid_target' }, 'downstream API call refused: the API has no UserToken')
      throw new DownstreamApiError(api.name, 'invalid_target')
    }
    const principal = await app.session.authenticate(request, reply)
    // A session of another scheme holds another audience's token: never sent here.
    if (principal?.ticket.scheme !== api.userScheme) return undefined
    const options = rejected === undefined ? undefined : { rejected }
    if (api.userTokenRequest === undefined) return await app.session.accessToken(request, reply, options)
    try {
      return await app.session.accessTokenFor(request, reply, api.userTokenRequest, options)
    } catch (error) {
      // Logged where it happened (downstream.token.failed); the caller learns the class only.
      if (error instanceof TokenRefreshError) throw new DownstreamApiError(api.name, 'token_unavailable')
      throw error
    }
  }
}

async function downstreamApis (app: FastifyInstance, options: DownstreamApisPluginOptions): Promise<void> {
  const apis = downstreamApisOf(options.config, options.rootKey, options.environmentName)
  app.decorate('downstreamApis', {
    names: [...apis.keys()],
    async callAsUser (request, reply, name, path, init = {}) {
      const api = apiNamed(apis, name, request.log)
      return await callDownstream(api, path, init, userTokenSource(app, request, reply, api), 'user', request.log)
    },
    async callAsApp (name, path, init = {}) {
      return await callAsApp(apiNamed(apis, name, app.log), path, init, app.log)
    }
  } satisfies DownstreamApisApi)
}

export default fp(downstreamApis, { name: 'downstream-apis', dependencies: ['session'] })
