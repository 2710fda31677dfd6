/**
 * `@project-template/core/testing`: what an app's own tests need, so that no app copies it.
 *
 * - {@link build} / {@link buildTestApp}: the app (its `buildApp`) for `inject`, from real
 *   configuration loading with the test's settings over the closed posture, an in-memory state
 *   store and a fresh key ring ({@link testKeyRing}); log lines in {@link LogCapture}.
 * - {@link signIn}: a signed-in session (its Cookie header) for any claims.
 * - {@link startOidcProvider}: a local OpenID Provider (oidc-provider, an optional peer
 *   dependency: the app lists it in devDependencies) for end-to-end sign-in tests, with
 *   {@link HttpSession} and {@link throughIdpLogin} to drive it over real HTTP.
 * - {@link runProcess}, {@link cleanEnv}: the app's entry points as child processes.
 * - {@link describeDirectoryStore}: the directory store conformance cases, for an app's own
 *   directory store (experimental).
 * - {@link describeApiKeyStore}: the API key store conformance cases, for an app's own API key
 *   store (experimental).
 *
 * A separate entry point: `@project-template/core` never imports it, so a production bundle of
 * the app (esbuild from src/server.ts) contains none of it. Pinned by `etc/core-testing.api.md`.
 *
 * @packageDocumentation
 */
export { build, buildTestApp, claim, CLOSED_POSTURE, cookieHeaderFrom, EPHEMERAL_STATE, loadTestConfiguration, LogCapture, settingsToEnv, signIn, TEST_SIGN_IN_PATH, testKeyRing } from './app.js'
export type { AppBuilder, TestApp, TestAppLocation, TestAppOptions, TestConfigurationOptions, TestSettings } from './app.js'
export { CookieJar, findPlanted, HttpSession, isSessionCookie, sessionCookiesSet } from './http-session.js'
export type { Exchange } from './http-session.js'
export { startOidcProvider } from './oidc-provider.js'
export type { TestOidcProvider, TestOidcProviderOptions } from './oidc-provider.js'
export { confirmIdpLogout, throughIdpLogin } from './oidc-interaction.js'
export { cleanEnv, jsonLines, runProcess } from './process.js'
export type { Running } from './process.js'
export { waitFor } from './wait.js'
export { describeDirectoryStore, directoryStoreCases } from './directory-store.js'
export type { DirectoryStoreCase, DirectoryStoreCaseContext, DirectoryStoreFactoryOptions } from './directory-store.js'
export { describeApiKeyStore, apiKeyStoreCases } from './api-key-store.js'
export type { ApiKeyStoreCase, ApiKeyStoreCaseContext } from './api-key-store.js'
