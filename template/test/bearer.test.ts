/**
 * The app's /api routes with a JwtBearer scheme configured (issue 35, item 8): a token from the
 * configured issuer (served over HTTP on loopback, Development) reaches the sample API as the
 * user it names, a page still refuses it, and the anonymous inventory gains exactly the
 * protected-resource metadata route.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { generateKeyPairSync, sign } from 'node:crypto'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { build } from './helpers/app.js'

const encode = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url')

test('a JwtBearer scheme: /api answers bearer tokens, pages do not, and the metadata route is the one new anonymous route', async (context) => {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  const jwks = JSON.stringify({ keys: [{ ...publicKey.export({ format: 'jwk' }), kid: 'k1', alg: 'RS256' }] })
  const issuer = createServer((_request, response) => { response.writeHead(200, { 'content-type': 'application/json' }).end(jwks) })
  await new Promise<void>((resolve) => issuer.listen(0, '127.0.0.1', resolve))
  context.after(() => { issuer.close() })
  const origin = `http://localhost:${(issuer.address() as AddressInfo).port}`
  const { app } = await build(context, {
    testSignIn: false,
    nodeEnv: 'Development',
    settings: { Authentication: { Schemes: { Api: { Type: 'JwtBearer', Issuer: origin, JwksUri: `${origin}/jwks`, Audiences: ['project-template-api'] } } } }
  })
  const now = Math.floor(Date.now() / 1000)
  const signingInput = `${encode({ alg: 'RS256', kid: 'k1', typ: 'at+jwt' })}.${encode({ iss: origin, aud: 'project-template-api', sub: 'orders-cli', client_id: 'orders-cli', exp: now + 300 })}`
  const token = `${signingInput}.${sign('sha256', Buffer.from(signingInput), privateKey).toString('base64url')}`

  const api = await app.inject({ url: '/api/application-information', headers: { authorization: `Bearer ${token}` } })
  assert.equal(api.statusCode, 200)
  assert.equal(api.json().apiVersion, '1.0')
  const page = await app.inject({ url: '/', headers: { authorization: `Bearer ${token}` } })
  assert.equal(page.statusCode, 302)
  const anonymous = await app.inject({ url: '/api/application-information', headers: { accept: 'text/html' } })
  assert.equal(anonymous.statusCode, 401)
  assert.match(String(anonymous.headers['www-authenticate']), /^Bearer resource_metadata="http:\/\/localhost:80\/\.well-known\/oauth-protected-resource"$/)
  assert.deepEqual(app.authorization.anonymousRoutes(), [
    'GET /.well-known/oauth-protected-resource',
    'GET /Account/AccessDenied',
    'GET /Account/Login',
    'GET /External/Challenge',
    'GET /Home/Error/:statusCode?',
    'GET /health',
    'GET /health/live',
    'GET /health/ready'
  ])
})
