/**
 * The sample API: its shapes, the fallback policy on the information routes (401 problem+json for
 * an anonymous caller, never a redirect), and its two named policies admitting and refusing.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { signIn } from '@project-template/core/testing'
import { build, PRINCIPALS } from '../helpers/app.js'

const INFORMATION = ['/api/application-information', '/api/v1/application-information']

async function signInAll (app: FastifyInstance): Promise<Record<keyof typeof PRINCIPALS, string>> {
  return { reader: await signIn(app, PRINCIPALS.reader()), admin: await signIn(app, PRINCIPALS.admin()), manager: await signIn(app, PRINCIPALS.manager()) }
}

test('the information routes answer the application name and API version to a signed-in user', async (context) => {
  const { app } = await build(context)
  const { reader } = await signInAll(app)
  for (const url of INFORMATION) {
    const response = await app.inject({ url, headers: { cookie: reader } })
    assert.equal(response.statusCode, 200, url)
    assert.equal(response.headers['content-type'], 'application/json; charset=utf-8')
    assert.deepEqual(response.json(), { applicationName: 'ProjectTemplate', apiVersion: '1.0' })
  }
})

test('every API route refuses an anonymous caller with a 401 problem document, never a redirect', async (context) => {
  const { app } = await build(context)
  for (const url of [...INFORMATION, '/api/application-information/administration', '/api/application-information/management']) {
    const response = await app.inject({ url, headers: { accept: 'text/html' } })
    assert.equal(response.statusCode, 401, url)
    assert.equal(response.headers['content-type'], 'application/problem+json; charset=utf-8')
    assert.equal((response.json() as { code?: string }).code, 'APP_ERR_AUTH_REQUIRED')
  }
})

test('administration: the administrator role policy admits an administrator and refuses a reader or a manager', async (context) => {
  const { app } = await build(context)
  const cookies = await signInAll(app)
  const url = '/api/application-information/administration'
  const admitted = await app.inject({ url, headers: { cookie: cookies.admin } })
  assert.equal(admitted.statusCode, 200)
  assert.deepEqual(admitted.json(), { subject: 'user-1', name: 'Ada Lovelace' })
  for (const name of ['reader', 'manager'] as const) {
    const refused = await app.inject({ url, headers: { cookie: cookies[name] } })
    assert.equal(refused.statusCode, 403, name)
    assert.equal((refused.json() as { code?: string }).code, 'APP_ERR_AUTH_FORBIDDEN')
  }
})

test('management: the manage-application permission policy admits a manager and refuses a reader or an administrator', async (context) => {
  const { app } = await build(context)
  const cookies = await signInAll(app)
  const url = '/api/application-information/management'
  const admitted = await app.inject({ url, headers: { cookie: cookies.manager } })
  assert.equal(admitted.statusCode, 200)
  assert.deepEqual(admitted.json(), { subject: 'user-1', name: 'Ada Lovelace' })
  for (const name of ['reader', 'admin'] as const) {
    const refused = await app.inject({ url, headers: { cookie: cookies[name] } })
    assert.equal(refused.statusCode, 403, name)
  }
})

test('a browser navigating to a route it may not use is sent to the access-denied page', async (context) => {
  const { app } = await build(context)
  const { reader } = await signInAll(app)
  const response = await app.inject({ url: '/api/application-information/administration', headers: { cookie: reader, accept: 'text/html' } })
  assert.equal(response.statusCode, 302)
  assert.match(String(response.headers.location), /^\/Account\/AccessDenied/)
})
