/**
 * This app's tests on `@project-template/core/testing`: `build(t)` builds this app (src/app.ts)
 * from its own root and name, and PRINCIPALS are the users its policies tell apart. Everything
 * else (settings, the test key ring, signIn, the local OpenID provider) comes from the core.
 */
import { dirname, resolve } from 'node:path'
import type { TestContext } from 'node:test'
import { fileURLToPath } from 'node:url'
import type { Claim } from '@project-template/core'
import { build as buildWith, claim, type TestApp, type TestAppOptions } from '@project-template/core/testing'
import { buildApp } from '../../src/app.js'
import { APPLICATION_NAME } from '../../src/application-name.js'

/** The app's root: its appsettings*.json, package.json and public/. */
export const APP_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..')

/**
 * Builds this app for `inject` with `settings` over the closed posture (not listening) and closes
 * it when the test ends: `const { app, logs } = await build(t, { settings })`.
 */
export async function build (context: Pick<TestContext, 'after'>, options: Omit<TestAppOptions, 'buildApp' | 'contentRoot' | 'applicationName'> = {}): Promise<TestApp> {
  return await buildWith(context, { ...options, buildApp, contentRoot: APP_ROOT, applicationName: APPLICATION_NAME })
}

const reader = (): Claim[] => [
  claim('application:subject', 'user-1'),
  claim('application:name', 'Ada Lovelace'),
  claim('application:email', 'ada@example.test'),
  claim('application:role', 'Reader'),
  claim('application:permission', 'application.read')
]

/** A reader, and the same user with the administrator role or the manage-application permission. */
export const PRINCIPALS = {
  reader,
  admin: (): Claim[] => [...reader(), claim('application:role', 'Administrator')],
  manager: (): Claim[] => [...reader(), claim('application:permission', 'application.manage')]
} as const
