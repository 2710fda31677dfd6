/**
 * The real app (buildTestApp: settings become environment variables) listening on 127.0.0.1, in
 * Development so that an http IdP on loopback is accepted, as an operator would run it locally.
 */
import type { AddressInfo } from 'node:net'
import { buildTestApp, type TestApp, type TestAppOptions } from '../app.js'
import { waitFor } from '../wait.js'

export interface ListeningApp extends TestApp {
  readonly origin: string
  close: () => Promise<void>
}

type Settings = NonNullable<Parameters<typeof buildTestApp>[0]>['settings']

export async function startProviderApp (settings: Settings, configure?: TestAppOptions['configure'], extra: Pick<TestAppOptions, 'signInHook' | 'providerSource' | 'keyRing' | 'stateStore'> = {}): Promise<ListeningApp> {
  const test = await buildTestApp({ nodeEnv: 'development', settings, testSignIn: false, ...(configure === undefined ? {} : { configure }), ...extra })
  await test.app.listen({ host: '127.0.0.1', port: 0 })
  const origin = `http://127.0.0.1:${(test.app.server.address() as AddressInfo).port}`
  return { ...test, origin, close: async () => { await test.app.close() } }
}

/** Waits (bounded) until /health/ready answers 200. */
export async function waitUntilReady (origin: string, timeoutMs = 15_000): Promise<void> {
  await waitFor(async () => {
    const response = await fetch(`${origin}/health/ready`, { signal: AbortSignal.timeout(5_000) })
    await response.arrayBuffer()
    return response.status === 200
  }, 'the app to become ready', timeoutMs, 50)
}
